// The endpoint's atomic table (fi_atomic(3)) and fi_query_atomic: the C ABI checks (buffers,
// counts, flags, keys), then runtime/proto's data path under the endpoint's worker lock. Every
// op on every datatype libfabric defines it for is offered (runtime/proto/atomic_ops.h), each
// executed by the target.
#include "api/ep_data.h"

#include "base/log/log.h"
#include "runtime/mr/binding.h"
#include "runtime/mr/mapped_keys.h"
#include "runtime/proto/atomic_ops.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#include <algorithm>

namespace ufi::api {

namespace {

using runtime::ep::Endpoint;
using runtime::proto::IovList;
using runtime::proto::wire::RmaSeg;
namespace atomics = runtime::proto::atomics;
using Subsys = log::Subsys;

constexpr auto kWrite = static_cast<uint8_t>(atomics::Kind::kWrite);
constexpr auto kFetch = static_cast<uint8_t>(atomics::Kind::kFetch);
constexpr auto kCompare = static_cast<uint8_t>(atomics::Kind::kCompare);

// Flags fi_atomicmsg, fi_fetch_atomicmsg and fi_compare_atomicmsg accept.
constexpr uint64_t kAtomicFlags = FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_FENCE |
                                  FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
                                  FI_DELIVERY_COMPLETE | FI_COMMIT_COMPLETE | FI_MORE;

// The elements one operation may carry.
size_t max_count(int datatype) {
    const size_t size = atomics::element_size(datatype);
    return size == 0 ? 0 : atomics::kMaxAtomicBytes / size;
}

// An fi_ioc list as bytes (count elements of `size` each); -FI_EINVAL when malformed.
int ioc_list(const fi_ioc *ioc, size_t n, size_t size, IovList &out) {
    out.count = 0;
    out.total = 0;
    if (n > runtime::proto::kMaxIov || (ioc == nullptr && n != 0)) return -FI_EINVAL;
    for (size_t i = 0; i < n; ++i) {
        if (ioc[i].count == 0) continue;
        if (ioc[i].addr == nullptr || ioc[i].count > atomics::kMaxAtomicBytes) return -FI_EINVAL;
        out.v[out.count++] = {static_cast<uint8_t *>(ioc[i].addr), ioc[i].count * size};
        out.total += ioc[i].count * size;
    }
    return 0;
}

struct Call {
    uint8_t kind = kWrite;
    int op = 0;
    int datatype = 0;
    IovList operand, compare, result;
    RmaSeg segs[runtime::proto::wire::kMaxRmaSegments];
    size_t nsegs = 0;
    fi_addr_t dest = FI_ADDR_UNSPEC;
    void *context = nullptr;
    uint64_t flags = 0;
    uint64_t data = 0;
    bool inject_call = false;  // fi_inject_atomic: no completion
};

template <bool kLocked>
ssize_t run(fid_ep *fep, Call &c) {
    const size_t size = atomics::element_size(c.datatype);
    if (size == 0) return -FI_EINVAL;
    if (!atomics::valid(c.op, c.datatype, static_cast<atomics::Kind>(c.kind))) return -FI_EOPNOTSUPP;
    // The element count the call names: its operand's (its result's for FI_ATOMIC_READ).
    const size_t bytes = c.op == FI_ATOMIC_READ ? c.result.total : c.operand.total;
    return with_data_path<kLocked>(fep, [&](Endpoint &, runtime::proto::DataPath &dp) -> ssize_t {
        return dp.atomic(c.kind, c.op, c.datatype, bytes / size, c.operand, c.compare, c.result,
                         c.segs, c.nsegs, c.dest, c.context, c.flags, c.data, c.inject_call);
    });
}

// One buffer and one target range.
template <bool kLocked>
ssize_t one(fid_ep *ep, uint8_t kind, const void *buf, size_t count, const void *compare,
            void *result, fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype datatype,
            fi_op op, void *context, uint64_t flags, bool inject_call = false) {
    Call c;
    c.kind = kind;
    c.op = op;
    c.datatype = datatype;
    const size_t size = atomics::element_size(datatype);
    if (size == 0) return -FI_EINVAL;
    if (count == 0 || count > max_count(datatype)) return -FI_EINVAL;
    if (op != FI_ATOMIC_READ) {
        if (buf == nullptr) return -FI_EINVAL;
        c.operand.set(buf, count * size);
    }
    if (kind == kCompare) {
        if (compare == nullptr) return -FI_EINVAL;
        c.compare.set(compare, count * size);
    }
    if (kind != kWrite) {
        if (result == nullptr) return -FI_EINVAL;
        c.result.set(result, count * size);
    }
    c.segs[0].key = target_key(*ep_of(ep), key);
    c.segs[0].addr = addr;
    c.segs[0].len = count * size;
    c.nsegs = 1;
    c.dest = dest;
    c.context = context;
    c.flags = flags;
    c.inject_call = inject_call;
    return run<kLocked>(ep, c);
}

// Vectors: the operand list, the target range(s), and the result and compare lists.
template <bool kLocked>
ssize_t vec(fid_ep *ep, uint8_t kind, const fi_ioc *iov, size_t count, const fi_ioc *comparev,
            size_t compare_count, fi_ioc *resultv, size_t result_count, fi_addr_t dest,
            const fi_rma_ioc *rma, size_t rma_count, fi_datatype datatype, fi_op op,
            void *context, uint64_t flags, uint64_t data) {
    Call c;
    c.kind = kind;
    c.op = op;
    c.datatype = datatype;
    const size_t size = atomics::element_size(datatype);
    if (size == 0) return -FI_EINVAL;
    if ((op != FI_ATOMIC_READ && ioc_list(iov, count, size, c.operand) != 0) ||
        (kind == kCompare && ioc_list(comparev, compare_count, size, c.compare) != 0) ||
        (kind != kWrite && ioc_list(resultv, result_count, size, c.result) != 0)) {
        return -FI_EINVAL;
    }
    if (rma == nullptr || rma_count == 0 || rma_count > runtime::proto::wire::kMaxRmaSegments) {
        return -FI_EINVAL;
    }
    for (size_t i = 0; i < rma_count; ++i) {
        // A count beyond what one operation carries would make count x size wrap (2^61 + 1
        // elements of 8 bytes are 8 bytes): refused here, before anything is sent.
        uint64_t end = 0;
        if (rma[i].count > max_count(datatype) ||
            __builtin_add_overflow(rma[i].addr, rma[i].count * size, &end)) {
            UFI_LOG_INFO(Subsys::EpData,
                         "atomic: rma_iov[{}] names {} elements at {:#x} (at most {} of {} B, "
                         "within the address space)",
                         i, rma[i].count, rma[i].addr, max_count(datatype), size);
            return -FI_EINVAL;
        }
        c.segs[i].key = target_key(*ep_of(ep), rma[i].key);
        c.segs[i].addr = rma[i].addr;
        c.segs[i].len = rma[i].count * size;
    }
    c.nsegs = rma_count;
    c.dest = dest;
    c.context = context;
    c.flags = flags;
    c.data = data;
    return run<kLocked>(ep, c);
}

template <bool kLocked>
ssize_t atomic_write(fid_ep *ep, const void *buf, size_t count, void *, fi_addr_t dest,
                     uint64_t addr, uint64_t key, fi_datatype datatype, fi_op op, void *context) {
    return one<kLocked>(ep, kWrite, buf, count, nullptr, nullptr, dest, addr, key, datatype, op, context,
               handle_of(ep)->tx_op_flags());
}

template <bool kLocked>
ssize_t atomic_writev(fid_ep *ep, const fi_ioc *iov, void **, size_t count, fi_addr_t dest,
                      uint64_t addr, uint64_t key, fi_datatype datatype, fi_op op, void *context) {
    size_t elements = 0;
    for (size_t i = 0; iov != nullptr && i < count; ++i) elements += iov[i].count;
    const fi_rma_ioc rma{addr, elements, key};
    return vec<kLocked>(ep, kWrite, iov, count, nullptr, 0, nullptr, 0, dest, &rma, 1, datatype, op,
               context, handle_of(ep)->tx_op_flags(), 0);
}

template <bool kLocked>
ssize_t atomic_writemsg(fid_ep *ep, const fi_msg_atomic *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    if (flags & ~kAtomicFlags) return -FI_EBADFLAGS;
    return vec<kLocked>(ep, kWrite, msg->msg_iov, msg->iov_count, nullptr, 0, nullptr, 0, msg->addr,
               msg->rma_iov, msg->rma_iov_count, msg->datatype, msg->op, msg->context, flags,
               msg->data);
}

template <bool kLocked>
ssize_t atomic_inject(fid_ep *ep, const void *buf, size_t count, fi_addr_t dest, uint64_t addr,
                      uint64_t key, fi_datatype datatype, fi_op op) {
    return one<kLocked>(ep, kWrite, buf, count, nullptr, nullptr, dest, addr, key, datatype, op, nullptr,
               FI_INJECT, true);
}

template <bool kLocked>
ssize_t atomic_readwrite(fid_ep *ep, const void *buf, size_t count, void *, void *result, void *,
                         fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype datatype,
                         fi_op op, void *context) {
    return one<kLocked>(ep, kFetch, buf, count, nullptr, result, dest, addr, key, datatype, op, context,
               handle_of(ep)->tx_op_flags());
}

template <bool kLocked>
ssize_t atomic_readwritev(fid_ep *ep, const fi_ioc *iov, void **, size_t count, fi_ioc *resultv,
                          void **, size_t result_count, fi_addr_t dest, uint64_t addr,
                          uint64_t key, fi_datatype datatype, fi_op op, void *context) {
    size_t elements = 0;
    const fi_ioc *counted = op == FI_ATOMIC_READ ? resultv : iov;
    const size_t n = op == FI_ATOMIC_READ ? result_count : count;
    for (size_t i = 0; counted != nullptr && i < n; ++i) elements += counted[i].count;
    const fi_rma_ioc rma{addr, elements, key};
    return vec<kLocked>(ep, kFetch, iov, count, nullptr, 0, resultv, result_count, dest, &rma, 1, datatype,
               op, context, handle_of(ep)->tx_op_flags(), 0);
}

template <bool kLocked>
ssize_t atomic_readwritemsg(fid_ep *ep, const fi_msg_atomic *msg, fi_ioc *resultv, void **,
                            size_t result_count, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    if (flags & ~kAtomicFlags) return -FI_EBADFLAGS;
    return vec<kLocked>(ep, kFetch, msg->msg_iov, msg->iov_count, nullptr, 0, resultv, result_count,
               msg->addr, msg->rma_iov, msg->rma_iov_count, msg->datatype, msg->op, msg->context,
               flags, msg->data);
}

template <bool kLocked>
ssize_t atomic_compwrite(fid_ep *ep, const void *buf, size_t count, void *, const void *compare,
                         void *, void *result, void *, fi_addr_t dest, uint64_t addr, uint64_t key,
                         fi_datatype datatype, fi_op op, void *context) {
    return one<kLocked>(ep, kCompare, buf, count, compare, result, dest, addr, key, datatype, op, context,
               handle_of(ep)->tx_op_flags());
}

template <bool kLocked>
ssize_t atomic_compwritev(fid_ep *ep, const fi_ioc *iov, void **, size_t count,
                          const fi_ioc *comparev, void **, size_t compare_count, fi_ioc *resultv,
                          void **, size_t result_count, fi_addr_t dest, uint64_t addr,
                          uint64_t key, fi_datatype datatype, fi_op op, void *context) {
    size_t elements = 0;
    for (size_t i = 0; iov != nullptr && i < count; ++i) elements += iov[i].count;
    const fi_rma_ioc rma{addr, elements, key};
    return vec<kLocked>(ep, kCompare, iov, count, comparev, compare_count, resultv, result_count, dest,
               &rma, 1, datatype, op, context, handle_of(ep)->tx_op_flags(), 0);
}

template <bool kLocked>
ssize_t atomic_compwritemsg(fid_ep *ep, const fi_msg_atomic *msg, const fi_ioc *comparev, void **,
                            size_t compare_count, fi_ioc *resultv, void **, size_t result_count,
                            uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    if (flags & ~kAtomicFlags) return -FI_EBADFLAGS;
    return vec<kLocked>(ep, kCompare, msg->msg_iov, msg->iov_count, comparev, compare_count, resultv,
               result_count, msg->addr, msg->rma_iov, msg->rma_iov_count, msg->datatype, msg->op,
               msg->context, flags, msg->data);
}

int valid_for(uint8_t kind, fi_datatype datatype, fi_op op, size_t *count) {
    if (count == nullptr) return -FI_EINVAL;
    if (!atomics::valid(op, datatype, static_cast<atomics::Kind>(kind))) return -FI_EOPNOTSUPP;
    *count = max_count(datatype);
    return 0;
}

int atomic_writevalid(fid_ep *, fi_datatype datatype, fi_op op, size_t *count) {
    return valid_for(kWrite, datatype, op, count);
}
int atomic_readwritevalid(fid_ep *, fi_datatype datatype, fi_op op, size_t *count) {
    return valid_for(kFetch, datatype, op, count);
}
int atomic_compwritevalid(fid_ep *, fi_datatype datatype, fi_op op, size_t *count) {
    return valid_for(kCompare, datatype, op, count);
}

}  // namespace

int query_atomic(fid_domain *, fi_datatype datatype, fi_op op, fi_atomic_attr *attr,
                 uint64_t flags) {
    if (attr == nullptr) return -FI_EINVAL;
    if (flags & ~(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC)) return -FI_EBADFLAGS;
    if ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC)) return -FI_EINVAL;
    const uint8_t kind = (flags & FI_COMPARE_ATOMIC) ? kCompare : (flags & FI_FETCH_ATOMIC) ? kFetch : kWrite;
    if (!atomics::valid(op, datatype, static_cast<atomics::Kind>(kind))) return -FI_EOPNOTSUPP;
    attr->size = atomics::element_size(datatype);
    attr->count = max_count(datatype);
    return 0;
}

namespace {

// Locked (ThreadingPolicy::endpoints) and lock-free: fi_enable installs one.
template <bool kLocked>
fi_ops_atomic atomic_table = {
    .size = sizeof(fi_ops_atomic),
    .write = atomic_write<kLocked>,
    .writev = atomic_writev<kLocked>,
    .writemsg = atomic_writemsg<kLocked>,
    .inject = atomic_inject<kLocked>,
    .readwrite = atomic_readwrite<kLocked>,
    .readwritev = atomic_readwritev<kLocked>,
    .readwritemsg = atomic_readwritemsg<kLocked>,
    .compwrite = atomic_compwrite<kLocked>,
    .compwritev = atomic_compwritev<kLocked>,
    .compwritemsg = atomic_compwritemsg<kLocked>,
    .writevalid = atomic_writevalid,
    .readwritevalid = atomic_readwritevalid,
    .compwritevalid = atomic_compwritevalid,
};

}  // namespace

fi_ops_atomic *atomic_ops(bool locked) {
    return locked ? &atomic_table<true> : &atomic_table<false>;
}

}  // namespace ufi::api
