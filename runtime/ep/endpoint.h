// The active RDM endpoint: fi_endpoint, fi_ep_bind (AV, CQs, counters, EQ), fi_enable (one UCT
// worker and an iface per transport of the domain, the address built from them, and the data
// path, runtime/proto/data_path.h), fi_getname/fi_setname, options, ops flags and fi_close. The api layer
// (api/ep.cpp) fills the ops tables and checks the C arguments; everything with state lives
// here. See runtime/ep/README.md for the decisions the man page leaves to providers.
#pragma once

#include "runtime/object_close.h"
#include "runtime/ep/endpoint_face.h"
#include "runtime/ep/options.h"
#include "runtime/ep/progress_thread.h"
#include "runtime/ep/wake_timer.h"
#include "runtime/lock.h"
#include "runtime/progress.h"
#include "transports/address.h"
#include "transports/iface/endpoint_worker.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace ufi::transports {
class EndpointWorker;
}
namespace ufi::runtime::proto {
class DataPath;
}

namespace ufi::runtime {
struct Domain;
namespace av {
class Av;
}
namespace cq {
class Cq;
}
namespace cntr {
class Cntr;
}
namespace eq {
class Eq;
}
}  // namespace ufi::runtime

namespace ufi::runtime::ep {

class SharedRx;
class SharedTx;
class ScalableEndpoint;

// The data-transfer tables of one locking choice.
struct DataOps {
    fi_ops_msg *msg = nullptr;
    fi_ops_rma *rma = nullptr;
    fi_ops_tagged *tagged = nullptr;
    fi_ops_atomic *atomic = nullptr;
};

// The api layer's tables, installed on every endpoint. The data tables come twice: `locked`
// take the worker lock on every call, `lock_free` never do. The endpoint starts with the
// locked ones (they only refuse calls before fi_enable) and fi_enable installs the set the
// domain's ThreadingPolicy::endpoints chose (runtime/threading.h).
struct EndpointOps {
    fi_ops *fid = nullptr;
    fi_ops_ep *ep = nullptr;
    fi_ops_cm *cm = nullptr;
    DataOps locked;
    DataOps lock_free;
    fi_ops_collective *collective = nullptr;
};

// Bytes reserved in front of received data in UCT receive descriptors. 0 until the data path
// defines its receive descriptor (uct-brief section 4.2).
inline constexpr size_t kRxHeadroom = 0;

// The counters an endpoint may bind, in fi_ep_bind's flag order.
enum CounterEvent : int {
    kCntrSend,
    kCntrRecv,
    kCntrRead,
    kCntrWrite,
    kCntrRemoteRead,
    kCntrRemoteWrite,
    kCntrCount
};

class EndpointAlias;
class EndpointConnection;
struct ConnRequest;

class Endpoint : public EndpointFace {
  public:
    using CStruct = fid_ep;

    // Use open_endpoint().
    Endpoint(Domain *domain, fi_info *info, void *context, const EndpointOps &ops);
    ~Endpoint();
    Endpoint(const Endpoint &) = delete;
    Endpoint &operator=(const Endpoint &) = delete;

    // fi_ep_bind. -FI_EOPBADSTATE once enabled; -FI_EBADFLAGS for flags the object type does
    // not define; -FI_EINVAL for an object that is not ufi's, a second AV/EQ, a direction or
    // counter event that is already bound, or remote counter events without FI_RMA_EVENT;
    // -FI_EDOMAIN for an AV or CQ of another domain;
    // A shared transmit or receive context (runtime/ep/shared_tx.h, shared_rx.h): one of each,
    // of this domain, flags 0.
    int bind(fid_t bfid, uint64_t flags) noexcept;

    // fi_enable. -FI_EOPBADSTATE when already enabled, -FI_ENOAV without an AV, -FI_ENOCQ
    // without the CQs the capabilities need, -FI_ENODEV when no transport opens.
    int enable() noexcept;

    // fi_close, through close_object(): kBusy while MRs are bound; else tells its peers,
    // stops its progress thread, unbinds and tears the data path and the worker down (kFree).
    Shut shut() noexcept;

    // fi_getname: the address blob, or its "fi_ufi://" string (NUL-terminated) on FI_ADDR_STR
    // domains. -FI_EOPBADSTATE before fi_enable; -FI_ETOOSMALL (truncated copy, *addrlen set
    // to the size needed) for a short buffer.
    int getname(void *addr, size_t *addrlen) noexcept;

    // fi_setname: before fi_enable, adopts the identity (uuid, endpoint id) of a ufi address;
    // -FI_EOPBADSTATE after, -FI_EINVAL for an address that is not ufi's, -FI_EADDRINUSE when
    // a live endpoint of this process has that endpoint id.
    int setname(const void *addr, size_t addrlen) noexcept;

    int getopt(int level, int optname, void *optval, size_t *optlen) noexcept;
    int setopt(int level, int optname, const void *optval, size_t optlen) noexcept;

    // fi_ep_alias (fi_control FI_ALIAS): an alias whose FI_TRANSMIT or FI_RECV defaults (not
    // both: -FI_EINVAL) are the operation flags given with it (-FI_EBADFLAGS for others), the
    // other direction's the endpoint's; `fid_ops` is the api layer's table for aliases.
    int make_alias(uint64_t flags, void *context, fi_ops *fid_ops, EndpointAlias **out) noexcept;
    // An alias closed.
    void forget_alias(EndpointAlias *alias) noexcept;

    // FI_EP_MSG (runtime/ep/connection.h). fi_connect (enables the endpoint first if needed),
    // fi_accept (of the request its info->handle named), fi_shutdown, fi_getpeer.
    // -FI_EOPNOTSUPP on other endpoint types; -FI_ENOEQ without an EQ.
    int connect(const void *addr, const void *param, size_t paramlen) noexcept;
    int accept(const void *param, size_t paramlen) noexcept;
    int shutdown(uint64_t flags) noexcept;
    int getpeer(void *addr, size_t *addrlen) noexcept;
    // For the connection: the peer's data-path address, as an AV entry (0 or -FI_EINVAL), and
    // the connection's end (what is in flight to the peer fails with `error`).
    int adopt_peer(std::span<const uint8_t> address) noexcept;
    void connection_lost(int error) noexcept;
    // fi_shutdown's first step: what was sent has left (DataPath::settle_sends).
    void settle_sends(int bound_ms) noexcept;
    bool connected_type() const noexcept { return connected_type_; }

    // fi_tx_size_left / fi_rx_size_left (deprecated): -FI_EOPBADSTATE before fi_enable, else
    // the operations that can still be posted.
    ssize_t tx_size_left() noexcept;
    ssize_t rx_size_left() noexcept;

    // For the MR subsystem (runtime/ep/binding.h).
    bool enabled() const noexcept { return enabled_.load(std::memory_order_acquire); }
    void attach_mr() noexcept { bound_mrs_.fetch_add(1, std::memory_order_relaxed); }
    void detach_mr() noexcept { bound_mrs_.fetch_sub(1, std::memory_order_relaxed); }

    // A transmit or receive context of a scalable endpoint (runtime/ep/scalable.h) is an
    // endpoint of its own, with this set; nullptr for every other endpoint.
    ScalableEndpoint *scalable() const noexcept { return scalable_; }
    void set_scalable(ScalableEndpoint *sep) noexcept { scalable_ = sep; }
    // A sibling context's helping hand: progresses this endpoint once if its worker lock is
    // free now and sends of it are not complete; whether it did.
    bool progress_if_free() noexcept;
    // Whether an AV is bound (a scalable endpoint's context takes its AV at fi_enable).
    bool has_av() const noexcept { return av_ != nullptr; }

    // Read access for the data path and white-box tests.
    Domain *domain() const noexcept { return domain_; }
    const fi_info &info() const noexcept { return *info_; }
    fi_info &mutable_info() noexcept { return *info_; }
    const EndpointOptions &options() const noexcept { return options_; }
    const ProgressSource &progress_source() const noexcept { return source_; }
    const std::vector<uint8_t> &auth_key() const noexcept { return auth_key_; }
    const std::vector<fi_addr_t> &held_auth_keys() const noexcept { return held_auth_keys_; }
    // The address blob (padded to the domain's addr_len) and its parsed form; empty before
    // fi_enable.
    const std::vector<uint8_t> &address_blob() const noexcept { return blob_; }
    const transports::address::EndpointAddress &address() const noexcept { return address_; }
    // The identity fi_setname gave the endpoint, if any.
    bool has_given_identity() const noexcept { return given_identity_; }
    // The endpoint's transports; nullptr before fi_enable. Calls on it need worker_lock().
    transports::EndpointWorker *worker() const noexcept {
        return worker_ptr_.load(std::memory_order_acquire);
    }
    OptionalMutex &worker_lock() noexcept { return worker_lock_; }
    // The data path; nullptr before fi_enable. Calls on it need worker_lock().
    proto::DataPath *data_path() const noexcept {
        return data_path_ptr_.load(std::memory_order_acquire);
    }
    // Whether an iface of this endpoint reports the peer's record reachable (takes the lock).
    bool peer_reachable(const transports::address::TransportRecord &peer) noexcept;

    // The ProgressSource callbacks (arg: the Endpoint). Progress runs on every CQ and counter
    // read: its locked and lock-free forms are chosen when the endpoint is made.
    template <bool kLocked>
    static unsigned progress_cb(void *arg);
    static int arm_cb(void *arg);
    static int wait_fds_cb(void *arg, int *fds, int max);

  private:
    friend int open_endpoint(Domain *, const fi_info *, uint64_t, void *, const EndpointOps &,
                             Endpoint **) noexcept;

    struct CqBinding {
        cq::Cq *cq = nullptr;
        bool selective = false;
    };

    int bind_av(fid_t bfid, uint64_t flags);
    int bind_cq(fid_t bfid, uint64_t flags);
    int bind_cntr(fid_t bfid, uint64_t flags);
    int bind_eq(fid_t bfid, uint64_t flags);
    int bind_shared(fid_t bfid, uint64_t flags);
    int adopt_identity(const void *addr, size_t addrlen, const char *caller);
    void unbind_all() noexcept;
    void release_id() noexcept;

    Domain *domain_;
    fi_info *info_;  // negotiated copy (owned)
    uint32_t addr_format_;
    std::mutex ctl_mutex_;  // bind, enable, close, names, options
    std::atomic<bool> enabled_{false};
    std::atomic<int> bound_mrs_{0};

    av::Av *av_ = nullptr;
    CqBinding tx_cq_;
    CqBinding rx_cq_;
    std::array<cntr::Cntr *, kCntrCount> cntrs_{};
    eq::Eq *eq_ = nullptr;
    // The data path's word that a peer failed (DataPathConfig::peer_failed): an error event
    // on the endpoint's EQ, else on its AV's.
    static void post_peer_failure(void *arg, fi_addr_t source, int error) noexcept;

    EndpointOptions options_;
    // FI_EP_MSG: its one peer's address lives in an AV of its own (the data path finds peers in
    // an AV), made at fi_enable; the request it was opened to accept; its connection.
    bool connected_type_ = false;
    av::Av *own_av_ = nullptr;
    ConnRequest *request_ = nullptr;
    std::unique_ptr<EndpointConnection> connection_;
    // Its connection's local socket address, where one is known at open: the listener's for an
    // endpoint accepting a request, the passive endpoint's whose address it took over
    // (info->handle naming a passive endpoint: fi_getinfo(3)); fi_getname returns it, and
    // fi_connect binds to it. Empty (length 0) otherwise.
    sockaddr_storage cm_name_{};
    socklen_t cm_name_len_ = 0;
    SharedRx *srx_ = nullptr;  // its receives come from there (set before fi_enable, kept)
    SharedTx *stx_ = nullptr;
    ScalableEndpoint *scalable_ = nullptr;  // the scalable endpoint it is a context of
    // Its empty progress calls, counted: every kHelpEvery + 1-th lends siblings a call.
    static constexpr uint32_t kHelpEvery = 63;
    std::atomic<uint32_t> help_ticks_{0};
    std::vector<EndpointAlias *> aliases_;  // open aliases (fi_close is -FI_EBUSY while any is)
    std::vector<uint8_t> auth_key_;          // classic key: the endpoint's or the domain's
    std::vector<fi_addr_t> held_auth_keys_;  // FI_AV_AUTH_KEY domains, taken at enable

    uint64_t uuid_ = 0;
    uint32_t endpoint_id_ = 0;  // 0: none claimed
    bool given_identity_ = false;
    // tcp ports the source address names (fi_getinfo with node/service and FI_SOURCE).
    std::vector<transports::WorkerOptions::Listen> listen_;

    ProgressSource source_;
    DataOps enabled_ops_;  // the data tables fi_enable installs (the policy's choice)
    WakeTimer wake_timer_;  // wakes sleepers for peer checks (data path's needs_peer_checks)
    OptionalMutex worker_lock_;
    std::unique_ptr<transports::EndpointWorker> worker_;
    std::atomic<transports::EndpointWorker *> worker_ptr_{nullptr};
    // Declared after the worker: destroyed first (its lanes are UCT endpoints on its ifaces).
    std::unique_ptr<proto::DataPath> data_path_;
    std::atomic<proto::DataPath *> data_path_ptr_{nullptr};
    // FI_PROGRESS_AUTO (declared after what it drives: stopped first).
    ProgressThread progress_thread_;
    transports::address::EndpointAddress address_;
    std::vector<uint8_t> blob_;
    std::string blob_string_;  // "fi_ufi://..."
};

// fi_endpoint / fi_endpoint2 for `domain`. -FI_EINVAL for info that does not describe an
// endpoint of this domain, -FI_ENOSYS for FI_EP_MSG/FI_EP_DGRAM (not yet) and FI_PEER,
// -FI_EBADFLAGS for other flags.
int open_endpoint(Domain *domain, const fi_info *info, uint64_t flags, void *context,
                  const EndpointOps &ops, Endpoint **out) noexcept;

}  // namespace ufi::runtime::ep
