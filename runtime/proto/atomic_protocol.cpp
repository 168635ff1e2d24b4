// Atomics over active messages, one protocol module (atomic_protocol.h).
#include "runtime/proto/atomic_protocol.h"

#include "base/log/log.h"
#include "runtime/proto/atomic_ops.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <cstring>
#include <mutex>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;
namespace tx = transports;

namespace {

struct AtomicArgs {
    wire::AtomicHdr h;
    const std::vector<wire::RmaSeg> *segs;
    const std::vector<uint8_t> *values;  // operand, then compare
};

size_t pack_atomic(void *dest, void *arg) {
    const auto *a = static_cast<const AtomicArgs *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, &a->h, sizeof a->h);
    size_t at = sizeof a->h;
    const size_t seg_bytes = a->segs->size() * sizeof(wire::RmaSeg);
    // (Fixed sizes for the one-segment, one-element case: copied inline, not by a libc call.)
    if (a->segs->size() == 1) std::memcpy(d + at, a->segs->data(), sizeof(wire::RmaSeg));
    else std::memcpy(d + at, a->segs->data(), seg_bytes);
    at += seg_bytes;
    if (!a->values->empty()) copy_bytes(d + at, a->values->data(), a->values->size());
    return at + a->values->size();
}

struct AnswerArgs {
    wire::RmaRespHdr h;
    const uint8_t *result;
    size_t len;
};

size_t pack_answer(void *dest, void *arg) {
    const auto *a = static_cast<const AnswerArgs *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, &a->h, sizeof a->h);
    if (a->len != 0) copy_bytes(d + sizeof a->h, a->result, a->len);
    return sizeof a->h + a->len;
}

// Whether the call carries operand values (FI_ATOMIC_READ does not).
bool has_operand(int op) {
    return op != FI_ATOMIC_READ;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Initiator

ssize_t AtomicProtocol::start(uint8_t kind, int op, int datatype, size_t count, const IovList &operand,
                         const IovList &compare, const IovList &result, const wire::RmaSeg *segs,
                         size_t nsegs, fi_addr_t dest, void *context, uint64_t flags,
                         uint64_t data, bool inject_call) noexcept {
    if (dp_.cfg_.datagrams) {
        UFI_LOG_INFO(Subsys::EpData, "fi_atomic: FI_EP_DGRAM endpoints have no atomics");
        return -FI_ENOSYS;
    }
    dp_.rx_slip_.on_send();  // (RxSlip: the endpoint talks, not only listens)
    const auto k = static_cast<atomics::Kind>(kind);
    if (!atomics::valid(op, datatype, k)) return -FI_EOPNOTSUPP;
    const size_t size = atomics::element_size(datatype);
    const size_t bytes = count * size;
    if (count == 0 || count > atomics::kMaxAtomicBytes / size || nsegs == 0 ||
        nsegs > wire::kMaxRmaSegments) {
        return -FI_EINVAL;
    }
    // FI_OPT_MAX_ATOMIC_SIZE / FI_OPT_INJECT_ATOMIC_SIZE (the attributes' by default).
    if (bytes > dp_.cfg_.send_max_atomic ||
        ((flags & FI_INJECT) && bytes > dp_.cfg_.inject_atomic_size)) {
        return -FI_EMSGSIZE;
    }
    uint64_t remote = 0;
    for (size_t i = 0; i < nsegs; ++i) remote += segs[i].len;
    const bool fetch = k != atomics::Kind::kWrite;
    if (remote != bytes || (has_operand(op) && operand.total != bytes) ||
        (k == atomics::Kind::kCompare && compare.total != bytes) || (fetch && result.total != bytes)) {
        UFI_LOG_INFO(Subsys::EpData,
                     "atomic: {} elements of {} B, but the buffers hold {} / {} / {} B and the "
                     "target {} B",
                     count, size, operand.total, compare.total, result.total, remote);
        return -FI_EINVAL;
    }
    Peer *p = nullptr;
    ssize_t rc = 0;
    SendReq *r = dp_.new_op(dest, p, rc);
    if (r == nullptr) return rc;
    try {
        r->rma.assign(segs, segs + nsegs);
        // The values are copied at the call (the message is small): the caller's buffers are
        // free when it returns, as with FI_INJECT.
        const size_t values = (has_operand(op) ? bytes : 0) + (k == atomics::Kind::kCompare ? bytes : 0);
        r->copy.resize(values);
        if (has_operand(op)) operand.copy_out(0, r->copy.data(), bytes);
        if (k == atomics::Kind::kCompare) compare.copy_out(0, r->copy.data() + bytes, bytes);
    } catch (const std::bad_alloc &) {
        r->rma.clear();
        r->copy.clear();
        dp_.send_pool_.put(r);
        return -FI_ENOMEM;
    }
    r->iov.set(nullptr, 0);
    r->iov.total = bytes;  // what an error completion reports as its length
    r->result.assign(result);
    r->begin(SendOp::kAtomic, p->local_idx, context, (flags & FI_FENCE) != 0);
    r->atomic_op = static_cast<uint8_t>(op);
    r->atomic_datatype = static_cast<uint8_t>(datatype);
    r->atomic_kind = kind;
    r->atomic_count = static_cast<uint32_t>(count);
    r->cq_flags = FI_ATOMIC | (fetch ? FI_READ : FI_WRITE);
    // fi_inject_atomic writes no completion; fi_atomicmsg & co. with FI_INJECT still do (the
    // fetching ones have no other way to say their result is there).
    r->completion = !inject_call && (!dp_.cfg_.tx_selective || (flags & FI_COMPLETION));
    r->rma_flags = (flags & FI_REMOTE_CQ_DATA) ? uint32_t{wire::kRmaHasData} : 0u;
    r->rma_data = data;
    return dp_.submit(*p, r);
}

tx::Status AtomicProtocol::push(Peer &p, SendReq &r) noexcept {
    if (r.rndv_slot == 0 && !dp_.zcopy_.take_send_slot(r)) return transports::Status::kNoMemory;
    AtomicArgs a{{p.remote_idx, r.rma_flags, r.rndv_slot, r.rma_data, r.atomic_count, r.atomic_op,
                  r.atomic_datatype, r.atomic_kind, static_cast<uint8_t>(r.rma.size())},
                 &r.rma,
                 &r.copy};
    const size_t len = sizeof a.h + r.rma.size() * sizeof(wire::RmaSeg) + r.copy.size();
    // (atomic() bounds the values to kMaxAtomicBytes: far below any lane's bcopy size)
    if (len > p.lane.max_bcopy()) return transports::Status::kExceedsLimit;
    // Over `self` the answer arrives inside the send call (finish_send_rndv() marks it done).
    r.announcing = true;
    r.started = true;  // before the call: over `self` the answer arrives inside it
    // (A one-element atomic with its compare value, 32 + 24 + 2 x 16 bytes, goes short.)
    const tx::Status s = dp_.send_packed(p, wire::kAmAtomic, pack_atomic, &a, len);
    r.announcing = false;
    if (s != tx::kOk) {
        r.started = false;
        return s;
    }
    return r.done ? tx::kOk : kHandedOff;
}

void AtomicProtocol::handle_answer(const uint8_t *data, size_t length) noexcept {
    wire::RmaRespHdr h;
    SendReq *r = dp_.answered(data, length, SendOp::kAtomic, h);
    if (r == nullptr) return;
    const size_t len = length - sizeof h;
    if (h.status != 0) {
        r->status = status_from_wire(h.status);
    } else if (len != r->result.total) {
        ++dp_.stats_.dropped_malformed;
        return;
    } else if (len != 0) {
        r->result.copy_in(0, data + sizeof h, len);
    }
    dp_.zcopy_.finish_send_rndv(r);
}

// ---------------------------------------------------------------------------------------
// Target

void AtomicProtocol::send_answer(Peer &p, uint64_t id, int status, const uint8_t *result,
                                  size_t len) noexcept {
    if (p.state == PeerState::kFailed) return;
    AnswerArgs a{{p.remote_idx, status, id, 0}, result, len};
    if (p.ctrl.empty()) {
        const tx::Status s = dp_.send_packed(p, wire::kAmAtomicResp, pack_answer, &a, sizeof a.h + len);
        if (s == tx::kOk) return;
        if (s != tx::kNoResource) {
            dp_.fail_peer(p, transports::fi_errno_of(s));
            return;
        }
    }
    // No room now: queued, in order with the other control messages.
    ControlMsg *m = dp_.ctrl_.make(wire::kAmAtomicResp, sizeof a.h + len);
    if (m == nullptr) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: an atomic's answer is lost");
        return;
    }
    pack_answer(m->bytes.data() + 1, &a);
    dp_.ctrl_.send(p, m);
}

void AtomicProtocol::handle_request(const uint8_t *data, size_t length) noexcept {
    wire::AtomicHdr h;
    if (length < sizeof h) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    if (!dp_.from_connected(h.src, wire::kAmAtomic, data, length)) return;
    Peer &p = *dp_.peers_[h.src];
    const auto kind = static_cast<atomics::Kind>(h.kind);
    const size_t size = atomics::element_size(h.datatype);
    const size_t seg_bytes = size_t{h.segments} * sizeof(wire::RmaSeg);
    if (h.kind > uint8_t(atomics::Kind::kCompare) || !atomics::valid(h.op, h.datatype, kind) ||
        h.count == 0 || h.count > atomics::kMaxAtomicBytes / size || h.segments == 0 ||
        h.segments > wire::kMaxRmaSegments || length < sizeof h + seg_bytes) {
        ++dp_.stats_.dropped_malformed;
        return send_answer(p, h.id, -FI_EINVAL, nullptr, 0);
    }
    const size_t bytes = size_t{h.count} * size;
    const bool compare = kind == atomics::Kind::kCompare;
    const size_t values = (has_operand(h.op) ? bytes : 0) + (compare ? bytes : 0);
    if (length != sizeof h + seg_bytes + values) {
        ++dp_.stats_.dropped_malformed;
        return send_answer(p, h.id, -FI_EINVAL, nullptr, 0);
    }
    wire::RmaSeg segs[wire::kMaxRmaSegments];
    std::memcpy(segs, data + sizeof h, seg_bytes);
    const uint8_t *operand = has_operand(h.op) ? data + sizeof h + seg_bytes : nullptr;
    const uint8_t *cmp = compare ? data + sizeof h + seg_bytes + (has_operand(h.op) ? bytes : 0) : nullptr;
    // FI_ATOMIC_READ only reads; fetching ops read and write; fi_atomic only writes.
    const bool writes = h.op != FI_ATOMIC_READ;
    const bool reads = kind != atomics::Kind::kWrite;
    const uint64_t access = (writes ? FI_REMOTE_WRITE : 0) | (reads ? FI_REMOTE_READ : 0);
    IovList where;
    // (One segment, the usual case, takes the single-range check.)
    const int status = h.segments == 1 && segs[0].len == bytes
                           ? dp_.target_.check_one(p.key_handle, segs[0], access, where)
                           : dp_.target_.check(p.key_handle, segs, h.segments, bytes, access, true, where);
    if (status != 0) {
        ++dp_.stats_.rma_refused;
        return send_answer(p, h.id, status, nullptr, 0);
    }
    // Gathered, applied and written back under the lock (an element may straddle two of the
    // MR's buffers).
    uint8_t value[atomics::kMaxAtomicBytes];
    uint8_t old[atomics::kMaxAtomicBytes];
    {
        std::lock_guard<std::mutex> lock(atomics::atomic_lock());
        where.copy_out(0, value, bytes);
        atomics::apply(h.op, h.datatype, h.count, value, operand, cmp, reads ? old : nullptr);
        if (writes) where.copy_in(0, value, bytes);
    }
    dp_.target_.count(segs, h.segments, bytes, access);
    if (writes) dp_.remote_cq_data(p, h.flags, h.data, bytes);
    send_answer(p, h.id, 0, reads ? old : nullptr, reads ? bytes : 0);
}

std::span<const MessageHandler> AtomicProtocol::handlers() noexcept {
    static constexpr MessageHandler kRows[] = {
        DataPath::module_row<&DataPath::atomics_, &AtomicProtocol::handle_request, true>(
            wire::kAmAtomic),
        DataPath::module_row<&DataPath::atomics_, &AtomicProtocol::handle_answer, false>(
            wire::kAmAtomicResp),
    };
    return kRows;
}

}  // namespace ufi::runtime::proto
