// RMA over active messages, one protocol module (rma_protocol.h).
#include "runtime/proto/rma_protocol.h"

#include "base/log/log.h"
#include "runtime/cntr/binding.h"
#include "runtime/cq/cq.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/sched.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;
namespace tx = transports;

namespace {

// One RMA_WRITE fragment or RMA_READ_REQ: header, segments, `len` bytes of `iov` from `at`.
struct RequestFrag {
    wire::RmaHdr h;
    const std::vector<wire::RmaSeg> *segs;
    const IovList *iov;
    size_t at;
    size_t len;
};

size_t pack_request(void *dest, void *arg) {
    const auto *a = static_cast<const RequestFrag *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, &a->h, sizeof a->h);
    const size_t seg_bytes = a->segs->size() * sizeof(wire::RmaSeg);
    std::memcpy(d + sizeof a->h, a->segs->data(), seg_bytes);
    if (a->len != 0) a->iov->copy_out(a->at, d + sizeof a->h + seg_bytes, a->len);
    return sizeof a->h + seg_bytes + a->len;
}

struct ResponseFrag {
    wire::RmaRespHdr h;
    const IovList *iov;
    size_t len;
};

size_t pack_response(void *dest, void *arg) {
    const auto *a = static_cast<const ResponseFrag *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, &a->h, sizeof a->h);
    if (a->len != 0) a->iov->copy_out(a->h.offset, d + sizeof a->h, a->len);
    return sizeof a->h + a->len;
}

// An RMA_WRITE or RMA_READ_REQ taken apart; false when malformed.
struct RequestView {
    wire::RmaHdr h;
    wire::RmaSeg segs[wire::kMaxRmaSegments];
    const uint8_t *payload;
    size_t len;
};

bool parse_request(const uint8_t *data, size_t length, RequestView &v) {
    if (length < sizeof v.h) return false;
    std::memcpy(&v.h, data, sizeof v.h);
    if (v.h.segments == 0 || v.h.segments > wire::kMaxRmaSegments) return false;
    const size_t seg_bytes = v.h.segments * sizeof(wire::RmaSeg);
    if (length - sizeof v.h < seg_bytes) return false;
    std::memcpy(v.segs, data + sizeof v.h, seg_bytes);
    v.payload = data + sizeof v.h + seg_bytes;
    v.len = length - sizeof v.h - seg_bytes;
    // Zero copy: the payload names the initiator's buffers (RmaZcopyProtocol::start checks it).
    if (v.h.flags & wire::kRmaZcopy) return v.h.offset == 0;
    return v.h.offset <= v.h.total && v.len <= v.h.total - v.h.offset;
}

}  // namespace

ssize_t RmaProtocol::start(SendOp op, const IovList &local, const wire::RmaSeg *segs, size_t nsegs,
                      fi_addr_t dest, void *context, uint64_t flags, uint64_t data,
                      bool inject_call) noexcept {
    if (dp_.cfg_.datagrams) {
        UFI_LOG_INFO(Subsys::EpData, "fi_read/fi_write: FI_EP_DGRAM endpoints have no RMA");
        return -FI_ENOSYS;
    }
    dp_.rx_slip_.on_send();  // (RxSlip: the endpoint talks, not only listens)
    const bool write = op == SendOp::kWrite;
    if (nsegs == 0 || nsegs > wire::kMaxRmaSegments) return -FI_EINVAL;
    uint64_t remote_total = 0;
    bool wrapped = false;
    for (size_t i = 0; i < nsegs; ++i) {
        wrapped |= __builtin_add_overflow(remote_total, segs[i].len, &remote_total);
    }
    if (wrapped || remote_total != local.total) {
        UFI_LOG_INFO(Subsys::EpData, "fi_{}: {} local bytes for {} remote ones",
                     write ? "write" : "read", local.total, remote_total);
        return -FI_EINVAL;
    }
    if (local.total > dp_.cfg_.max_msg_size || local.total > dp_.cfg_.send_max_rma) return -FI_EMSGSIZE;
    if ((flags & FI_INJECT) && (!write || local.total > dp_.cfg_.inject_rma_size)) return -FI_EMSGSIZE;
    // fi_inject_write* write no completion; fi_writemsg with FI_INJECT still does (fi_rma(3):
    // FI_INJECT only frees the buffer at once).
    const bool completion = !inject_call && (!dp_.cfg_.tx_selective || (flags & FI_COMPLETION));
    if (write && nsegs == 1 && local.count <= 1 && (flags & FI_INJECT) && !completion) {
        // The common small put (shmem_p, a window's word): no record (fi_inject_write comes
        // straight to inject_write; fi_writemsg with FI_INJECT and the like come here).
        Peer *to = dp_.peers_.for_addr(dest);
        if (to != nullptr && write_untracked(*to, local.count == 1 ? local.v[0].base : nullptr,
                                             local.total, segs[0].key, segs[0].addr, flags, data)) {
            return 0;
        }
    }
    Peer *p = nullptr;
    ssize_t rc = 0;
    SendReq *r = dp_.new_op(dest, p, rc);
    if (r == nullptr) return rc;
    try {
        r->rma.assign(segs, segs + nsegs);
        r->take_buffers(local, (flags & FI_INJECT) != 0);
    } catch (const std::bad_alloc &) {
        r->rma.clear();
        r->copy.clear();
        dp_.send_pool_.put(r);
        return -FI_ENOMEM;
    }
    r->begin(op, p->local_idx, context, (flags & FI_FENCE) != 0);
    r->cq_flags = FI_RMA | (write ? FI_WRITE : FI_READ);
    r->completion = completion;
    r->rma_flags = write && (flags & FI_REMOTE_CQ_DATA) ? uint32_t{wire::kRmaHasData} : 0u;
    r->rma_data = data;
    r->rma_received = 0;
    r->injected = (flags & FI_INJECT) != 0;
    return dp_.submit(*p, r);
}

tx::Status RmaProtocol::send_write_short(Peer &p, uint64_t id, const wire::RmaSeg &seg,
                                      const IovList &local, uint32_t flags,
                                      uint64_t data) noexcept {
    uint8_t staged[kStagedWriteShort];
    size_t n = stage_write_short(staged, p.remote_idx, flags, id, seg.key, seg.addr, data);
    local.copy_out(0, staged + n, local.total);
    n += local.total;
    return dp_.send_staged(p, wire::kAmRmaWriteShort, staged, n);
}

void RmaProtocol::finish_untracked_write(Peer &p, uint64_t len, int error) noexcept {
    --p.untracked_writes;
    --p.handed_off;
    --p.rma_handed_off;
    dp_.refresh_eager_gate(p);
    --dp_.tx_outstanding_;
    if (error != 0 && dp_.cfg_.tx_cq != nullptr) {  // injected: only an error is reported
        Completion c{};
        c.cq = dp_.cfg_.tx_cq;
        c.flags = FI_RMA | FI_WRITE;
        c.len = len;
        c.src = FI_ADDR_NOTAVAIL;
        c.err = -error;
        dp_.completions_.write(c);
    }
    if (dp_.cfg_.write_cntr != nullptr) {
        if (error == 0) cntr::on_completion(dp_.cfg_.write_cntr, len);
        else cntr::on_error(dp_.cfg_.write_cntr);
    }
}

tx::Status RmaProtocol::push(Peer &p, SendReq &r) noexcept {
    const size_t total = r.iov.total;
    if (r.op == SendOp::kReadResp) {
        const size_t room = p.lane.max_bcopy() - sizeof(wire::RmaRespHdr);
        while (!r.started || r.offset < total) {
            ResponseFrag a{{p.remote_idx, 0, r.peer_id, r.offset}, &r.iov,
                           std::min(total - r.offset, room)};
            const tx::Status s =
                status_of_bcopy(p.lane.send_bcopy(wire::kAmRmaReadResp, pack_response, &a));
            if (s != tx::kOk) return s;
            r.started = true;
            r.offset += a.len;
        }
        return tx::kOk;
    }
    const size_t hdr_len = sizeof(wire::RmaHdr) + r.rma.size() * sizeof(wire::RmaSeg);
    if (p.lane.max_bcopy() <= hdr_len) return transports::Status::kUnsupported;
    if (r.rndv_slot == 0 && !dp_.zcopy_.take_send_slot(r)) return transports::Status::kNoMemory;
    // Over `self` the target's answer arrives inside the send call: it must not finish r
    // under us (dp_.zcopy_.finish_send_rndv() marks it done instead).
    r.announcing = true;
    tx::Status s = tx::kOk;
    // The request is marked sent before the call: over `self` the answer arrives inside it.
    if (!r.started && total != 0 && dp_.rma_zcopy_.choose(p, r)) {
        r.started = true;
        r.offset = total;
        s = dp_.rma_zcopy_.send(p, r);
        r.announcing = false;
        if (s != tx::kOk) {
            r.started = false;
            r.offset = 0;
            return s;
        }
        ++dp_.stats_.rma_zcopy;
        return r.done ? tx::kOk : kHandedOff;
    }
    if (r.op == SendOp::kWrite && !r.started && r.rma.size() == 1 &&
        fits_write_short(p, total, (r.rma_flags & wire::kRmaHasData) != 0)) {
        r.started = true;
        r.offset = total;
        s = send_write_short(p, r.rndv_slot, r.rma[0], r.iov, r.rma_flags, r.rma_data);
        r.announcing = false;
        if (s != tx::kOk) {
            r.started = false;
            r.offset = 0;
            return s;
        }
        return r.done ? tx::kOk : kHandedOff;
    }
    const wire::RmaHdr base{p.remote_idx,
                            r.rma_flags,
                            r.rndv_slot,
                            total,
                            0,
                            r.rma_data,
                            static_cast<uint32_t>(r.rma.size()),
                            0};
    if (r.op == SendOp::kRead) {
        if (!r.started) {
            RequestFrag a{base, &r.rma, &r.iov, 0, 0};
            r.started = true;
            s = status_of_bcopy(p.lane.send_bcopy(wire::kAmRmaReadReq, pack_request, &a));
            if (s != tx::kOk) r.started = false;
        }
    } else {
        const size_t room = p.lane.max_bcopy() - hdr_len;
        while (!r.started || r.offset < total) {
            RequestFrag a{base, &r.rma, &r.iov, r.offset, std::min(total - r.offset, room)};
            a.h.offset = r.offset;
            const bool was_started = r.started;
            r.started = true;
            r.offset += a.len;
            s = status_of_bcopy(p.lane.send_bcopy(wire::kAmRmaWrite, pack_request, &a));
            if (s != tx::kOk) {
                r.started = was_started;
                r.offset -= a.len;
                break;
            }
        }
    }
    r.announcing = false;
    if (s != tx::kOk) return s;
    return r.done ? tx::kOk : kHandedOff;
}

void RmaProtocol::finish(SendReq *r, int error) noexcept {
    dp_.rma_zcopy_.release_put_hold(*r);
    if (r->op == SendOp::kWriteTarget) {
        // The target's zero-copy side of a peer's write: counted and dp_.answered already (its
        // gets), or counted on RMA_WRITE_DONE with nothing to answer (a grant).
    } else if (r->op == SendOp::kReadResp) {
        // The target's side of a peer's read: counted once its bytes went.
        if (error == 0) dp_.target_.count(r->rma.data(), r->rma.size(), r->iov.total, FI_REMOTE_READ);
    } else {
        if (r->completion || error != 0) {
            Completion c{};
            c.cq = dp_.cfg_.tx_cq;
            c.context = r->context;
            c.flags = r->cq_flags;
            c.len = error != 0 ? r->iov.total : 0;
            c.src = FI_ADDR_NOTAVAIL;
            c.err = -error;
            if (c.cq != nullptr) dp_.completions_.write(c);
        }
        const bool writes = r->op == SendOp::kWrite ||
                            (r->op == SendOp::kAtomic && r->atomic_kind == 0);  // fi_atomic
        cntr::Cntr *counter = writes ? dp_.cfg_.write_cntr : dp_.cfg_.read_cntr;
        if (counter != nullptr) {
            if (error == 0) cntr::on_completion(counter, r->iov.total);
            else cntr::on_error(counter);
        }
        --dp_.tx_outstanding_;
    }
    dp_.zcopy_.release_send_slot(*r);
    r->copy.clear();
    r->rma.clear();
    r->result.count = r->result.total = 0;
    r->op = SendOp::kMessage;
    dp_.send_pool_.put(r);
}

void RmaProtocol::handle_ack(const uint8_t *data, size_t length) noexcept {
    wire::AckHdr a;
    if (!dp_.ctrl_.parse_ack(wire::kAmRmaAck, data, length, a)) return;
    if (a.id & wire::kRmaUntracked) {
        Peer &p = *dp_.peers_[a.src];
        if (p.untracked_writes == 0) {  // none of ours is waiting: not an answer to us
            ++dp_.stats_.dropped_malformed;
            return;
        }
        finish_untracked_write(p, a.id & ~wire::kRmaUntracked, status_from_wire(a.status));
        return;
    }
    SendReq *r = dp_.zcopy_.send_by_id(a.id, a.src);
    if (r == nullptr || r->op != SendOp::kWrite || !r->started || r->offset != r->iov.total) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    r->status = status_from_wire(a.status);
    dp_.zcopy_.finish_send_rndv(r);
}

void RmaProtocol::handle_read_answer(const uint8_t *data, size_t length) noexcept {
    wire::RmaRespHdr h;
    SendReq *r = dp_.answered(data, length, SendOp::kRead, h);
    if (r == nullptr) return;
    const size_t len = length - sizeof h;
    if (h.status != 0) {
        r->status = status_from_wire(h.status);
        dp_.zcopy_.finish_send_rndv(r);
        return;
    }
    if (r->rndv_protocol == wire::kRndvPut && len == 0 && h.offset == r->iov.total) {
        r->rma_received = r->iov.total;  // the target wrote it all (zero copy)
        dp_.zcopy_.finish_send_rndv(r);
        return;
    }
    if (h.offset != r->rma_received || len > r->iov.total - r->rma_received) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    r->iov.copy_in(h.offset, data + sizeof h, len);
    r->rma_received += len;
    if (r->rma_received == r->iov.total) dp_.zcopy_.finish_send_rndv(r);
}

void RmaProtocol::handle_write(const uint8_t *data, size_t length) noexcept {
    RequestView v;
    if (!parse_request(data, length, v)) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (!dp_.from_connected(v.h.src, wire::kAmRmaWrite, data, length)) return;
    Peer &p = *dp_.peers_[v.h.src];
    if (v.h.flags & wire::kRmaZcopy) {
        if (v.h.offset != 0) {
            ++dp_.stats_.dropped_malformed;
            return;
        }
        IovList where;
        const int status = dp_.target_.check(p.key_handle, v.segs, v.h.segments, v.h.total, FI_REMOTE_WRITE, true, where);
        if (status != 0) {
            ++dp_.stats_.rma_refused;
            dp_.ctrl_.send_ack(p, wire::kAmRmaAck, v.h.id, status);
            return;
        }
        dp_.rma_zcopy_.start(p, SendOp::kWriteTarget, v.h, v.segs, where, v.payload, v.len);
        return;
    }
    const bool first = v.h.offset == 0;
    if (!first && (p.rma_in_id == 0 || v.h.id != p.rma_in_id)) {  // of no write in progress
        ++dp_.stats_.dropped_malformed;
        return;
    }
    int status = first ? 0 : p.rma_in_status;
    if (status == 0) {
        IovList where;
        status = dp_.target_.check(p.key_handle, v.segs, v.h.segments, v.h.total, FI_REMOTE_WRITE, first, where);
        if (status == 0) where.copy_in(v.h.offset, v.payload, v.len);
        else ++dp_.stats_.rma_refused;
    }
    p.rma_in_id = v.h.id;
    p.rma_in_status = status;
    if (v.h.offset + v.len != v.h.total) return;  // more fragments follow
    p.rma_in_id = 0;
    if (status == 0) target_write_done(p, v.segs, v.h.segments, v.h.total, v.h.flags, v.h.data);
    dp_.ctrl_.send_ack(p, wire::kAmRmaAck, v.h.id, status);
}

void RmaProtocol::handle_write_short(const uint8_t *data, size_t length) noexcept {
    wire::RmaShortHdr h;
    if (length < sizeof h) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    const bool has_data = (h.flags & wire::kRmaHasData) != 0;
    const size_t at = sizeof h + (has_data ? sizeof(uint64_t) : 0);
    const size_t len = length >= at ? length - at : 0;
    if (length < at || (h.flags & ~uint32_t{wire::kRmaHasData}) != 0 || h.id == 0 ||
        ((h.id & wire::kRmaUntracked) && (h.id & ~wire::kRmaUntracked) != len)) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (!dp_.from_connected(h.src, wire::kAmRmaWriteShort, data, length)) return;
    Peer &p = *dp_.peers_[h.src];
    uint64_t cq_data = 0;
    if (has_data) std::memcpy(&cq_data, data + sizeof h, sizeof cq_data);
    const wire::RmaSeg seg{h.key, h.addr, len};
    IovList where;
    const int status = dp_.target_.check_one(p.key_handle, seg, FI_REMOTE_WRITE, where);
    if (status == 0) {
        where.copy_in(0, data + at, len);
        target_write_done(p, &seg, 1, len, h.flags, cq_data);
    } else {
        ++dp_.stats_.rma_refused;
    }
    dp_.ctrl_.send_ack(p, wire::kAmRmaAck, h.id, status);
}

void RmaProtocol::target_write_done(Peer &p, const wire::RmaSeg *segs, size_t nsegs, uint64_t total,
                                 uint32_t flags, uint64_t data) noexcept {
    dp_.target_.count(segs, nsegs, total, FI_REMOTE_WRITE);
    dp_.remote_cq_data(p, flags, data, total);
}

void RmaProtocol::send_read_answer(Peer &p, uint64_t id, int status, uint64_t offset) noexcept {
    const wire::RmaRespHdr h{p.remote_idx, status, id, offset};
    ControlMsg *m = dp_.ctrl_.make(wire::kAmRmaReadResp, sizeof h);
    if (m == nullptr) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: a read's answer is lost");
        return;
    }
    std::memcpy(m->bytes.data() + 1, &h, sizeof h);
    dp_.ctrl_.send(p, m);
}

void RmaProtocol::handle_read_request(const uint8_t *data, size_t length) noexcept {
    RequestView v;
    if (!parse_request(data, length, v) || v.h.offset != 0 ||
        (v.len != 0 && !(v.h.flags & wire::kRmaZcopy))) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (!dp_.from_connected(v.h.src, wire::kAmRmaReadReq, data, length)) return;
    Peer &p = *dp_.peers_[v.h.src];
    IovList where;
    const int status = dp_.target_.check(p.key_handle, v.segs, v.h.segments, v.h.total, FI_REMOTE_READ, true, where);
    if (status != 0) {
        ++dp_.stats_.rma_refused;
        send_read_answer(p, v.h.id, status, 0);
        return;
    }
    if (v.h.flags & wire::kRmaZcopy) {
        dp_.rma_zcopy_.start(p, SendOp::kReadResp, v.h, v.segs, where, v.payload, v.len);
        return;
    }
    SendReq *r;
    try {
        r = dp_.send_pool_.get();
        r->rma.assign(v.segs, v.segs + v.h.segments);
    } catch (const std::bad_alloc &) {
        send_read_answer(p, v.h.id, -FI_ENOMEM, 0);
        return;
    }
    r->begin(SendOp::kReadResp, p.local_idx, nullptr, false);
    r->peer_id = v.h.id;
    r->iov.assign(where);
    r->completion = false;
    if (p.queue.empty() && p.ctrl.empty()) {
        const tx::Status s = dp_.push(p, *r);
        if (s == tx::kOk) {
            dp_.finish_send(r, 0);
            return;
        }
        if (s != tx::kNoResource) {
            p.queue.push_back(r);
            dp_.fail_peer(p, transports::fi_errno_of(s));
            return;
        }
    }
    sched::queue_answer(p, r);
    dp_.mark_busy(p);
}

std::span<const MessageHandler> RmaProtocol::handlers() noexcept {
    static constexpr MessageHandler kRows[] = {
        // Counted (true): writes are what a stream is made of (DataPath::trampoline).
        DataPath::module_row<&DataPath::rma_, &RmaProtocol::handle_write, true>(wire::kAmRmaWrite),
        DataPath::module_row<&DataPath::rma_, &RmaProtocol::handle_write_short, true>(
            wire::kAmRmaWriteShort),
        DataPath::module_row<&DataPath::rma_, &RmaProtocol::handle_read_request, false>(
            wire::kAmRmaReadReq),
        DataPath::module_row<&DataPath::rma_, &RmaProtocol::handle_read_answer, false>(
            wire::kAmRmaReadResp),
        DataPath::module_row<&DataPath::rma_, &RmaProtocol::handle_ack, false>(wire::kAmRmaAck),
    };
    return kRows;
}

}  // namespace ufi::runtime::proto
