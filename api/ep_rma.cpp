// The endpoint's RMA table (fi_rma(3)): the C ABI checks (buffers, iov counts and limits,
// flags, keys), then runtime/proto's data path under the endpoint's worker lock. Keys are the
// target's 8-byte MR keys, or handles fi_mr_map_raw returned (their bundle names the key).
#include "api/ep_data.h"

#include "runtime/proto/fast_path.h"

#include "base/log/log.h"
#include "runtime/mr/binding.h"
#include "runtime/mr/mapped_keys.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <sys/uio.h>

#include <algorithm>

namespace ufi::api {

namespace {

using runtime::ep::Endpoint;
using runtime::proto::IovList;
using runtime::proto::SendOp;
using runtime::proto::wire::RmaSeg;
using Subsys = log::Subsys;

// Flags fi_writemsg and fi_readmsg accept (fi_rma(3)). Every write completes once the target
// acknowledged it, which satisfies every completion level; FI_FENCE holds because a peer's
// operations are handled in order. A read completes when its data is in the local buffer,
// which is what FI_TRANSMIT_COMPLETE and FI_DELIVERY_COMPLETE ask of it (MPICH's request-based
// RMA reads with FI_DELIVERY_COMPLETE).
constexpr uint64_t kWriteFlags = FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_FENCE |
                                 FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
                                 FI_DELIVERY_COMPLETE | FI_COMMIT_COMPLETE | FI_MORE;
constexpr uint64_t kReadFlags =
    FI_COMPLETION | FI_FENCE | FI_MORE | FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE;

// A target range [addr, addr + len) that fits the address space: one that wraps names no
// memory, and its length would make the data path's sums overflow.
bool target_range_ok(uint64_t addr, uint64_t len, size_t index) {
    uint64_t end = 0;
    if (!__builtin_add_overflow(addr, len, &end)) return true;
    UFI_LOG_INFO(Subsys::EpData, "RMA: target range {} ({:#x} + {:#x}) wraps the address space",
                 index, addr, len);
    return false;
}

template <bool kLocked>
ssize_t do_rma(fid_ep *fep, SendOp op, const IovList &local, const RmaSeg *segs, size_t nsegs,
               fi_addr_t peer, void *context, uint64_t flags, uint64_t data) {
    return with_data_path<kLocked>(fep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
        return dp.rma(op, local, segs, nsegs, peer, context, flags, data);
    });
}

// One buffer and one target range (fi_read, fi_write, fi_inject_write, fi_writedata, ...).
template <bool kLocked>
ssize_t rma_one(fid_ep *fep, SendOp op, const void *buf, size_t len, fi_addr_t peer,
                uint64_t addr, uint64_t key, void *context, uint64_t flags, uint64_t data) {
    if (buf == nullptr && len != 0) return -FI_EINVAL;
    RmaSeg seg{target_key(*ep_of(fep), key), addr, len};
    IovList local;
    local.set(buf, len);
    return do_rma<kLocked>(fep, op, local, &seg, 1, peer, context, flags, data);
}

template <bool kLocked>
ssize_t rma_vector(fid_ep *fep, SendOp op, const iovec *iov, size_t count, fi_addr_t peer,
                   uint64_t addr, uint64_t key, void *context, uint64_t flags) {
    IovList local;
    if (const int rc = iov_list(*ep_of(fep), iov, count, local); rc != 0) return rc;
    if (!target_range_ok(addr, local.total, 0)) return -FI_EINVAL;
    RmaSeg seg{target_key(*ep_of(fep), key), addr, local.total};
    return do_rma<kLocked>(fep, op, local, &seg, 1, peer, context, flags, 0);
}

template <bool kLocked>
ssize_t rma_msg(fid_ep *fep, SendOp op, const fi_msg_rma *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    const Endpoint &ep = *ep_of(fep);
    const size_t limit = std::min(ep.info().tx_attr->rma_iov_limit,
                                  runtime::proto::wire::kMaxRmaSegments);
    if (msg->rma_iov_count == 0 || msg->rma_iov_count > limit || msg->rma_iov == nullptr) {
        UFI_LOG_INFO(Subsys::EpData, "fi_{}msg: rma_iov_count {} (1 to {})",
                     op == SendOp::kWrite ? "write" : "read", msg->rma_iov_count, limit);
        return -FI_EINVAL;
    }
    IovList local;
    if (const int rc = iov_list(ep, msg->msg_iov, msg->iov_count, local); rc != 0) return rc;
    RmaSeg segs[runtime::proto::wire::kMaxRmaSegments];
    uint64_t remote_total = 0;
    for (size_t i = 0; i < msg->rma_iov_count; ++i) {
        segs[i].addr = msg->rma_iov[i].addr;
        segs[i].len = msg->rma_iov[i].len;
        if (!target_range_ok(segs[i].addr, segs[i].len, i) ||
            __builtin_add_overflow(remote_total, segs[i].len, &remote_total)) {
            UFI_LOG_INFO(Subsys::EpData, "fi_{}msg: rma_iov lengths overflow",
                         op == SendOp::kWrite ? "write" : "read");
            return -FI_EINVAL;
        }
        segs[i].key = target_key(ep, msg->rma_iov[i].key);
    }
    return do_rma<kLocked>(fep, op, local, segs, msg->rma_iov_count, msg->addr, msg->context, flags,
                  msg->data);
}

template <bool kLocked>
ssize_t rma_read(fid_ep *ep, void *buf, size_t len, void *, fi_addr_t src, uint64_t addr,
                 uint64_t key, void *context) {
    return rma_one<kLocked>(ep, SendOp::kRead, buf, len, src, addr, key, context, handle_of(ep)->tx_op_flags(),
                   0);
}

template <bool kLocked>
ssize_t rma_readv(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t src,
                  uint64_t addr, uint64_t key, void *context) {
    return rma_vector<kLocked>(ep, SendOp::kRead, iov, count, src, addr, key, context,
                      handle_of(ep)->tx_op_flags());
}

template <bool kLocked>
ssize_t rma_readmsg(fid_ep *ep, const fi_msg_rma *msg, uint64_t flags) {
    if (flags & ~kReadFlags) return -FI_EBADFLAGS;
    return rma_msg<kLocked>(ep, SendOp::kRead, msg, flags);
}

template <bool kLocked>
ssize_t rma_write(fid_ep *ep, const void *buf, size_t len, void *, fi_addr_t dest, uint64_t addr,
                  uint64_t key, void *context) {
    return rma_one<kLocked>(ep, SendOp::kWrite, buf, len, dest, addr, key, context,
                   handle_of(ep)->tx_op_flags(), 0);
}

template <bool kLocked>
ssize_t rma_writev(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t dest,
                   uint64_t addr, uint64_t key, void *context) {
    return rma_vector<kLocked>(ep, SendOp::kWrite, iov, count, dest, addr, key, context,
                      handle_of(ep)->tx_op_flags());
}

template <bool kLocked>
ssize_t rma_writemsg(fid_ep *ep, const fi_msg_rma *msg, uint64_t flags) {
    if (flags & ~kWriteFlags) return -FI_EBADFLAGS;
    return rma_msg<kLocked>(ep, SendOp::kWrite, msg, flags);
}

// fi_inject_write and fi_inject_writedata: straight to the data path's inline short write.
template <bool kLocked>
ssize_t inject_one(fid_ep *fep, const void *buf, size_t len, fi_addr_t dest, uint64_t addr,
                   uint64_t key, uint64_t flags, uint64_t data) {
    if (buf == nullptr && len != 0) return -FI_EINVAL;
    const uint64_t target = target_key(*ep_of(fep), key);
    return with_data_path<kLocked>(fep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
        return dp.inject_write(buf, len, dest, target, addr, flags, data);
    });
}

template <bool kLocked>
ssize_t rma_inject(fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t addr,
                   uint64_t key) {
    return inject_one<kLocked>(ep, buf, len, dest, addr, key, FI_INJECT, 0);
}

template <bool kLocked>
ssize_t rma_writedata(fid_ep *ep, const void *buf, size_t len, void *, uint64_t data,
                      fi_addr_t dest, uint64_t addr, uint64_t key, void *context) {
    return rma_one<kLocked>(ep, SendOp::kWrite, buf, len, dest, addr, key, context,
                   handle_of(ep)->tx_op_flags() | FI_REMOTE_CQ_DATA, data);
}

template <bool kLocked>
ssize_t rma_injectdata(fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                       uint64_t addr, uint64_t key) {
    return inject_one<kLocked>(ep, buf, len, dest, addr, key, FI_INJECT | FI_REMOTE_CQ_DATA, data);
}

}  // namespace

uint64_t target_key(const runtime::ep::Endpoint &ep, uint64_t key) {
    if (!runtime::mr::is_mapped_key(key)) return key;
    // A handle this domain mapped stands for the key it maps; any other key with the top bit
    // is the peer's own (requested keys may have it: MPICH's window keys do).
    const runtime::mr::MappedKey *m = runtime::mr::find_mapped_key(ep.domain(), key);
    return m != nullptr ? m->bundle.key : key;
}

namespace {

// Locked (ThreadingPolicy::endpoints) and lock-free: fi_enable installs one.
template <bool kLocked>
fi_ops_rma rma_table = {
    .size = sizeof(fi_ops_rma),
    .read = rma_read<kLocked>,
    .readv = rma_readv<kLocked>,
    .readmsg = rma_readmsg<kLocked>,
    .write = rma_write<kLocked>,
    .writev = rma_writev<kLocked>,
    .writemsg = rma_writemsg<kLocked>,
    .inject = rma_inject<kLocked>,
    .writedata = rma_writedata<kLocked>,
    .injectdata = rma_injectdata<kLocked>,
};

}  // namespace

fi_ops_rma *rma_ops(bool locked) {
    return locked ? &rma_table<true> : &rma_table<false>;
}

}  // namespace ufi::api
