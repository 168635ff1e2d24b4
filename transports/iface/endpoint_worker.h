// An endpoint's whole UCT state: one async context and one SERIALIZED worker (uct-brief
// sections 2 and 9), and on it one interface per transport resource of the endpoint's domain,
// each with an error handler installed (section 8), progress enabled (section 1.1) and its
// device and iface addresses read, which become the endpoint's address records
// (transports/address.h). The only place that creates workers and ifaces for endpoints.
//
// Not thread-safe: UCT workers are not, so the owner serializes every call (progress, arm,
// reachability, destruction) under its worker lock. Teardown order is the members' order:
// ifaces, then the mds they were opened on, then the worker, then the async context.
#pragma once

#include "transports/address.h"
#include "transports/fork_safety.h"
#include "transports/iface/fifo_tuning.h"
#include "transports/iface/mm_fifo_hole.h"
#include "transports/memory/memory_domains.h"
#include "transports/resource.h"
#include "transports/status.h"
#include "transports/transport_code.h"
#include "transports/ucx_fwd.h"
#include "transports/ucx_handles.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace ufi::transports {

struct WorkerOptions {
    // false: skip shared-memory transports (posix, sysv, cma, ...; not self), as
    // FI_OPT_SHARED_MEMORY_PERMITTED=false asks.
    bool shared_memory = true;
    // Bytes UCT reserves before the payload of receive descriptors (uct-brief section 4.2).
    size_t rx_headroom = 0;
    // Where the endpoint must be reachable by name (a source address naming a host and port):
    // the tcp iface whose device address is `device_addr` listens on `port` (UCT's
    // PORT_RANGE) instead of a port of the system's choosing.
    struct Listen {
        std::vector<uint8_t> device_addr;  // UCX's tcp device address (transports/address_svc.h)
        uint16_t port = 0;
    };
    std::vector<Listen> listen;
    // A connected endpoint's one peer, where it is known before the endpoint opens (the side
    // accepting a connection request): its address records. Shared-memory transports open
    // first; where one that carries active messages reaches the peer, the network transports
    // are left out (they would carry nothing to this peer, and opening a tcp iface with its
    // handlers is most of an endpoint's setup: docs/performance.md, "Endpoint types").
    std::vector<address::TransportRecord> only_peer;
};

// What an open iface can do (uct_iface_query at open), in ufi's terms: lanes and protocols
// ask these, never UCT's attribute struct (transports/iface/iface_caps.cpp fills them).
struct IfaceCaps {
    std::uint64_t flags = 0;        // UCT_IFACE_FLAG_* (read inside transports/ only)
    std::uint64_t event_flags = 0;  // UCT_IFACE_FLAG_EVENT_* (likewise)
    IfaceLimits limits;       // sizes include UCT's 8-byte AM header (resource.h)
    PerfEstimate perf;        // UCT's estimates: latency, overhead, bandwidth
    std::size_t device_addr_len = 0;
    std::size_t iface_addr_len = 0;
    std::size_t ep_addr_len = 0;
    // What the protocols ask, answered from `flags`:
    bool am_short = false;   // short active messages (inline, from registers)
    bool am_bcopy = false;
    bool am_zcopy = false;   // active messages from the caller's buffers
    bool get_zcopy = false;  // reads a peer's registered memory
    bool put_zcopy = false;  // writes a peer's registered memory
    bool ep_check = false;   // uct_ep_check can learn of a dead peer
    bool ep_keepalive = false;  // reports a closed connection by itself
};

// An active-message handler (uct_am_callback_t): runs inside progress (and, over `self`,
// inside the sender's send call). `flags & kAmDesc`: the data may be kept (return
// kInProgress, release with release_am_desc()).
using AmHandlerFn = Status (*)(void *arg, void *data, size_t length, unsigned flags);
inline constexpr unsigned kAmDesc = 1;  // UCT_CB_PARAM_FLAG_DESC (checked in endpoint_worker.cpp)

// One open interface.
struct OpenIface {
    const Resource *resource = nullptr;  // discovery's description of it
    // Its transport's code, as protocol messages name it (transport_code.h).
    TransportCode code = kNoTransport;
    // Its zero copy is a copy the calling process's CPU makes (the kernel's, for its caller:
    // cma, knem): two processes copying halves at once go faster than one copying all. (An
    // RDMA device copies alone, whoever asks.)
    bool copies_on_cpu = false;
    Iface iface;
    // Its memory domain (the domain's, open for as long as the worker): registrations and
    // remote keys for zero-copy operations over this iface.
    uct_md_h md = nullptr;
    uct_component_h component = nullptr;
    size_t rkey_packed_size = 0;
    bool md_can_register = false;  // UCT_MD_FLAG_REG (not posix/sysv: they only allocate)
    bool md_needs_memh = false;    // UCT_MD_FLAG_NEED_MEMH: local buffers of zero-copy calls too
    IfaceCaps caps;
    // What its address records carry as device address: UCT's, with the network namespace's
    // mark for a FIFO transport (transports/iface/net_namespace.h: FIFO peers must share the
    // namespace, for UCT's wake-up).
    std::vector<uint8_t> device_addr;
    uint64_t ns_mark = 0;  // that mark (0: none); taken off peers' device addresses (record_addr.h)
    // What its address records carry (empty where it is not connected to by iface address):
    // UCT's iface address, then, for a FIFO transport, its geometry (fifo_tuning.h).
    std::vector<uint8_t> iface_addr;
    std::vector<uint8_t> fifo_geometry;  // empty: no FIFO
    FifoShape fifo_shape;                // its element size and count (zero: no FIFO)
    int event_fd = -1;        // UCT_IFACE_FLAG_EVENT_FD transports only
    uint16_t named_port = 0;  // the tcp port options.listen had it listen on (0: the system's)
    unsigned arm_events = 0;  // UCT_EVENT_* bits to arm before sleeping; 0: never armed (self)

    // Progress: shared-memory and self ifaces are progressed from the start (a poll costs a
    // load). A network iface (tcp: an epoll_wait per poll) is progressed only once it carries
    // traffic: when this endpoint connects over it, or when its event fd reports incoming
    // activity (watched by UCS's async thread until then), as UCP activates its ifaces.
    bool progressing = false;
    bool watched = false;                           // its fd is with the async context
    // Its receive FIFO (mm transports), located at the first hole check, and the element its
    // reader waits at (mm_fifo_hole.h).
    MmRecvFifo recv_fifo;
    MmHoleWatch hole_watch;
    bool recv_fifo_looked = false;
    std::atomic<bool> activation_queued{false};     // an activation waits for progress
    class EndpointWorker *owner = nullptr;
};

// Whether `rec` is a record this iface's transport can use: the same transport, the address
// lengths this iface publishes (a peer's UCT reads them at its own lengths) and, for a FIFO
// transport, the same FIFO geometry (fifo_tuning.h: peers shaped otherwise must not share a
// FIFO). UCT's uct_iface_is_reachable is the caller's next question.
bool record_fits(const OpenIface &oi, const address::TransportRecord &rec) noexcept;

// A resource the worker did not open, and why.
struct SkippedResource {
    const Resource *resource = nullptr;
    std::string why;
};

class EndpointWorker {
  public:
    // Creates the async context and worker and opens an iface per resource, in order. A
    // resource that fails (or is filtered out by `options`) is listed in `skipped` and left
    // out. Status::kNoDevice when no iface opened; kBusy when a tcp iface cannot
    // listen on a port options.listen names (in use), kUnreachable when no tcp
    // resource has a listen entry's device address; other errors when the async context or
    // worker cannot be created.
    // `mds`: the domain's open memory domains (Domain::memory_domains); they must outlive
    // the worker (a domain cannot close while its endpoints are open).
    static Status open(const MemoryDomains &mds, std::span<const Resource *const> resources,
                             const WorkerOptions &options, std::unique_ptr<EndpointWorker> &out,
                             std::vector<SkippedResource> &skipped);

    EndpointWorker(const EndpointWorker &) = delete;
    EndpointWorker &operator=(const EndpointWorker &) = delete;
    ~EndpointWorker();

    // uct_worker_progress plus, every 64 calls, the async context's missed events
    // (uct-brief section 2) and a look at the shared-memory ifaces still waiting for their
    // first wake-up (poll_unwoken). Returns the number of events processed. (A call into
    // transports/: the layers above do not see UCX's inline functions.)
    unsigned progress() noexcept;

    // progress(), looking at every shared-memory iface not woken yet too: what peers sent
    // so far is taken in (fi_close answers the handshake requests waiting there).
    unsigned progress_everything() noexcept;

    // Arms every iface that has events: kOk when the caller may sleep on event_fds(),
    // Status::kBusy when work is pending (progress again instead).
    Status arm() noexcept;

    // Starts progressing `iface` (a lazily progressed network iface that is about to carry
    // traffic). Idempotent. Under the worker's lock.
    void activate(OpenIface &iface) noexcept;
    // Ifaces progressed now (tests, ufi_info).
    size_t progressing_ifaces() const noexcept;

    // Installs `cb` (with `arg`) for active-message id `id` (< 32) on every iface that
    // receives active messages. Synchronous: called only from progress (and, on self, from
    // inside the sender's call).
    Status set_am_handler(uint8_t id, AmHandlerFn cb, void *arg) noexcept;

    // Bytes reserved before received data in descriptors (WorkerOptions::rx_headroom).
    size_t rx_headroom() const noexcept { return rx_headroom_; }

    // The event fds of the ifaces that have one (posix, sysv, tcp; never self or cma).
    std::span<const int> event_fds() const noexcept { return fds_; }

    // The async events (tcp connection requests, ...) are polled by progress() rather than
    // delivered by UCX's async thread: a fork() child whose parent had endpoints open cannot
    // use that thread (transports/fork_safety.h). Sleepers must then wake up to progress: the
    // event fds alone do not cover those events.
    bool polls_async_events() const noexcept { return !async_thread_; }

    const std::vector<std::unique_ptr<OpenIface>> &ifaces() const noexcept { return ifaces_; }
    // The tcp ports its ifaces listen on because options.listen named them, but not those of
    // ifaces a fork() child inherited (their connections are the parent's).
    std::vector<uint16_t> named_ports() const;
    // Sets the connections accepted on those ports to close abortively (abortive_close.h): a
    // process killed with peers connected leaves its ports free, not in TIME_WAIT. Returns
    // how many it set (0 without named ports).
    unsigned close_named_abortively() const noexcept;
    // Publishes, on each shared-memory FIFO this worker receives on, an element a writer
    // claimed and left unwritten for UFI_SHM_HOLE_TIMEOUT (a writer killed mid-send), so that
    // the reader goes on past it (mm_fifo_hole.h). Called now and then by the thread that
    // progresses the worker. Returns how many it skipped now; fifo_holes_skipped() in all.
    unsigned skip_fifo_holes() noexcept;
    uint64_t fifo_holes_skipped() const noexcept { return fifo_holes_skipped_; }

    // One address record per open iface, in order.
    std::vector<address::TransportRecord> records() const;

    // Whether an iface of this worker with the record's transport name reports the peer
    // reachable (uct_iface_is_reachable). A record whose address lengths differ from the
    // local iface's is not reachable by that iface (UCT reads fixed lengths, so it is never
    // given a shorter address).
    bool is_reachable(const address::TransportRecord &peer) const noexcept;
    // Whether an open shared-memory iface that carries active messages reaches one of `peer`.
    bool reaches_over_shared_memory(std::span<const address::TransportRecord> peer) const noexcept;

    uct_worker_h worker() const noexcept { return worker_.get(); }

    // Transport errors on this worker's endpoints (a peer exited, a connection broke), as
    // UCT's error handlers report them, possibly on UCX's async thread. The owner of the
    // endpoints takes them from progress and destroys the failed ones (UCT requires it).
    struct EpFailure {
        uct_ep_h ep;  // (compared with the lanes' handle(), never used above transports/)
        Status status;
    };
    bool has_failures() const noexcept { return has_failures_.load(std::memory_order_acquire); }
    std::vector<EpFailure> take_failures();
    void report_failure(uct_ep_h ep, Status status) noexcept;
    // Drops what was reported on `ep`, destroyed since (its last operations may fail while it
    // is drained): an endpoint made later at the same address must not inherit it.
    void forget_failures(uct_ep_h ep) noexcept;
    // Whether a failure of `ep` waits to be taken.
    bool failure_reported(uct_ep_h ep) noexcept;

  private:
    EndpointWorker() = default;
    // Polls the lazily progressed shared-memory ifaces once and activates those that had
    // traffic their wake-up did not announce. UCT's mm ifaces signal through an abstract unix
    // socket, which does not cross network namespaces; peers of another namespace are kept off
    // FIFOs (net_namespace.h), so this is a safety net: for processes that cannot read their
    // namespace (no /proc: both unmarked), and for fi_close's last intake.
    unsigned poll_unwoken() noexcept;
    size_t unwoken_ = 0;  // watched shared-memory ifaces not progressed yet

    std::unique_ptr<fork::AsyncThreadUse> async_thread_;  // null: async_ is in poll mode
    AsyncContext async_;
    Worker worker_;
    std::vector<std::unique_ptr<OpenIface>> ifaces_;
    std::vector<int> fds_;
    size_t rx_headroom_ = 0;
    static constexpr unsigned kMissedEventsEvery = 63;  // progress calls between checks, - 1
    unsigned progress_calls_ = 0;
    uint64_t fifo_holes_skipped_ = 0;
    std::atomic<bool> has_failures_{false};
    std::mutex failures_mutex_;  // only on the error path
    std::vector<EpFailure> failures_;
};

}  // namespace ufi::transports
