// An enabled endpoint's data path: the peer table, the sends on their way, the posted receives
// and the messages that came first, the active-message handlers that move bytes between them,
// and the completions they produce. One per enabled RDM endpoint, created by fi_enable.
//
// Every call runs under the endpoint's worker lock (the caller takes it when the threading
// model needs it); the AM handlers run inside progress, under the same lock, and over `self`
// inside the sender's own send call, so every state change is made before a transport call,
// never after it.
#pragma once

#include "runtime/av/binding.h"
#include "runtime/proto/atomic_protocol.h"
#include "runtime/proto/cache_hints.h"
#include "runtime/proto/completion_writer.h"
#include "runtime/proto/control_channel.h"
#include "runtime/proto/eager_protocol.h"
#include "runtime/proto/match.h"
#include "runtime/proto/message_handler.h"
#include "runtime/proto/peer.h"
#include "runtime/proto/peer_table.h"
#include "runtime/proto/requests.h"
#include "runtime/proto/rma_protocol.h"
#include "runtime/proto/rndv_protocol.h"
#include "runtime/proto/rma_zcopy.h"
#include "runtime/proto/rx_slip.h"
#include "runtime/proto/sched.h"
#include "runtime/proto/target_access.h"
#include "runtime/proto/wire.h"
#include "runtime/proto/wireup.h"
#include "runtime/proto/zcopy_transfers.h"
#include "transports/address.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/lanes/am_lane.h"
#include "transports/lanes/rma_lane.h"

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace ufi::runtime {
struct Domain;
namespace av {
class Av;
}
namespace cq {
class Cq;
}
namespace mr {
struct MrState;
}
namespace cntr {
class Cntr;
}
}  // namespace ufi::runtime

namespace ufi::runtime::proto {

// push(): the operation went out (RTS, an RMA's last fragment or request); the peer's answer,
// not the queue, finishes it.
inline constexpr transports::Status kHandedOff = transports::Status::kInProgress;

// How a message goes (DataPath::way_of): decided from its size, its flags and the peer's lane
// and rendezvous choice before anything is sent, so that no protocol answers "does not fit"
// after trying.
enum class MessageWay : uint8_t {
    kRendezvous,  // RTS, then as the receiver answers (rndv_protocol.h)
    kSingle,      // one short or bcopy active message
    kZeroCopy,    // one zero-copy active message from the application's buffers (tcp, RDMA)
    kFragments,   // a first fragment and middle ones (bcopy)
};

// The largest message (headers after the tag included) the send fast path stages on the
// stack for one am_short: above ufi's shared-memory FIFO elements (548 bytes inline,
// UFI_SHM_FIFO_ELEM_SIZE) and tcp's short limit.
inline constexpr size_t kStagedShort = 1024;

// Unexpected messages kept in transport descriptors (UnexpMsg::desc), at most this many at a
// time: each holds one of the transport's receive buffers (shared memory: 8 KiB), which its
// pool replaces while it is held; beyond this, messages are copied.
inline constexpr size_t kMaxDescsHeld = 256;

// UFI_RNDV_SPLIT's default: from here on, the sender's half of a shared copy comes back more
// than the round trip that starts it costs (docs/performance-history.md, "Rendezvous copied by both
// sides").
inline constexpr size_t kDefaultRndvSplit = 64 * 1024;
// UFI_RX_SLIP's default (rx_slip.h): on this machine an 8-byte stream is fastest from about
// 200 ns on; a shared-memory round trip (about 600 ns here) stays well above it.
inline constexpr std::chrono::nanoseconds kDefaultRxSlip{250};

struct DataPathConfig {
    transports::EndpointWorker *worker = nullptr;
    av::Av *av = nullptr;
    cq::Cq *tx_cq = nullptr;
    cq::Cq *rx_cq = nullptr;
    bool tx_selective = false;  // bound with FI_SELECTIVE_COMPLETION
    bool rx_selective = false;
    cntr::Cntr *send_cntr = nullptr;
    cntr::Cntr *recv_cntr = nullptr;
    cntr::Cntr *read_cntr = nullptr;        // FI_READ: this endpoint's reads
    cntr::Cntr *write_cntr = nullptr;       // FI_WRITE: its writes
    cntr::Cntr *rem_read_cntr = nullptr;    // FI_REMOTE_READ: peers' reads of its memory
    cntr::Cntr *rem_write_cntr = nullptr;   // FI_REMOTE_WRITE: peers' writes
    // The domain whose MR key table peers' RMA is checked against (nullptr: refused).
    Domain *domain = nullptr;
    uint64_t caps = 0;        // the endpoint's negotiated capabilities
    // tx msg_order has orderings beyond FI_ORDER_SAS: RMA and atomics wait while anything to
    // their peer waits for its answer, messages while RMA or atomics do.
    bool ordered = false;
    size_t tx_size = 0;       // sends outstanding at most (tx_attr->size)
    size_t rx_size = 0;       // receives posted at most (rx_attr->size)
    size_t inject_msg_size = 0;     // FI_OPT_INJECT_MSG_SIZE (tx_attr->inject_size)
    size_t inject_tagged_size = 0;  // FI_OPT_INJECT_TAGGED_SIZE
    size_t inject_rma_size = 0;     // FI_OPT_INJECT_RMA_SIZE
    size_t inject_atomic_size = 0;  // FI_OPT_INJECT_ATOMIC_SIZE
    size_t max_msg_size = 0;        // ep_attr->max_msg_size: what a peer may send us
    // What this endpoint sends at most (fi_setopt; ep_attr->max_msg_size by default): larger
    // calls fail with -FI_EMSGSIZE.
    size_t send_max_msg = SIZE_MAX;     // FI_OPT_MAX_MSG_SIZE
    size_t send_max_tagged = SIZE_MAX;  // FI_OPT_MAX_TAGGED_SIZE
    size_t send_max_rma = SIZE_MAX;     // FI_OPT_MAX_RMA_SIZE
    size_t send_max_atomic = SIZE_MAX;  // FI_OPT_MAX_ATOMIC_SIZE
    // FI_EP_DGRAM: every message is one active message (max_msg_size is what one carries:
    // never rendezvous or fragments), completion means it left (FI_DELIVERY_COMPLETE is not
    // waited for), and messages to a peer that cannot be reached are dropped, not failed.
    bool datagrams = false;
    // FI_EP_MSG: one peer, the AV's entry 0, whatever address a call names (the page: the
    // address is ignored), and no source reported in completions.
    bool connected = false;
    // FI_OPT_MIN_MULTI_RECV, read at each message (fi_setopt may change it after fi_enable).
    const size_t *min_multi_recv = nullptr;
    // This endpoint's identity and address (unpadded), sent in WIREUP_REQ.
    uint64_t uuid = 0;
    // Whether the endpoint named (endpoint id, uuid) is one of this process's, open now
    // (runtime/ep/identity.h): settle_sends() does not wait for those.
    bool (*lives_here)(uint32_t endpoint_id, uint64_t uuid) noexcept = nullptr;
    uint32_t endpoint_id = 0;
    uint64_t incarnation = 1;  // random per fi_enable (wire::WireupHdr::incarnation)
    std::vector<uint8_t> address;
    // The classic authorization key (endpoint's or domain's; may be empty): a peer's
    // WIREUP_REQ must carry the same bytes.
    std::vector<uint8_t> auth_key;
    // FI_AV_AUTH_KEY domains instead: the keys the endpoint took at fi_enable. A peer's
    // WIREUP_REQ must carry one of them; this side presents the key its AV entry for the
    // peer was inserted with.
    bool av_auth_keys = false;
    struct HeldKey {
        fi_addr_t handle;
        std::vector<uint8_t> bytes;
    };
    std::vector<HeldKey> held_keys;
    // FI_SOURCE_ERR: a message from a sender not in the AV completes as an FI_EADDRNOTAVAIL
    // error entry whose err_data is its address (padded to addr_len, as fi_av_insert takes it).
    bool source_err = false;
    // Told of every peer that fails (refused, unreachable, closed, dead), once, with what
    // completions report as its source and the (negative) error: the endpoint posts it on its
    // EQ (receivers learn of dead peers). Called inside the data path's calls and progress.
    void (*peer_failed)(void *arg, fi_addr_t source, int error) noexcept = nullptr;
    void *peer_failed_arg = nullptr;
    size_t addr_len = 0;
    std::vector<std::string> name_tls;  // the transports a name carries (address_name.h)
    uint32_t addr_format = FI_ADDR_UCX;  // FI_SOCKADDR_IN[6]: err_data is the sender's socket address
    // Messages above this go by rendezvous (UFI_RNDV_THRESH); 0: chosen per peer from the
    // transports' estimates.
    size_t rndv_thresh = 0;
    // Rendezvous messages of at least this many bytes over a transport whose zero copy is a
    // CPU copy (cma) are copied by both sides at once (SPLIT, wire.h); 0: the receiver copies
    // all (UFI_RNDV_SPLIT).
    size_t rndv_split = kDefaultRndvSplit;
    bool proto_info = false;  // UFI_PROTO_INFO: log each peer's protocols
    int peer_check_ms = 1000;  // UFI_PEER_CHECK_INTERVAL (0: never)
    // UFI_PEER_TIMEOUT: how long a tcp peer's host may leave what was sent unacknowledged
    // (host_watch.cpp); 0: never checked.
    int peer_timeout_ms = 8000;
    // UFI_PEER_REUSE_DELAY: how long a failed peer's slot stays before it may be reused
    // (peer_reuse.cpp); 0: never.
    int peer_reuse_ms = 10000;
    // How long a receiver fed by a stream over a shared-memory FIFO leaves it alone after a
    // small batch (rx_slip.h; UFI_RX_SLIP); zero: never. Applied only where the worker has
    // such a transport.
    std::chrono::nanoseconds rx_slip = kDefaultRxSlip;
};

// Fills the protocol settings of `c` from the environment (UFI_RNDV_THRESH, UFI_RNDV_SPLIT,
// UFI_PROTO_INFO, UFI_PEER_CHECK_INTERVAL, UFI_PEER_TIMEOUT, UFI_PEER_REUSE_DELAY, UFI_RX_SLIP).
void read_protocol_settings(DataPathConfig &c) noexcept;

// What the data path counts for diagnostics and tests.
struct DataPathStats {
    uint64_t dropped_malformed = 0;   // headers too short or inconsistent
    uint64_t dropped_unknown_src = 0; // messages naming no connected peer
    uint64_t dropped_unknown_id = 0;  // active messages under an id ufi does not send
    uint64_t held_early = 0;          // from an admitted peer before this side connected
    uint64_t refused_peers = 0;       // WIREUP_REQs refused (version, key)
    uint64_t peers_retired = 0;       // departed peers whose slots were given up for reuse
    uint64_t p2p_lanes = 0;           // peers whose traffic moved to an endpoint-to-endpoint lane
    uint64_t lane_upgrades = 0;       // peers reached by host and port moved to a better lane
    uint64_t unexpected = 0;          // messages that arrived before their receive
    uint64_t datagrams_dropped = 0;   // FI_EP_DGRAM: sends to a peer that failed, completed
    uint64_t unexpected_kept = 0;     // of them, kept in the transport's descriptor (no copy)
    uint64_t sends_queued = 0;        // operations that waited in a peer's queue (lane full,
                                      // connecting, fenced or ordered behind others)
    uint64_t rndv_sends = 0;          // messages sent by rendezvous
    uint64_t eager_zcopy = 0;         // messages sent as one zero-copy active message (tcp)
    uint64_t rndv_get = 0;            // received by each rendezvous protocol
    uint64_t rndv_put = 0;
    uint64_t rndv_am = 0;
    uint64_t rndv_split = 0;          // of rndv_get: the sender copied part (SPLIT)
    uint64_t rma_zcopy = 0;           // this side's writes and reads asked of the target zero
                                      // copy (RmaZcopyProtocol: its gets or puts, or a grant)
    uint64_t rma_refused = 0;         // peers' RMA accesses the MR checks refused
    uint64_t rma_put_grants = 0;      // peers' writes this target had them put (zero copy
                                      // over a transport without get: tcp)
    uint64_t peer_restarts = 0;       // peers reset: their endpoint came back under its name
    uint64_t keepalives_sent = 0;     // WIREUP_KEEPALIVEs to tcp peers (host_watch.cpp)
    uint64_t keepalives_received = 0;
    uint64_t hosts_timed_out = 0;     // peers failed because their host stopped acknowledging
    uint64_t directed_recvs_failed = 0;  // receives for a failed peer completed with its error
    uint64_t held_from_failed_writers = 0;  // transfers a failed peer may still have written
                                            // into, held back first (zcopy_transfers.h)
    uint64_t heads_demoted = 0;   // answers after which a peer's FIFO head was demoted
                                  // (flush_demote)
};

class DataPath {
  public:
    // Creates the data path and installs its AM handlers on the worker's ifaces. 0 or a
    // negative fi errno.
    static int create(const DataPathConfig &config, std::unique_ptr<DataPath> &out) noexcept;
    ~DataPath();
    DataPath(const DataPath &) = delete;
    DataPath &operator=(const DataPath &) = delete;

    // fi_send* / fi_tsend* / fi_inject*. `flags` are the operation's (FI_COMPLETION,
    // FI_REMOTE_CQ_DATA, FI_INJECT: the data is copied at the call); `inject` (fi_inject*)
    // writes no completion. 0, -FI_EAGAIN (tx queue full), -FI_EINVAL (dest names no AV
    // entry), -FI_EMSGSIZE (beyond max_msg_size, or FI_INJECT beyond the inject size), or
    // the peer's error (it failed or refused this endpoint).
    // `relieved`: the caller progressed once already for this call (relieve_lane()).
    ssize_t send(const IovList &iov, fi_addr_t dest, void *context, uint64_t flags, uint64_t tag,
                 uint64_t data, bool tagged, bool inject, bool relieved = false) noexcept;
    // fi_recv* / fi_trecv*: src is FI_ADDR_UNSPEC for any source (directed receive needs
    // FI_DIRECTED_RECV, or FI_TAGGED_DIRECTED_RECV for tagged ones); FI_MULTI_RECV makes the
    // buffer take message after message (tagged ones with FI_TAGGED_MULTI_RECV). 0,
    // -FI_EAGAIN (rx queue full), -FI_EINVAL.
    ssize_t recv(const IovList &iov, fi_addr_t src, void *context, uint64_t flags, uint64_t tag,
                 uint64_t ignore, bool tagged) noexcept;
    // The same for one buffer (fi_recv, fi_trecv), without building a list first. Inline
    // (fast_path.h): the common case is a record from the pool on the posted queue.
    inline ssize_t recv_buffer(void *buf, size_t len, fi_addr_t src, void *context,
                               uint64_t flags, uint64_t tag, uint64_t ignore,
                               bool tagged) noexcept;
    // send() for one buffer (fi_send, fi_tsend, fi_inject, fi_senddata, ...). Inline
    // (fast_path.h): a message that fits one short active message to a connected peer with
    // nothing queued goes to the lane there, without a list, a request or a call below.
    inline ssize_t send_buffer(const void *buf, size_t len, fi_addr_t dest, void *context,
                               uint64_t flags, uint64_t tag, uint64_t data, bool tagged,
                               bool inject) noexcept;
    // fi_write* / fi_read*: RmaProtocol::start. fi_inject_write*: RmaProtocol::inject_write
    // (fast_path.h).
    inline ssize_t inject_write(const void *buf, size_t len, fi_addr_t dest, uint64_t key,
                                uint64_t addr, uint64_t flags, uint64_t data) noexcept;
    ssize_t rma(SendOp op, const IovList &local, const wire::RmaSeg *segs, size_t nsegs,
                fi_addr_t dest, void *context, uint64_t flags, uint64_t data,
                bool inject_call = false) noexcept {
        return rma_.start(op, local, segs, nsegs, dest, context, flags, data, inject_call);
    }
    // fi_atomic*, fi_fetch_atomic*, fi_compare_atomic*: AtomicProtocol::start.
    ssize_t atomic(uint8_t kind, int op, int datatype, size_t count, const IovList &operand,
                   const IovList &compare, const IovList &result, const wire::RmaSeg *segs,
                   size_t nsegs, fi_addr_t dest, void *context, uint64_t flags,
                   uint64_t data, bool inject_call = false) noexcept {
        return atomics_.start(kind, op, datatype, count, operand, compare, result, segs, nsegs,
                              dest, context, flags, data, inject_call);
    }
    // fi_cancel: a posted receive with this context completes with FI_ECANCELED.
    ssize_t cancel(void *context) noexcept;
    // A connected endpoint's connection ended (fi_shutdown, or the peer's): every peer fails
    // with `error` (sends in flight complete with it), posted receives are canceled and new
    // ones refused (-FI_ENOTCONN). failures.cpp.
    void lose_peers(int error) noexcept;
    // For a shared receive context (runtime/ep/shared_rx.h): whether a receive of this kind,
    // source and tag would take an unexpected message here now (probe.cpp); and the
    // FI_ECANCELED completion of one of its receives that never reached an endpoint.
    bool has_unexpected_for(fi_addr_t src, bool tagged, uint64_t tag, uint64_t ignore) noexcept;
    int check_source(fi_addr_t src, bool tagged) noexcept {  // 0, or what a receive would say
        ssize_t rc = 0;
        (void)recv_source(src, tagged, rc);
        return static_cast<int>(rc);
    }
    void complete_canceled(void *context, bool tagged, uint64_t tag) noexcept;
    // fi_trecvmsg with FI_PEEK (and FI_CLAIM or FI_DISCARD): the first unexpected message
    // matching (src, tag, ignore) is reported in the CQ (its length, tag, data, source), or
    // an FI_ENOMSG error entry; FI_CLAIM reserves it for a receive with FI_CLAIM and the same
    // context, FI_DISCARD drops it. probe.cpp.
    ssize_t peek(fi_addr_t src, void *context, uint64_t flags, uint64_t tag,
                 uint64_t ignore) noexcept;
    // fi_trecvmsg with FI_CLAIM (no FI_PEEK): receives into `iov` (or, with FI_DISCARD,
    // drops) the message claimed with `context`. -FI_EINVAL when it names none.
    ssize_t claim(const IovList &iov, void *context, uint64_t flags) noexcept;

    // After the worker's progress: queued sends, wireup messages owed, completions a full CQ
    // refused. Returns the work done.
    unsigned progress() noexcept;
    // fi_close, before the lanes go: takes in what peers sent so far (handshake requests get
    // their answer), then tells every peer that knows this endpoint, or learns of it from our
    // request, that it is closing (WIREUP_CLOSE on its lane), whatever the handshake's state,
    // so that its operations towards this endpoint fail with FI_ECONNRESET instead of
    // waiting, or going into a shared-memory FIFO nobody reads any more. Progresses the
    // endpoint for lanes that are full, within `bound_ms` in all.
    void say_goodbye(int bound_ms) noexcept;
    // fi_shutdown first, and fi_close after say_goodbye: progresses until what was sent to
    // the live peers has left this process (AmLane::flushed(); over tcp the peer
    // acknowledged it), within `bound_ms`: a send that completed (its bytes copied) may
    // still wait in UCT's buffer, which the shutdown would otherwise drop with the
    // connection. `shared_connections_only`: only lanes connected endpoint to endpoint.
    // Peers that are endpoints of this process (cfg_.lives_here) are not waited for: this
    // thread is the one that would progress them. Returns the peers not flushed.
    size_t settle_sends(int bound_ms, bool shared_connections_only) noexcept;
    // fi_close, first: receives whose sender writes part of their buffer (SPLIT) wait for its
    // ATP (or its failure), progressing, within `bound_ms`: over cma those writes land straight
    // in this process's memory, which the application may reuse once fi_close returned. Returns
    // how many were still waiting at the bound (logged).
    size_t await_split_writers(int bound_ms) noexcept;
    // Whether work is queued that progress must do before the endpoint may sleep.
    bool has_pending_work() const noexcept {
        return !busy_.empty() || completions_.waiting() || zcopy_.has_retries() ||
               worker_->has_failures() || zcopy_.holding_failed() || abortive_due_;
    }
    // A progress call that found nothing, and where this endpoint stops sending for now (a
    // progress call begins, a receive is posted): the cache hints (cache_hints.h).
    void on_empty_poll() noexcept { hints_.on_idle(); }
    void flush_demote() noexcept { hints_.on_stop_sending(); }
    // Whether the endpoint's progress should call progress() now: pending work, or every so
    // many calls the peer checks (a counter, no clock read).
    bool wants_progress() noexcept {
        const bool tick = (++ticks_ & kCheckTicks) == 0;  // counted even while busy
        return tick || has_pending_work();
    }
    // Whether operations wait on peers that should be checked (peer_check_ms > 0): sends not
    // complete, messages partly arrived, rendezvous receives in flight, receives posted (a
    // receive directed at a peer that died fails; any receive may wait for one). The endpoint then
    // wakes its sleepers at peer_check_interval_ms().
    bool needs_peer_checks() const noexcept {
        return cfg_.peer_check_ms > 0 &&
               (tx_outstanding_ > 0 || partial_rx_ > 0 ||
                zcopy_.receiving() || rx_posted_ > 0);
    }
    int peer_check_interval_ms() const noexcept { return cfg_.peer_check_ms; }

    // Temporal slipping (rx_slip.h), around the endpoint's poll of its transports: whether
    // to leave them alone this time; else the data messages counted so far, before the
    // poll, and after it.
    bool slipping() noexcept { return rx_slip_.holding(); }
    uint64_t rx_data_msgs() const noexcept { return rx_data_msgs_; }
    void after_transport_poll(uint64_t rx_before) noexcept {
        rx_slip_.after_poll(rx_data_msgs_ - rx_before);
    }
    const RxSlip &rx_slip() const noexcept { return rx_slip_; }
    // Checks the peers (uct_ep_check) when an interval passed since the last check; a dead
    // one is reported by its transport and failed by the next progress().
    void check_peers_if_due() noexcept;
    // Gives up the slots of peers that failed at least UFI_PEER_REUSE_DELAY ago and that
    // nothing refers to any more (no operation, message, receive, AV entry or cache), so that
    // new peers take them (peer_reuse.cpp). Run with the peer checks while any failed peer
    // is not retired yet.
    void retire_departed_peers(std::chrono::steady_clock::time_point now) noexcept;

    // Runs the handler of active message `id` on `data` as if it had arrived from a peer
    // (fuzz tests of the receive path). False for an id without a handler.
    bool deliver_for_test(uint8_t id, void *data, size_t length) noexcept;

    size_t tx_left() const noexcept { return tx_size_ - tx_outstanding_; }
    size_t tx_outstanding() const noexcept { return tx_outstanding_; }
    size_t rx_left() const noexcept { return rx_size_ - rx_posted_; }
    const DataPathStats &stats() const noexcept { return stats_; }
    size_t peer_count() const noexcept { return peers_.size(); }
    const Peer *peer(uint32_t idx) const noexcept {
        return idx < peers_.size() ? peers_[idx].get() : nullptr;
    }

  private:
    explicit DataPath(const DataPathConfig &config);

    // send_buffer()'s short way (fast_path.h): sent, not for this message (another protocol,
    // a peer not connected, a failed lane: send() decides), the lane refused it for room, or
    // sends already wait in the peer's queue.
    enum class ShortSend : uint8_t { kSent, kNotHere, kLaneFull, kQueueWaits };
    inline ShortSend try_send_short(Peer *p, const void *buf, size_t len, void *context,
                                    uint64_t flags, uint64_t tag, uint64_t data, bool tagged,
                                    bool inject) noexcept;
    // Peer::eager_short_max from what it depends on: connected, nothing queued, no control
    // message waiting, no RMA or atomic awaited; then the rendezvous threshold, the lane's
    // short limit (UCT's 8-byte header is the tag) and the stack staging (kStagedShort), for a
    // message without CQ data. Called wherever one of those changes (closing only takes the
    // store); inline, as the acknowledgement of a write reopens it.
    void refresh_eager_gate(Peer &p) noexcept {
        p.eager_short_max = eager_gate_of(p);
    }
    int64_t eager_gate_of(const Peer &p) const noexcept {
        if (p.state != PeerState::kConnected || !p.queue.empty() || !p.ctrl.empty() ||
            p.rma_handed_off != 0) {
            return -1;
        }
        constexpr size_t kAfterTag = sizeof(wire::EagerHdr) - sizeof(uint64_t);
        const size_t lane = p.lane.max_short();
        if (lane < kAfterTag + sizeof(uint64_t)) return -1;
        // (The endpoint's own message size limits bound it too: a message above one goes the
        // long way, where it is refused.)
        const size_t most = std::min({p.rndv_thresh, lane - kAfterTag - sizeof(uint64_t),
                                      kStagedShort - kAfterTag, cfg_.send_max_msg,
                                      cfg_.send_max_tagged});
        return static_cast<int64_t>(most);
    }
    // UFI_CHECK_INVARIANTS builds (debug: the sanitizer builds of CI): the gate is what
    // eager_gate_of() says, or the process aborts naming the peer.
    void check_eager_gate(const Peer &p) const noexcept;
    // An application's send found `p`'s lane full or its queue waiting: progresses the
    // endpoint once, as the application's next poll would (a shared-memory lane that once
    // refused takes nothing until its sender's iface is progressed), so that a sender
    // streaming without polling keeps its messages going out instead of queueing them.
    // True when the peer's queue is empty afterwards (a short send may go). Called only
    // from an application's call (never from a handler: progress is not reentrant).
    bool relieve_lane(Peer &p) noexcept;
    // send_buffer() when the short way did not take it (`first` says why): relieve_lane() and
    // the short way again where that may help, else send(). Out of line (send_queue.cpp), so
    // that the short way stays one inlined function.
    ssize_t send_buffer_otherwise(ShortSend first, const void *buf, size_t len, fi_addr_t dest,
                                  void *context, uint64_t flags, uint64_t tag, uint64_t data,
                                  bool tagged, bool inject) noexcept;

    // --- Peers (the table: peer_table.h; the handshake that connects them: wireup.h;
    // failures: failures.cpp, fail_peer in peer_table.cpp) ---
    // The peer's endpoint closed: its operations fail with FI_ECONNRESET, what it announced
    // and this side had not received fails its receive, its lanes go. An AV entry inserted
    // since, or its own request under a new incarnation, connects it afresh.
    void peer_closed(Peer &p) noexcept;
    // A peer whose endpoint is gone (closed, or replaced by a restart): its UCT endpoints are
    // destroyed (the transfers still counting zero-copy operations on them finish), and what
    // it announced and this side had not received is marked gone with it.
    void drop_gone_peer(Peer &p) noexcept;
    void fail_peer(Peer &p, int error, bool restarting = false);
    // lose_peers()'s second half; fail_peer() calls it on a connected endpoint, whose one
    // peer is its connection.
    void end_connection() noexcept;
    // Removes posted receive `r` from `list` and completes it with FI_ECANCELED.
    void cancel_posted(List<RecvReq> &list, RecvReq *r) noexcept;
    // Whether message `id` (data, length) from the peer `src` names is handled now: true when that
    // peer is connected. From an admitted peer still connecting, it is held (Peer::held) and
    // handled at set_connected(); from anyone else, dropped and counted.
    // Inline: every arriving message asks, and the answer is almost always "connected".
    // `src` is the key the message carries (PeerTable::by_key): when true, it is replaced by
    // the peer's index, which the handler uses from then on.
    bool from_connected(uint32_t &src, uint8_t id, const uint8_t *data, size_t length) noexcept {
        const uint32_t idx = src & PeerTable::kIndexMask;
        if (idx < peers_.size()) [[likely]] {
            Peer &p = *peers_[idx];
            if (p.src_key == src && p.state == PeerState::kConnected) [[likely]] {
                src = idx;
                hints_.on_arrival(p);  // (an answer to it is likely next)
                return true;
            }
        }
        wireup_.hold_or_drop(src, id, data, length);
        return false;
    }
    // Runs the handler of message `id`; false for an id without one.
    bool deliver(uint8_t id, const uint8_t *data, size_t length) noexcept;
    void mark_busy(Peer &p);

    // --- Sending: the scheduler (send_queue.cpp), a message's way (message_way.cpp) ---
    // Hands as much of r to the lane as it takes: kOk when all of it went, kNoResource when
    // the lane is full (r->offset says how far), or the lane's error.
    transports::Status push(Peer &p, SendReq &r) noexcept;
    // A filled record of a new operation to p (one tx credit): pushed at once when nothing
    // waits before it, else (after relieve_lane(), unless `relieved` says the call did so)
    // queued in order. Always 0 (a failure completes it with the error).
    ssize_t submit(Peer &p, SendReq *r, bool relieved = false) noexcept;
    // An RMA's or atomic's record, from the pool, for the peer `dest` names (connecting it on
    // first use): nullptr with rc -FI_EINVAL (no such entry), -FI_EAGAIN (no tx credit), the
    // peer's failure, or -FI_ENOMEM.
    SendReq *new_op(fi_addr_t dest, Peer *&p, ssize_t &rc) noexcept;
    // push() for a message (eager fragments or the rendezvous's RTS).
    transports::Status push_message(Peer &p, SendReq &r) noexcept;
    // How r goes to p (MessageWay): rendezvous above the peer's threshold unless injected
    // (or for a confirmation) where its RTS fits one bcopy, else one active message where it fits the
    // lane's short or bcopy size, else one zero-copy active message where the lane sends from
    // the caller's buffers, else fragments.
    MessageWay way_of(const Peer &p, const SendReq &r) const noexcept;
    // Whether r's RTS, with the segments and keys its protocol names, fits one bcopy.
    bool rts_fits(const Peer &p, const SendReq &r) const noexcept;
    void finish_send(SendReq *r, int error) noexcept;
    void drain(Peer &p) noexcept;
    void drain_queue(Peer &p) noexcept;  // drain() but for the gate's refresh

    // --- Receiving (receive.cpp; the queues and the rule: match.h) ---
    // Where a message (src, tagged, tag) of `len` bytes goes: the first posted receive it
    // matches (for a multi-receive buffer, a record for its part of the buffer).
    inline RecvReq *match_posted(uint32_t src, bool tagged, uint64_t tag, size_t len) noexcept;
    // A record for the next `len` bytes of multi-receive buffer m (fewer: truncated); m
    // leaves the posted queue once less than FI_OPT_MIN_MULTI_RECV remains. nullptr when
    // memory runs out.
    RecvReq *place_in(RecvReq *m, size_t len) noexcept;
    // Gives r an unexpected message (removed from its queue): its bytes, its fragments to
    // come, or its rendezvous.
    void deliver_unexpected(RecvReq *r, UnexpMsg *u) noexcept;
    // Drops an unexpected message (FI_DISCARD), removed from its queue.
    void drop_unexpected(UnexpMsg *u) noexcept;
    // Returns a completed receive record to its pool; FI_MULTI_RECV when it was the last
    // message of a released multi-receive buffer (which is retired too).
    uint64_t retire_recv(RecvReq *r) noexcept;
    // A receive got its message (msg_len bytes, copied in): its completion and counter, the
    // record back to its pool. Inline (fast_path.h); the uncommon cases are
    // complete_recv_slow(). Always inlined: GCC kept it out of line, and its six arguments'
    // call and prologue cost about 25 instructions per message.
    [[gnu::always_inline]] inline void complete_recv(RecvReq *r, uint32_t src, uint32_t wire_flags, uint64_t tag,
                              uint64_t data, size_t msg_len) noexcept;
    // A pooled record for a message that found no receive (not queued yet); throws
    // std::bad_alloc.
    UnexpMsg *new_unexpected(const wire::EagerHdr &h, uint64_t cq_data, size_t total,
                             size_t received);
    void retire_unexpected(UnexpMsg *u) noexcept;
    // Gives an unexpected message's kept descriptor back to its transport (retire_unexpected,
    // and the data path's close for those never received).
    void release_desc(UnexpMsg *u) noexcept;
    size_t descs_held_ = 0;  // unexpected messages kept in descriptors (kMaxDescsHeld)
    // Posts a filled receive: matches it against the unexpected messages, else queues it.
    ssize_t post_recv(RecvReq *r) noexcept;
    // recv_buffer() beyond its common case.
    ssize_t recv_buffer_slow(void *buf, size_t len, fi_addr_t src, void *context, uint64_t flags,
                             uint64_t tag, uint64_t ignore, bool tagged) noexcept;
    // complete_recv() beyond its common case (truncation, FI_SOURCE_ERR, multi-receive
    // records, a full CQ, no completion wanted).
    void complete_recv_slow(RecvReq *r, uint32_t src, uint32_t wire_flags, uint64_t tag,
                            uint64_t data, size_t msg_len, fi_addr_t from,
                            bool unknown) noexcept;
    // Sets a pooled receive record's fields for a new receive (inline, fast_path.h).
    inline void fill_recv(RecvReq *r, uint32_t from, void *context, uint64_t flags, uint64_t tag,
                          uint64_t ignore, bool tagged) noexcept;
    // A receive record for (src, tagged, tag, ignore, context, flags); nullptr with *rc set.
    RecvReq *new_recv(fi_addr_t src, void *context, uint64_t flags, uint64_t tag, uint64_t ignore,
                      bool tagged, ssize_t &rc) noexcept;

    // --- Peer failures (failures.cpp) ---
    // Fails the peers whose UCT endpoints the transports reported broken, and destroys them.
    void handle_failures() noexcept;
    // Progresses the worker until a round finds nothing, kIntakeRounds rounds at most: what
    // peers sent before they failed or closed, already in this host's sockets and FIFOs, is
    // taken in before their failure is (failures.cpp says why).
    void take_in_arrivals() noexcept;
    // Whether `p` answered a handshake that moves it to an endpoint-to-endpoint lane and
    // waits for the peer's ack on that lane (its traffic comes after the ack, there).
    static bool awaits_p2p_ack(const Peer &p) noexcept;
    // Progresses, within kP2pAckWaitMs, while a peer awaits its ack (and, if
    // `failed_lane_only`, the handshake lane it still uses has failed): the peer's old lane
    // failing says nothing of its new one, which may hold the ack and what followed it.
    // Whether it waited.
    bool await_p2p_acks(bool failed_lane_only) noexcept;
    // A receive completes with error `err` (a positive fi errno) after `len` bytes.
    void complete_recv_error(RecvReq *r, uint32_t src, int err, size_t len) noexcept;

    // --- What the protocol modules share (control.cpp, data_path.cpp) ---
    // One message of `n` >= 8 staged bytes as an am_short (the caller checked the lane's
    // max_short).
    transports::Status send_staged(Peer &p, uint8_t id, const uint8_t *staged, size_t n) noexcept;
    // One message of `len` bytes that `pack` writes: staged on the stack and sent as an
    // am_short when it fits (kStagedPacked and the lane's short limit), a bcopy otherwise; the
    // peer receives the same bytes either way.
    static constexpr size_t kStagedPacked = 96;
    transports::Status send_packed(Peer &p, uint8_t id, transports::PackFn pack, void *arg,
                                   size_t len) noexcept;
    // The operation of kind `op` an answer (RMA_READ_RESP, ATOMIC_RESP) names, its header in
    // h; nullptr (dropped and counted) when malformed, from no connected peer, or naming no
    // such operation that went out.
    SendReq *answered(const uint8_t *data, size_t length, SendOp op, wire::RmaRespHdr &h) noexcept;
    // fi_writedata's (or an atomic's) remote CQ data, as an entry in the target's CQ.
    void remote_cq_data(Peer &p, uint32_t flags, uint64_t data, uint64_t total) noexcept;


    // The active messages this data path receives (message_handlers.cpp): each protocol
    // module's rows (MessageHandler), joined. A new message is an id in wire.h and one row in
    // the table of the module that handles it.
    static std::span<const MessageHandler> message_handlers() noexcept;
    // The handler a row names: member H of the protocol module the data path holds in member
    // Module.
    template <auto Module, auto H>
    static void call(DataPath &dp, const uint8_t *data, size_t length) noexcept {
        ((dp.*Module).*H)(data, length);
    }
    // UCT calls it with the DataPath as arg. kCounted: the messages a stream is made of
    // (eager messages and the first fragments of longer ones, writes, atomics) are counted
    // (rx_data_msgs(), for RxSlip). Control messages are not, nor the rest of a message
    // already begun (eager fragments after the first, pipelined rendezvous data): a receiver
    // that waits for the rest of one message is not behind a stream, and slipping between its
    // fragments delayed 12-24 KiB ping-pongs by up to a tenth.
    template <auto Module, auto H, bool kCounted>
    static transports::Status trampoline(void *arg, void *data, size_t length, unsigned) noexcept {
        auto *dp = static_cast<DataPath *>(arg);
        if constexpr (kCounted) ++dp->rx_data_msgs_;
        call<Module, H>(*dp, static_cast<const uint8_t *>(data), length);
        return transports::Status::kOk;
    }
    // Every id no row names: UCT would warn for each such message (a peer of another kind, or a
    // hostile one, could fill the log); counted and dropped instead.
    static transports::Status drop_unknown_id(void *arg, void *, size_t, unsigned) noexcept {
        ++static_cast<DataPath *>(arg)->stats_.dropped_unknown_id;
        return transports::Status::kOk;
    }
    template <auto Module, auto H, bool kCounted>
    static constexpr MessageHandler module_row(uint8_t id) noexcept {
        return {id, &call<Module, H>, &trampoline<Module, H, kCounted>};
    }
    // A counted data message whose handler H(data, length, desc) may keep the transport's
    // descriptor (desc not null where UCT allows it: transports::kAmDesc); it returns whether
    // it did, and UCT then leaves the descriptor to us (release_am_desc).
    template <auto Module, auto H>
    static void call_keeping(DataPath &dp, const uint8_t *data, size_t length) noexcept {
        (void)((dp.*Module).*H)(data, length, nullptr);
    }
    template <auto Module, auto H>
    static transports::Status keeping_trampoline(void *arg, void *data, size_t length,
                                                 unsigned flags) noexcept {
        auto *dp = static_cast<DataPath *>(arg);
        ++dp->rx_data_msgs_;
        const bool kept = ((dp->*Module).*H)(static_cast<const uint8_t *>(data), length,
                                             (flags & transports::kAmDesc) ? data : nullptr);
        return kept ? transports::Status::kInProgress : transports::Status::kOk;
    }
    template <auto Module, auto H>
    static constexpr MessageHandler keeping_row(uint8_t id) noexcept {
        return {id, &call_keeping<Module, H>, &keeping_trampoline<Module, H>};
    }

    // The protocol modules (each its own messages, its send and its handlers) reach the
    // peers, the scheduler, control messages and completions through the data path.
    friend class Wireup;
    friend class EagerProtocol;
    friend class RndvProtocol;
    friend class RndvGet;
    friend class RndvSplit;
    friend class RndvPut;
    friend class RndvAm;
    friend class AtomicProtocol;
    friend class RmaProtocol;
    friend class RmaZcopyProtocol;
    friend class ZcopyTransfers;
    friend class ControlChannel;
    friend class PeerTable;
    // The zero-copy transfers and the operations in flight by id (zcopy_transfers.h), a
    // service the modules below use.
    ZcopyTransfers zcopy_{*this};
    // Control messages, sent at once or queued ahead of a peer's data (control_channel.h).
    ControlChannel ctrl_{*this};
    Wireup wireup_{*this};
    EagerProtocol eager_{*this};
    RndvProtocol rndv_{*this};
    AtomicProtocol atomics_{*this};
    RmaProtocol rma_{*this};
    RmaZcopyProtocol rma_zcopy_{*this};

    DataPathConfig cfg_;
    transports::EndpointWorker *worker_;
    transports::LanePolicy lane_policy_;
    size_t tx_size_;
    size_t rx_size_;  // (0 once a connected endpoint's connection is over)
    bool connection_over_ = false;  // lose_peers() ran (FI_EP_MSG)
    // Listening on a port the application chose (worker_->named_ports()): connections
    // accepted there are set to close abortively at the next progress after a peer's
    // handshake arrived (abortive_due_), so a killed process leaves the port free.
    bool named_ports_ = false;
    bool abortive_due_ = false;
    size_t tx_outstanding_ = 0;
    // Peers' one-sided accesses checked against the domain's MR keys, and counted.
    TargetAccess target_;
    size_t rx_posted_ = 0;
    SourceRule source_rule_;  // which receives match their source (FI_*DIRECTED_RECV)
    bool tagged_multi_recv_;  // FI_TAGGED_MULTI_RECV: FI_MULTI_RECV on tagged receives
    // The peer index a receive (or FI_PEEK) from `src` matches: kNoPeer for any source;
    // -FI_EINVAL in *rc when src names nothing or is FI_ADDR_UNSPEC where the source must be
    // exact.
    uint32_t recv_source(fi_addr_t src, bool tagged, ssize_t &rc) noexcept;

    // Peers by index, identity and AV entry (peer_table.h).
    PeerTable peers_{*this};
    sched::BusyPeers busy_;  // peers with queued work (progress drains them)

    Pool<SendReq> send_pool_;
    Pool<RecvReq> recv_pool_;
    Pool<UnexpMsg> unexp_pool_;
    MatchQueues match_;  // posted receives and unexpected messages
    CompletionWriter completions_;  // written at once, or in order once the CQ has room
    std::unordered_map<void *, UnexpMsg *> claimed_;  // FI_PEEK | FI_CLAIM, by context

    DataPathStats stats_;
    uint64_t rx_data_msgs_ = 0;  // data messages arrived (trampoline<..., true>)
    RxSlip rx_slip_;

    static constexpr unsigned kCheckTicks = 255;  // progress calls between clock reads, - 1
    static constexpr int kIntakeRounds = 32;  // take_in_arrivals()'s progress calls, at most
    static constexpr int kP2pAckWaitMs = 250;  // await_p2p_acks()'s bound
    unsigned ticks_ = 0;
    // The shared-memory path's cache hints (cache_hints.h).
    CacheHints hints_{peers_, stats_.heads_demoted};
    // After an eager message, a short write or a short atomic to `p` (sends that start
    // elsewhere, send(), rma() and atomic(), tell rx_slip_ there).
    void note_sent(Peer &p) noexcept {
        rx_slip_.on_send();
        hints_.on_send(p);
    }
    size_t partial_rx_ = 0;  // peers with a multi-fragment message partly arrived
    std::chrono::steady_clock::time_point next_check_{};
    // A peer connected over a transport whose hosts are watched (host_watch.cpp): each check
    // looks at the hosts.
    bool watch_hosts_ = false;
    // Peers failed so far: a directed receive posted while it is 0 needs no look at its
    // peer's state (the fast path).
    uint32_t failed_peers_ = 0;
    bool departed_ = false;  // a failed peer's slot may be retired (retire_departed_peers)
    // host_watch.cpp: each check, the tcp peers' hosts; a peer connected now.
    void watch_hosts() noexcept;
    void on_connected_lane(Peer &p) noexcept;
    // fail_peer's part for receivers: the receives directed at `p` complete with its error
    // (not when a fresh peer takes its index: `restarting`, restart.cpp), and the endpoint is
    // told (cfg_.peer_failed).
    void tell_receivers(Peer &p, bool restarting) noexcept;
};

}  // namespace ufi::runtime::proto
