// The endpoint's message and tagged-message tables (fi_msg(3), fi_tagged(3)): the C ABI checks
// (buffers, iov counts and limits, sizes, flags), then runtime/proto's data path under the
// endpoint's worker lock. The endpoint is trusted: the ops table it was called through is its
// own, so no handle lookup is made on this path.
#include "api/ep_data.h"

#include "api/objects.h"
#include "runtime/ep/endpoint.h"
#include "runtime/lock.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/fast_path.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <sys/uio.h>

#include <mutex>

namespace ufi::api {

int iov_list(const runtime::ep::Endpoint &ep, const iovec *iov, size_t count,
             runtime::proto::IovList &out) {
    return iov_list(ep.info().tx_attr->iov_limit, iov, count, out);
}

int iov_list(size_t limit, const iovec *iov, size_t count, runtime::proto::IovList &out) {
    limit = std::min(limit, runtime::proto::kMaxIov);
    if (count > limit || (iov == nullptr && count != 0)) {
        UFI_LOG_INFO(log::Subsys::EpData, "iov_count {} (at most {}, iov {})", count, limit,
                     static_cast<const void *>(iov));
        return -FI_EINVAL;
    }
    out.count = 0;
    out.total = 0;
    for (size_t i = 0; i < count; ++i) {
        if (iov[i].iov_base == nullptr && iov[i].iov_len != 0) return -FI_EINVAL;
        if (iov[i].iov_len == 0) continue;
        // Lengths whose sum wraps (or a buffer that runs past the end of the address space)
        // would otherwise go below as a short message and be copied with its real lengths.
        uintptr_t end = 0;
        if (__builtin_add_overflow(out.total, iov[i].iov_len, &out.total) ||
            __builtin_add_overflow(reinterpret_cast<uintptr_t>(iov[i].iov_base),
                                   iov[i].iov_len, &end)) {
            UFI_LOG_INFO(log::Subsys::EpData,
                         "iov[{}]: length {:#x} overflows the list's total or the address space",
                         i, iov[i].iov_len);
            out.count = 0;
            out.total = 0;
            return -FI_EINVAL;
        }
        out.v[out.count++] = {static_cast<uint8_t *>(iov[i].iov_base), iov[i].iov_len};
    }
    return 0;
}

namespace {

using runtime::OptionalMutex;
using runtime::ep::Endpoint;
using runtime::proto::IovList;
using Subsys = log::Subsys;

// Flags fi_sendmsg / fi_tsendmsg accept, and fi_recvmsg / fi_trecvmsg.
constexpr uint64_t kSendFlags = FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE |
                                FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE |
                                FI_REMOTE_CQ_DATA | FI_MORE | FI_FENCE | FI_MATCH_COMPLETE;
constexpr uint64_t kRecvFlags = FI_COMPLETION | FI_MORE;
constexpr uint64_t kMsgRecvFlags = kRecvFlags | FI_MULTI_RECV;
constexpr uint64_t kTaggedRecvFlags = kRecvFlags | FI_PEEK | FI_CLAIM | FI_DISCARD;


template <bool kLocked>
ssize_t do_send(fid_ep *fep, const IovList &iov, fi_addr_t dest, void *context, uint64_t flags,
                uint64_t tag, uint64_t data, bool tagged, bool inject_call) {
    return with_data_path<kLocked>(fep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
        return dp.send(iov, dest, context, flags | (inject_call ? FI_INJECT : 0), tag, data,
                       tagged, inject_call);
    });
}

// One buffer (NULL only when empty): DataPath::send_buffer, whose common case is inline.
template <bool kLocked>
ssize_t send_one(fid_ep *fep, const void *buf, size_t len, fi_addr_t dest, void *context,
                 uint64_t flags, uint64_t tag, uint64_t data, bool tagged, bool inject_call) {
    if (buf == nullptr && len != 0) return -FI_EINVAL;
    return with_data_path<kLocked>(fep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
        return dp.send_buffer(buf, len, dest, context, flags | (inject_call ? FI_INJECT : 0), tag,
                              data, tagged, inject_call);
    });
}

template <bool kLocked>
ssize_t do_recv(fid_ep *fep, const IovList &iov, fi_addr_t src, void *context, uint64_t flags,
                uint64_t tag, uint64_t ignore, bool tagged) {
    return with_data_path<kLocked>(fep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
        return dp.recv(iov, src, context, flags, tag, ignore, tagged);
    });
}

// ---- fi_msg --------------------------------------------------------------------------------

template <bool kLocked>
ssize_t msg_send(fid_ep *ep, const void *buf, size_t len, void *, fi_addr_t dest, void *context) {
    return send_one<kLocked>(ep, buf, len, dest, context, handle_of(ep)->tx_op_flags(), 0, 0, false, false);
}

template <bool kLocked>
ssize_t msg_sendv(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t dest,
                  void *context) {
    IovList list;
    if (const int rc = iov_list(*ep_of(ep), iov, count, list); rc != 0) return rc;
    return do_send<kLocked>(ep, list, dest, context, handle_of(ep)->tx_op_flags(), 0, 0, false, false);
}

template <bool kLocked>
ssize_t msg_sendmsg(fid_ep *ep, const fi_msg *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    if (flags & ~kSendFlags) return -FI_EBADFLAGS;
    IovList list;
    if (const int rc = iov_list(*ep_of(ep), msg->msg_iov, msg->iov_count, list); rc != 0) return rc;
    return do_send<kLocked>(ep, list, msg->addr, msg->context, flags, 0, msg->data, false, false);
}

template <bool kLocked>
ssize_t msg_inject(fid_ep *ep, const void *buf, size_t len, fi_addr_t dest) {
    return send_one<kLocked>(ep, buf, len, dest, nullptr, 0, 0, 0, false, true);
}

template <bool kLocked>
ssize_t msg_senddata(fid_ep *ep, const void *buf, size_t len, void *, uint64_t data,
                     fi_addr_t dest, void *context) {
    return send_one<kLocked>(ep, buf, len, dest, context, handle_of(ep)->tx_op_flags() | FI_REMOTE_CQ_DATA, 0, data,
                   false, false);
}

template <bool kLocked>
ssize_t msg_injectdata(fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest) {
    return send_one<kLocked>(ep, buf, len, dest, nullptr, FI_REMOTE_CQ_DATA, 0, data, false, true);
}

// One receive buffer, posted without building a list (the common case).
template <bool kLocked>
ssize_t recv_one(fid_ep *fep, void *buf, size_t len, fi_addr_t src, void *context, uint64_t tag,
                 uint64_t ignore, bool tagged) {
    if (buf == nullptr && len != 0) return -FI_EINVAL;
    const uint64_t flags = handle_of(fep)->rx_op_flags();
    return with_data_path<kLocked>(fep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
        return dp.recv_buffer(buf, len, src, context, flags, tag, ignore, tagged);
    });
}

template <bool kLocked>
ssize_t msg_recv(fid_ep *ep, void *buf, size_t len, void *, fi_addr_t src, void *context) {
    return recv_one<kLocked>(ep, buf, len, src, context, 0, 0, false);
}

template <bool kLocked>
ssize_t msg_recvv(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t src,
                  void *context) {
    IovList list;
    if (const int rc = iov_list(*ep_of(ep), iov, count, list); rc != 0) return rc;
    return do_recv<kLocked>(ep, list, src, context, handle_of(ep)->rx_op_flags(), 0, 0, false);
}

template <bool kLocked>
ssize_t msg_recvmsg(fid_ep *ep, const fi_msg *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    if (flags & ~kMsgRecvFlags) return -FI_EBADFLAGS;
    IovList list;
    if (const int rc = iov_list(*ep_of(ep), msg->msg_iov, msg->iov_count, list); rc != 0) return rc;
    return do_recv<kLocked>(ep, list, msg->addr, msg->context, flags, 0, 0, false);
}

// ---- fi_tagged -----------------------------------------------------------------------------

template <bool kLocked>
ssize_t tag_send(fid_ep *ep, const void *buf, size_t len, void *, fi_addr_t dest, uint64_t tag,
                 void *context) {
    return send_one<kLocked>(ep, buf, len, dest, context, handle_of(ep)->tx_op_flags(), tag, 0, true, false);
}

template <bool kLocked>
ssize_t tag_sendv(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t dest,
                  uint64_t tag, void *context) {
    IovList list;
    if (const int rc = iov_list(*ep_of(ep), iov, count, list); rc != 0) return rc;
    return do_send<kLocked>(ep, list, dest, context, handle_of(ep)->tx_op_flags(), tag, 0, true, false);
}

template <bool kLocked>
ssize_t tag_sendmsg(fid_ep *ep, const fi_msg_tagged *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    if (flags & ~kSendFlags) return -FI_EBADFLAGS;
    IovList list;
    if (const int rc = iov_list(*ep_of(ep), msg->msg_iov, msg->iov_count, list); rc != 0) return rc;
    return do_send<kLocked>(ep, list, msg->addr, msg->context, flags, msg->tag, msg->data, true, false);
}

template <bool kLocked>
ssize_t tag_inject(fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag) {
    return send_one<kLocked>(ep, buf, len, dest, nullptr, 0, tag, 0, true, true);
}

template <bool kLocked>
ssize_t tag_senddata(fid_ep *ep, const void *buf, size_t len, void *, uint64_t data,
                     fi_addr_t dest, uint64_t tag, void *context) {
    return send_one<kLocked>(ep, buf, len, dest, context, handle_of(ep)->tx_op_flags() | FI_REMOTE_CQ_DATA, tag, data,
                   true, false);
}

template <bool kLocked>
ssize_t tag_injectdata(fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                       uint64_t tag) {
    return send_one<kLocked>(ep, buf, len, dest, nullptr, FI_REMOTE_CQ_DATA, tag, data, true, true);
}

template <bool kLocked>
ssize_t tag_recv(fid_ep *ep, void *buf, size_t len, void *, fi_addr_t src, uint64_t tag,
                 uint64_t ignore, void *context) {
    return recv_one<kLocked>(ep, buf, len, src, context, tag, ignore, true);
}

template <bool kLocked>
ssize_t tag_recvv(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t src,
                  uint64_t tag, uint64_t ignore, void *context) {
    IovList list;
    if (const int rc = iov_list(*ep_of(ep), iov, count, list); rc != 0) return rc;
    return do_recv<kLocked>(ep, list, src, context, handle_of(ep)->rx_op_flags(), tag, ignore, true);
}

template <bool kLocked>
ssize_t tag_recvmsg(fid_ep *ep, const fi_msg_tagged *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    if (flags & FI_MULTI_RECV) {
        if (!(ep_of(ep)->info().caps & FI_TAGGED_MULTI_RECV)) {
            UFI_LOG_INFO(Subsys::EpData,
                         "fi_trecvmsg: FI_MULTI_RECV on a tagged receive needs the "
                         "FI_TAGGED_MULTI_RECV capability");
            return -FI_EBADFLAGS;
        }
        if (flags & (FI_PEEK | FI_CLAIM | FI_DISCARD)) {
            UFI_LOG_INFO(Subsys::EpData,
                         "fi_trecvmsg: FI_MULTI_RECV does not go with FI_PEEK/FI_CLAIM/FI_DISCARD");
            return -FI_EBADFLAGS;
        }
    }
    if (flags & ~(kTaggedRecvFlags | FI_MULTI_RECV)) return -FI_EBADFLAGS;
    if ((flags & FI_DISCARD) && !(flags & (FI_PEEK | FI_CLAIM))) {
        UFI_LOG_INFO(Subsys::EpData, "fi_trecvmsg: FI_DISCARD needs FI_PEEK or FI_CLAIM");
        return -FI_EINVAL;
    }
    if (flags & FI_PEEK) {
        return with_data_path<kLocked>(ep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
            return dp.peek(msg->addr, msg->context, flags, msg->tag, msg->ignore);
        });
    }
    IovList list;
    if (!(flags & FI_DISCARD)) {
        if (const int rc = iov_list(*ep_of(ep), msg->msg_iov, msg->iov_count, list); rc != 0) {
            return rc;
        }
    }
    if (flags & FI_CLAIM) {
        return with_data_path<kLocked>(ep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
            return dp.claim(list, msg->context, flags);
        });
    }
    return do_recv<kLocked>(ep, list, msg->addr, msg->context, flags, msg->tag, msg->ignore, true);
}

}  // namespace

namespace {

// Locked (ThreadingPolicy::endpoints) and lock-free: fi_enable installs one.
template <bool kLocked>
fi_ops_msg msg_table = {
    .size = sizeof(fi_ops_msg),
    .recv = msg_recv<kLocked>,
    .recvv = msg_recvv<kLocked>,
    .recvmsg = msg_recvmsg<kLocked>,
    .send = msg_send<kLocked>,
    .sendv = msg_sendv<kLocked>,
    .sendmsg = msg_sendmsg<kLocked>,
    .inject = msg_inject<kLocked>,
    .senddata = msg_senddata<kLocked>,
    .injectdata = msg_injectdata<kLocked>,
};

}  // namespace

fi_ops_msg *msg_ops(bool locked) {
    return locked ? &msg_table<true> : &msg_table<false>;
}

namespace {

// Locked (ThreadingPolicy::endpoints) and lock-free: fi_enable installs one.
template <bool kLocked>
fi_ops_tagged tagged_table = {
    .size = sizeof(fi_ops_tagged),
    .recv = tag_recv<kLocked>,
    .recvv = tag_recvv<kLocked>,
    .recvmsg = tag_recvmsg<kLocked>,
    .send = tag_send<kLocked>,
    .sendv = tag_sendv<kLocked>,
    .sendmsg = tag_sendmsg<kLocked>,
    .inject = tag_inject<kLocked>,
    .senddata = tag_senddata<kLocked>,
    .injectdata = tag_injectdata<kLocked>,
};

}  // namespace

fi_ops_tagged *tagged_ops(bool locked) {
    return locked ? &tagged_table<true> : &tagged_table<false>;
}

}  // namespace ufi::api
