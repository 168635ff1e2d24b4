// Temporal slipping (FastForward, Giacomoni et al., PPoPP 2008) for an endpoint receiving a
// stream of messages through a shared-memory FIFO.
//
// Why: a receiver that keeps pace with a streaming sender reads each FIFO element, and the
// FIFO head, the moment the sender has written them, so those cache lines travel between the
// two cores several times per message and both sides slow down. Left alone for a moment
// after each small batch, the receiver falls a few elements behind; the two then work on
// different lines and the stream runs faster (8-byte messages here: about 0.15 us each at the
// sender's heels, 0.10-0.11 us slipping; docs/performance-history.md, "Temporal slipping").
//
// When: after a poll that received fewer than kBehind data messages, none of this endpoint's
// sends having gone out since the previous receiving poll. A receiver that answers what it
// gets (a ping-pong, a request and its reply, the steps of a collective) sends between its
// receptions and never slips: its latency is untouched. The later pieces of a message already
// begun (eager fragments after the first, pipelined rendezvous data) are not receptions here
// (DataPath::counting): waiting for the rest of one message is not following a stream. A
// message that arrives during a window waits for its end; that is the price, the window at
// most (UFI_RX_SLIP).
#pragma once

#include <chrono>
#include <cstdint>

namespace ufi::runtime::proto {

class RxSlip {
  public:
    using Clock = std::chrono::steady_clock;

    // `window`: how long a slip leaves the FIFO alone; zero: never slips.
    void set_window(Clock::duration window) noexcept { window_ = window; }
    Clock::duration window() const noexcept { return window_; }

    // Whether a poll should leave the transports' receive queues alone now. The clock is
    // read only while a slip is on.
    bool holding() noexcept {
        if (!held_) [[likely]] return false;
        if (Clock::now() < until_) return true;
        held_ = false;
        return false;
    }

    // The endpoint sent a message (it answers what it receives, or talks both ways).
    void on_send() noexcept { sent_ = true; }

    // After a poll of the transports that received `got` data messages.
    void after_poll(uint64_t got) noexcept {
        if (got == 0) return;
        const bool stream = !sent_;
        sent_ = false;
        if (!stream || got >= kBehind || window_ == Clock::duration::zero()) return;
        until_ = Clock::now() + window_;
        held_ = true;
        ++slips_;
    }

    // Slips so far (UFI_PROTO_INFO's close line, tests).
    uint64_t slips() const noexcept { return slips_; }

    // A poll that received this many is far enough behind the sender already (UCT's mm
    // transports hand over at most 16 per poll).
    static constexpr uint64_t kBehind = 8;

  private:
    Clock::duration window_{};
    Clock::time_point until_{};
    uint64_t slips_ = 0;
    bool held_ = false;
    bool sent_ = true;  // (the first reception is never a stream's)
};

}  // namespace ufi::runtime::proto
