// The path active messages take to one peer: a connect-to-iface UCT endpoint on the transport
// choose_am_lane() picked, with that transport's limits. The send calls are inline wrappers of
// UCT's, so the protocols (runtime/proto) pay nothing for going through this layer and stay
// free of UCX's API.
#pragma once

#include "transports/address.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/ucx_handles.h"

#include <uct/api/uct.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ufi::transports {

using Status = ucs_status_t;
using Iov = uct_iov_t;
// Packs a bcopy message into `dest` (at most the lane's max_bcopy bytes); returns its size.
using PackFn = size_t (*)(void *dest, void *arg);
// An active-message handler (uct_am_callback_t): runs inside progress (and, over `self`,
// inside the sender's send call). `flags & kAmDesc`: the data may be kept (return
// kInProgress, release with release_am_desc()).
using AmHandlerFn = ucs_status_t (*)(void *arg, void *data, size_t length, unsigned flags);

inline constexpr Status kOk = UCS_OK;
inline constexpr Status kInProgress = UCS_INPROGRESS;
inline constexpr Status kNoResource = UCS_ERR_NO_RESOURCE;
inline constexpr unsigned kAmDesc = UCT_CB_PARAM_FLAG_DESC;

inline Iov make_iov(const void *buffer, size_t length) {
    Iov iov;
    iov.buffer = const_cast<void *>(buffer);
    iov.length = length;
    iov.memh = UCT_MEM_HANDLE_NULL;
    iov.stride = 0;
    iov.count = 1;
    return iov;
}

class AmLane {
  public:
    AmLane() = default;
    AmLane(AmLane &&) noexcept = default;
    AmLane &operator=(AmLane &&) noexcept = default;

    // Connects to `peer` (a record of the same transport) from local `iface`.
    static Status connect(const OpenIface &iface, const address::TransportRecord &peer,
                          AmLane &out);

    bool connected() const noexcept { return static_cast<bool>(ep_); }
    const Resource &resource() const noexcept { return *iface_->resource; }
    const OpenIface &iface() const noexcept { return *iface_; }
    // Bytes one short message may carry in all (its iovs together).
    size_t max_short() const noexcept { return max_short_; }
    // Bytes one bcopy message may carry.
    size_t max_bcopy() const noexcept { return max_bcopy_; }

    // kOk, kNoResource (retry after progress), or an error (the peer failed).
    Status send_short(uint8_t id, const Iov *iov, size_t iovcnt) noexcept {
        return uct_ep_am_short_iov(ep_.get(), id, iov, iovcnt);
    }
    // The packed size, or a negative Status (kNoResource: retry after progress).
    ssize_t send_bcopy(uint8_t id, PackFn pack, void *arg) noexcept {
        return uct_ep_am_bcopy(ep_.get(), id, pack, arg, 0);
    }
    // Whether check() is how this lane learns of a dead peer: UCT_IFACE_FLAG_EP_CHECK without
    // a keepalive of its own (shared memory, where a dead process is otherwise silent). tcp
    // reports a closed connection by itself (UCT_IFACE_FLAG_EP_KEEPALIVE), and UCX 1.13's tcp
    // ep check (a keepalive active message) crashes the receiving side when it meets a
    // connection still being set up, so it is never asked.
    bool can_check() const noexcept {
        const uint64_t f = iface_ != nullptr ? iface_->attr.cap.flags : 0;
        return connected() && (f & UCT_IFACE_FLAG_EP_CHECK) && !(f & UCT_IFACE_FLAG_EP_KEEPALIVE);
    }
    // Asks the transport whether the peer is alive; a dead one is reported to the iface's
    // error handler (EndpointWorker::report_failure), possibly from inside this call.
    void check() noexcept { (void)uct_ep_check(ep_.get(), 0, nullptr); }
    // The UCT endpoint, to recognize it in an error report.
    uct_ep_h handle() const noexcept { return ep_.get(); }
    // Drops the connection (pending requests purged).
    void reset() noexcept { ep_.reset(); }

  private:
    Ep ep_;
    const OpenIface *iface_ = nullptr;
    size_t max_short_ = 0;
    size_t max_bcopy_ = 0;
};

// Releases an AM descriptor a handler kept (it returned kInProgress for kAmDesc data).
void release_am_desc(void *data, size_t rx_headroom) noexcept;

// How lanes may be chosen.
struct LanePolicy {
    // sysv makes its segments group-writable (UCT): use it only when UFI_TLS names it.
    bool sysv_allowed = false;

    static LanePolicy from_registry();
};

// The transport active messages to `peer` take: among this worker's ifaces that send AMs
// (short or bcopy) and connect to ifaces, those that reach one of the peer's records, the one
// with the lowest estimated latency + overhead (self, then shared memory, then the network),
// ties to the higher priority, then to posix over sysv. iface/record SIZE_MAX with `why` when
// none reaches the peer.
struct LaneChoice {
    size_t iface = SIZE_MAX;   // index in worker.ifaces()
    size_t record = SIZE_MAX;  // index in peer.records
    std::string why;
};
LaneChoice choose_am_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                          const LanePolicy &policy);

}  // namespace ufi::transports
