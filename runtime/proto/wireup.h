// The RDM endpoint's connection handshake (wire.h WIREUP), one module: connecting a peer
// chooses its AM lane, sends WIREUP_REQ and queues sends until WIREUP_REP tells the index to
// put in them. A request from a peer is answered at once (its key checked), so after one
// exchange both sides know each other. Endpoint-to-endpoint lanes take a third message,
// WIREUP_ACK; a closing endpoint says WIREUP_CLOSE; an endpoint that comes back under a name
// its peers hold restarts its peer (restart.cpp). Messages from an admitted peer that overtake
// the handshake are held and handled at connection, in order.
//
// The peer table it fills (DataPath: peers by index, by identity, by AV entry) and the
// failures of peers stay the data path's; the protocols never see the handshake. (A
// connection-manager handshake for FI_EP_MSG endpoints is another module of this kind.)
#pragma once

#include "base/status.h"
#include "runtime/proto/message_handler.h"
#include "runtime/proto/peer.h"
#include "transports/address.h"

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ufi::runtime::proto {

class DataPath;
struct WireupView;  // a parsed WIREUP message (wireup.cpp)

class Wireup {
  public:
    explicit Wireup(DataPath &dp) noexcept : dp_(dp) {}
    Wireup(const Wireup &) = delete;
    Wireup &operator=(const Wireup &) = delete;

    // Chooses the peer's lane and connects it; false (the peer failed) when none reaches it.
    bool open_lane(Peer &p);
    // Starts the handshake (state kKnown -> kConnecting).
    void connect(Peer &p);
    // The handshake's messages; drain() sends those that found no room at first.
    base::Status send_request(Peer &p);
    base::Status send_reply(Peer &p, uint16_t status, uint32_t sender_idx, uint8_t type);
    base::Status send_wireup_ack(Peer &p);
    base::Status send_close(Peer &p);
    base::Status send_keepalive(Peer &p);
    // Endpoint-to-endpoint lanes: moving the traffic to the p2p lane once both sides
    // connected; giving it up.
    void promote_p2p(Peer &p);
    void drop_p2p(Peer &p) noexcept;
    // Gives p (known by host and port, or by its name) its full address and, while only its
    // request went, moves its traffic to the best lane both reach.
    void move_to_best_lane(Peer &p, transports::address::EndpointAddress &&full);
    // The endpoint behind peer `idx` was closed and opened again under its identity (a
    // request with another incarnation, or an AV entry whose records for a transport differ
    // from the ones it had): what was on its way to or from the old one fails with
    // -FI_ECONNRESET, its lanes are destroyed, and a fresh peer under the same index (so every
    // AV entry and directed receive naming it still does) takes `address`. Only where no UCT
    // callback is running: the endpoint's calls, or progress().
    Peer &restart_peer(uint32_t idx, transports::address::EndpointAddress &&address,
                       const char *why);
    // kConnecting -> kConnected: its rendezvous protocol chosen, then what it sent while this
    // side was still connecting handled, before anything newer.
    void set_connected(Peer &p);
    // DataPath::from_connected's slow side: holds the message of an admitted peer still
    // connecting, drops and counts anyone else's.
    void hold_or_drop(uint32_t src, uint8_t id, const uint8_t *data, size_t length) noexcept;
    // The data path's progress: peers whose WIREUP_CLOSE came inside a UCT callback fail,
    // then the restarts a request found run (before the requests that found them). Returns
    // the work done.
    unsigned progress() noexcept;

    // WIREUP (one message id, its type in the header).
    static std::span<const MessageHandler> handlers() noexcept;

  private:
    base::Status send_header_only(Peer &p, uint8_t type, uint16_t status);
    // The P2P section this side's messages carry (empty: none); taking the peer's (false:
    // this side will not connect that way, p2p dropped).
    std::vector<uint8_t> p2p_section(const Peer &p) const;
    bool accept_p2p(Peer &p, const uint8_t *section, size_t len);
    void handle_wireup(const uint8_t *data, size_t length);
    void handle_request(const WireupView &w);
    void handle_reply(const WireupView &w);
    void handle_wireup_ack(const WireupView &w);
    // WIREUP_CLOSE from a connected peer (its incarnation must match: the identity is no
    // secret): progress() fails it (DataPath::peer_closed()).
    void handle_close(const WireupView &w);
    // A peer known by host and port, or by a name that leaves records out, answered with its
    // full address: its traffic moves to the best lane both reach, when that is another one
    // (before anything but the request went).
    void upgrade_lane(Peer &p, const WireupView &w);
    // Whether a WIREUP_REQ's key admits the peer; *handle: the held key it matched
    // (FI_AV_AUTH_KEY domains).
    bool key_accepted(const uint8_t *key, size_t len, fi_addr_t *handle) const noexcept;
  public:
    // Marks in `refs` (one per peer slot) the peers a pending restart or close names.
    void mark_peers(std::vector<uint8_t> &refs) const noexcept {
        for (const PendingRestart &r : restarts_) {
            if (r.peer < refs.size()) refs[r.peer] = 1;
        }
        for (const ClosedPeer &c : closed_) {
            if (c.peer < refs.size()) refs[c.peer] = 1;
        }
    }

  private:
    // progress(): the restarts handle_request found, then the requests that found them.
    void run_restarts() noexcept;

    DataPath &dp_;
    // WIREUP_REQs from a known identity under a new incarnation, found inside a UCT callback:
    // progress() resets the peer (restart_peer) and then handles the request (the peer is
    // marked busy meanwhile, so the data path's progress runs).
    struct PendingRestart {
        uint32_t peer;
        transports::address::EndpointAddress address;
        std::vector<uint8_t> request;  // the whole WIREUP message
    };
    std::vector<PendingRestart> restarts_;
    // Peers whose WIREUP_CLOSE came inside a UCT callback: progress() fails them (their lanes
    // are destroyed there, where no callback of theirs runs).
    struct ClosedPeer {
        uint32_t peer;
        uint64_t incarnation;  // the one that closed (a restart may have replaced it since)
    };
    std::vector<ClosedPeer> closed_;
};

}  // namespace ufi::runtime::proto
