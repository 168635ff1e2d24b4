// One peer of an endpoint as the data path knows it: who it is (the identity in its address),
// how to reach it (the AM lane), where the connection stands, the index each side gives the
// other (what goes in `src` of every message), what completions report as its source, and the
// sends waiting for it. A peer exists once either side has named the other: a send or a
// directed receive towards an AV entry, or a WIREUP_REQ from it.
#pragma once

#include "runtime/proto/requests.h"
#include "transports/address.h"
#include "transports/lanes/am_lane.h"
#include "transports/lanes/rma_lane.h"

#include <rdma/fabric.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ufi::runtime::proto {

enum class PeerState : uint8_t {
    kKnown,       // named, no connection asked for yet
    kConnecting,  // WIREUP_REQ sent (or waiting for room to send it), no reply yet
    kConnected,   // remote_idx known: messages flow
    kFailed,      // refused or unreachable: sends to it fail
};

// The fields the send fast path reads come first, the AM lane's own hot fields (its UCT
// endpoint, its limits) right after them: one cache line for a short send.
struct Peer {
    // The send fast path's one compare (fast_path.h): the largest payload a message without
    // CQ data may have to go now as one short active message, or -1 while anything keeps
    // messages from going that way (not connected, sends or control messages queued, RMA or
    // atomics awaited). DataPath::refresh_eager_gate keeps it, wherever what it depends on
    // changes (and builds with UFI_CHECK_INVARIANTS check it at every send).
    int64_t eager_short_max = -1;
    uint32_t local_idx = kNoPeer;   // this peer's index here
    uint32_t remote_idx = kNoPeer;  // this endpoint's key at the peer (what we put in `src`)
    PeerState state = PeerState::kKnown;
    // What the peer puts in `src`: local_idx with the slot's generation in the top bits
    // (PeerTable::by_key). A slot whose peer departed is reused with the next generation, so
    // that a late message of the one before is not taken for the new peer's (peer_reuse.cpp).
    uint32_t src_key = kNoPeer;
    bool request_unsent = false;  // kConnecting, but WIREUP_REQ still waits for lane room
    bool reply_unsent = false;    // a WIREUP_REP owed to the peer waits for lane room
    uint32_t reply_to = kNoPeer;  // the sender_idx that reply echoes
    uint8_t reply_type = 0;       // wire::kWireupReply, or kWireupRefuse (with reply_status)
    uint16_t reply_status = 0;
    bool busy = false;            // on the data path's list of peers with queued work
    transports::AmLane lane;  // where its traffic goes (the handshake's lane until p2p took over)
    // Its key was checked (its request) or it accepted ours (its reply): what it sends is
    // taken. Until this side is kConnected too (crossing handshakes: its traffic can come on
    // the endpoint-to-endpoint lane before our own ack went, or before its reply on the
    // handshake lane), it waits in `held`, in order.
    bool admitted = false;

    transports::address::EndpointAddress address;
    // The incarnation (wire::WireupHdr) of the endpoint this peer was admitted as, from its
    // request or reply; 0 until then. Another one under the same identity is a restart.
    uint64_t remote_incarnation = 0;

    // An endpoint-to-endpoint lane (wire.h): made when the chosen transport connects that way,
    // it becomes `lane` once both sides connected theirs; the handshake lane is kept in `aux`.
    transports::AmLane p2p;
    transports::AmLane aux;
    size_t p2p_record = SIZE_MAX;  // the peer's record of the p2p transport
    bool p2p_connected = false;    // ours is connected to the peer's endpoint
    bool p2p_peer_ready = false;   // the peer's is connected to ours (its reply or its ack said)
    bool ack_unsent = false;       // a WIREUP_ACK owed to the peer waits for lane room
    bool send_address = false;     // its request asked for our address in the reply
    uint16_t ack_status = 0;       // wire::kWireupOk or kWireupP2pDeclined

    // What receive completions report as this peer's source (fi_cq_readfrom): its fi_addr in
    // the endpoint's AV, or its user ID; FI_ADDR_NOTAVAIL while it is in no AV entry.
    fi_addr_t report_id = FI_ADDR_NOTAVAIL;
    uint64_t av_generation = 0;  // the AV generation report_id was looked up at

    List<SendReq> queue;      // sends in order; the head may be partly sent
    // Operations that went out and wait for the peer's answer (rendezvous, RMA, atomics):
    // a fenced operation waits until none does.
    uint32_t handed_off = 0;
    uint32_t rma_handed_off = 0;  // of them, RMA and atomics
    // Of those, injected short writes that went with no request record (write_short): the
    // peer's RMA_ACK (wire::kRmaUntracked) finishes them by count.
    uint32_t untracked_writes = 0;
    // Writes this side puts itself (wire::kRmaInitiatorPuts) whose puts are not yet on their
    // way in order before what follows: every later operation to the peer waits in the queue
    // meanwhile, so that it takes effect after the write, as it would on active messages.
    uint32_t put_writes_held = 0;
    uint64_t next_msg_id = 0;

    // The multi-fragment message arriving from this peer now (one at a time: a sender sends
    // one message's fragments before the next message).
    uint64_t rx_msg_id = 0;
    RecvReq *rx_recv = nullptr;  // the receive it is written into, or
    UnexpMsg *rx_unexp = nullptr;  // the unexpected copy it is written into
    size_t rx_total = 0;
    size_t rx_received = 0;
    bool rx_truncated = false;
    uint32_t rx_flags = 0;
    uint64_t rx_tag = 0;
    uint64_t rx_data = 0;

    // RMA_WRITE fragments of one write arrive one after another (the sender's queue sends a
    // write whole before its next record): the first fragment's check holds for the rest, so
    // a write is placed whole or not at all.
    uint64_t rma_in_id = 0;
    int rma_in_status = 0;

    int fail_status = 0;  // kFailed: the error its sends complete with (negative fi errno)

    // report_id is FI_ADDR_NOTAVAIL: the AV's change counter when it was last looked up.
    uint64_t report_checked = 0;
    // FI_AV_AUTH_KEY domains: the key this side presents in WIREUP_REQ (its AV entry's), and
    // the held key the peer's own request matched (FI_SOURCE_ERR reports its handle).
    std::vector<uint8_t> present_key;
    fi_addr_t key_handle = FI_ADDR_NOTAVAIL;

    // Rendezvous (rndv_protocol.h): how this side moves large messages to the peer, chosen on first
    // need, and the zero-copy lane it uses (connected on first use).
    bool rndv_chosen = false;
    uint8_t rndv_protocol = 0;  // wire::RndvProtocol offered in RTS
    size_t rndv_thresh = SIZE_MAX;  // messages above it go by rendezvous
    size_t rma_thresh = SIZE_MAX;   // RMA from it on goes zero copy
    size_t rma_iface = SIZE_MAX;  // the worker iface of the zero-copy transport
    size_t rma_record = SIZE_MAX;
    transports::RmaLane rma;
    // Control messages (RTR, ATS, ATP, answers) that found no lane room: sent, in order,
    // before any queued send (records of the data path's pool: ControlChannel, control_channel.h).
    List<ControlMsg> ctrl;
    // Messages from an admitted peer that came before this side was connected, in arrival
    // order; handled (before anything newer) the moment it is. Only the handshake's short
    // window sees them, so they may allocate. A vector, not a deque: an empty one allocates
    // nothing, where libstdc++'s deque takes 576 bytes per peer from the start.
    struct HeldMsg {
        uint8_t id;                  // the active message's id
        std::vector<uint8_t> bytes;  // its data (aligned for the handlers' header views)
    };
    std::vector<HeldMsg> held;

    // host_watch.cpp: the host this peer is reached at over tcp (16 bytes, IPv4-mapped), when
    // it is watched, and since when its host has left what was sent unacknowledged.
    bool host_watched = false;
    uint8_t host_ip[16] = {};
    std::chrono::steady_clock::time_point stalled_since{};

    // peer_reuse.cpp: when it failed (kFailed), and whether its slot was given up for reuse
    // (nothing refers to it any more; the next new peer takes it).
    std::chrono::steady_clock::time_point failed_at{};
    bool retired = false;
    uint64_t av_kept_at = 0;  // the AV's change count when an entry was found naming it (+1)
};

}  // namespace ufi::runtime::proto
