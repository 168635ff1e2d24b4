// The cache hints of the shared-memory path, in one place: what the data path tells a peer's
// lane at each point of a ping-pong, so that the FIFO lines an answer needs are where the CPU
// that touches them next finds them soonest (transports/lanes/am_lane.h does each hint, and
// chooses at setup how, from the CPU's features: CLDEMOTE where the CPU has it).
//   on_arrival(p): p's message arrived; an answer to it is likely next (AmLane::prime).
//   on_send(p):    a short message went to p; an answer from p is likely next: warm its lane
//                  on the empty polls meanwhile; and if it answered p's message, p's FIFO head
//                  is demoted once this side stops sending (AmLane::take_answer).
//   on_idle():     a progress call found nothing: warm the lane of the peer last sent to, for
//                  kWarmPolls polls after the send (AmLane::warm).
//   on_stop_sending(): a progress call begins or a receive is posted: the FIFO head of the
//                  peer last answered goes to the shared cache (AmLane::demote).
// All inline: every one is on the ping-pong's path, and the usual case is one load and a
// branch. Over transports without a FIFO (tcp, self) the lane's hints do nothing.
#pragma once

#include "runtime/proto/peer.h"
#include "runtime/proto/peer_table.h"
#include "runtime/proto/requests.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ufi::runtime::proto {

class CacheHints {
  public:
    // `peers`: the data path's peer table (hints name peers by index: a peer reset in place
    // is found again); `demoted`: counts the answers after which a head was demoted.
    CacheHints(const PeerTable &peers, uint64_t &demoted) noexcept
        : peers_(peers), demoted_(demoted) {}

    void on_arrival(Peer &p) noexcept { p.lane.prime(); }
    void on_send(Peer &p) noexcept {
        last_sent_ = p.local_idx;
        warm_polls_ = kWarmPolls;
        if (p.lane.take_answer()) [[unlikely]] {
            if (demote_peer_ != p.local_idx) on_stop_sending();  // (the one answered before)
            demote_peer_ = p.local_idx;
        }
    }
    // kWarmPolls empty polls after a send: a process that waits longer has no answer coming
    // soon, and keeps its hands off a FIFO head other senders may be taking turns on.
    void on_idle() noexcept {
        if (warm_polls_ == 0) return;
        --warm_polls_;
        if (last_sent_ < peers_.size()) peers_[last_sent_]->lane.warm();
    }
    void on_stop_sending() noexcept {
        if (demote_peer_ == kNoPeer) [[likely]]
            return;
        const uint32_t i = demote_peer_;
        demote_peer_ = kNoPeer;
        if (i < peers_.size() && peers_[i] && peers_[i]->lane.demote()) ++demoted_;
    }

  private:
    static constexpr uint32_t kWarmPolls = 1024;  // ~15-20 us of empty polls

    const PeerTable &peers_;
    uint64_t &demoted_;
    uint32_t last_sent_ = kNoPeer;  // the peer the last short send went to (on_idle)
    uint32_t warm_polls_ = 0;       // empty polls that still warm its lane
    // The peer whose head on_stop_sending() demotes: the last one answered, until this side
    // stops sending. Answering another peer first demotes the one before.
    uint32_t demote_peer_ = kNoPeer;
};

}  // namespace ufi::runtime::proto
