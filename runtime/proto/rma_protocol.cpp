// RMA over active messages (wire.h): fi_write* and fi_read* on every transport. The target
// moves the bytes itself, after checking every access against its MR key table (key, enabled
// state, FI_REMOTE_READ / FI_REMOTE_WRITE, bounds), so a refused access leaves its memory
// untouched and the initiator gets the error as a completion. Operations ride the peer's send
// queue like messages, in order with them: a read posted after a write to the same peer sees
// the write (the target handles a lane's messages in order).
//
// A write completes when the target acknowledged its last fragment (the data is in place:
// delivery complete, whatever level was asked), a read when its last bytes arrived.
//
// From the peer's rendezvous threshold on, where a zero-copy transport joins the two (cma
// here, RDMA elsewhere; tcp for reads), the initiator registers its buffers and sends one
// request naming them; the target checks the access as always, then moves the bytes itself
// (get_zcopy for a write, put_zcopy for a read), counts it and answers. Target-driven, so the
// target's protection and FI_RMA_EVENT counting hold, and no key cache is needed. A write over
// a transport without get (tcp) is the exception: the target checks it and names its memory
// in RTR, the initiator puts it and says so (RMA_WRITE_DONE), and the target counts it then.
#include "runtime/cntr/binding.h"
#include "runtime/cq/cq.h"
#include "base/log/log.h"
#include "runtime/mr/binding.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

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

// A message built in a vector (the AM id is not in it).
size_t pack_vector(void *dest, void *arg) {
    const auto *m = static_cast<const std::vector<uint8_t> *>(arg);
    std::memcpy(dest, m->data(), m->size());
    return m->size();
}

size_t pack_response(void *dest, void *arg) {
    const auto *a = static_cast<const ResponseFrag *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, &a->h, sizeof a->h);
    if (a->len != 0) a->iov->copy_out(a->h.offset, d + sizeof a->h, a->len);
    return sizeof a->h + a->len;
}

// A status from the wire is a negative fi errno, or it is taken as an I/O error.
int wire_status(int32_t status) {
    return status > 0 || status < -FI_ERRNO_MAX ? -FI_EIO : status;
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
    // Zero copy: the payload names the initiator's buffers (start_rma_zcopy checks it).
    if (v.h.flags & wire::kRmaZcopy) return v.h.offset == 0;
    return v.h.offset <= v.h.total && v.len <= v.h.total - v.h.offset;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Initiator

ssize_t DataPath::rma(SendOp op, const IovList &local, const wire::RmaSeg *segs, size_t nsegs,
                      fi_addr_t dest, void *context, uint64_t flags, uint64_t data,
                      bool inject_call) noexcept {
    rx_slip_.on_send();  // (RxSlip: the endpoint talks, not only listens)
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
    if (local.total > cfg_.max_msg_size) return -FI_EMSGSIZE;
    if ((flags & FI_INJECT) && (!write || local.total > cfg_.inject_msg_size)) return -FI_EMSGSIZE;
    // fi_inject_write* write no completion; fi_writemsg with FI_INJECT still does (fi_rma(3):
    // FI_INJECT only frees the buffer at once).
    const bool completion = !inject_call && (!cfg_.tx_selective || (flags & FI_COMPLETION));
    if (write && nsegs == 1 && local.count <= 1 && (flags & FI_INJECT) && !completion) {
        // The common small put (shmem_p, a window's word): no record (fi_inject_write comes
        // straight to inject_write; fi_writemsg with FI_INJECT and the like come here).
        Peer *to = peer_for_addr(dest);
        if (to != nullptr && write_untracked(*to, local.count == 1 ? local.v[0].base : nullptr,
                                             local.total, segs[0].key, segs[0].addr, flags, data)) {
            return 0;
        }
    }
    Peer *p = nullptr;
    ssize_t rc = 0;
    SendReq *r = new_op(dest, p, rc);
    if (r == nullptr) return rc;
    try {
        r->rma.assign(segs, segs + nsegs);
        if (flags & FI_INJECT) {  // the buffer may be reused at once: send a copy
            r->copy.resize(local.total);
            local.copy_out(0, r->copy.data(), local.total);
            r->iov.set(r->copy.data(), local.total);
        } else {
            r->iov.assign(local);
        }
    } catch (const std::bad_alloc &) {
        r->rma.clear();
        r->copy.clear();
        send_pool_.put(r);
        return -FI_ENOMEM;
    }
    r->op = op;
    r->fence = (flags & FI_FENCE) != 0;
    r->peer = p->local_idx;
    r->context = context;
    r->cq_flags = FI_RMA | (write ? FI_WRITE : FI_READ);
    r->completion = completion;
    r->confirm = false;
    r->offset = 0;
    r->started = false;
    r->status = 0;
    r->done = false;
    r->announcing = false;
    r->comp.uct.count = 0;
    r->rma_flags = write && (flags & FI_REMOTE_CQ_DATA) ? uint32_t{wire::kRmaHasData} : 0u;
    r->rma_data = data;
    r->rma_received = 0;
    return submit(*p, r);
}

tx::Status DataPath::send_write_short(Peer &p, uint64_t id, const wire::RmaSeg &seg,
                                      const IovList &local, uint32_t flags,
                                      uint64_t data) noexcept {
    uint8_t staged[kStagedWriteShort];
    size_t n = stage_write_short(staged, p.remote_idx, flags, id, seg.key, seg.addr, data);
    local.copy_out(0, staged + n, local.total);
    n += local.total;
    return send_staged_write(p, staged, n);
}

void DataPath::finish_untracked_write(Peer &p, uint64_t len, int error) noexcept {
    --p.untracked_writes;
    --p.handed_off;
    --p.rma_handed_off;
    refresh_eager_gate(p);
    --tx_outstanding_;
    if (error != 0 && cfg_.tx_cq != nullptr) {  // injected: only an error is reported
        Completion c{};
        c.cq = cfg_.tx_cq;
        c.flags = FI_RMA | FI_WRITE;
        c.len = len;
        c.src = FI_ADDR_NOTAVAIL;
        c.err = -error;
        write_completion(c);
    }
    if (cfg_.write_cntr != nullptr) {
        if (error == 0) cntr::on_completion(cfg_.write_cntr, len);
        else cntr::on_error(cfg_.write_cntr);
    }
}

SendReq *DataPath::new_op(fi_addr_t dest, Peer *&p, ssize_t &rc) noexcept {
    p = peer_for_addr(dest);
    if (p == nullptr) {
        rc = -FI_EINVAL;
        return nullptr;
    }
    if (tx_outstanding_ >= tx_size_) {
        rc = -FI_EAGAIN;
        return nullptr;
    }
    if (p->state == PeerState::kKnown) connect(*p);
    if (p->state == PeerState::kFailed) {
        rc = p->fail_status;
        return nullptr;
    }
    try {
        return send_pool_.get();
    } catch (const std::bad_alloc &) {
        rc = -FI_ENOMEM;
        return nullptr;
    }
}

tx::Status DataPath::push_rma(Peer &p, SendReq &r) noexcept {
    if (r.op == SendOp::kAtomic) return atomics_.push(p, r);
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
    if (r.rndv_slot == 0 && !take_send_slot(r)) return transports::Status::kNoMemory;
    // Over `self` the target's answer arrives inside the send call: it must not finish r
    // under us (finish_send_rndv() marks it done instead).
    r.announcing = true;
    tx::Status s = tx::kOk;
    // The request is marked sent before the call: over `self` the answer arrives inside it.
    if (!r.started && total != 0 && total >= p.rma_thresh) {
        r.started = true;
        r.offset = total;
        s = send_rma_zcopy(p, r);
        if (s != tx::kOk) {
            r.started = false;
            r.offset = 0;
        }
        if (s != transports::Status::kUnsupported) {
            r.announcing = false;
            if (s != tx::kOk) return s;
            return r.done ? tx::kOk : kHandedOff;
        }
        s = tx::kOk;  // no zero copy to this peer: active messages
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

void DataPath::release_put_hold(SendReq &r) noexcept {
    if (!r.holds_peer) return;
    r.holds_peer = false;
    if (r.peer >= peers_.size()) return;
    Peer &p = *peers_[r.peer];
    if (--p.put_writes_held == 0 && !p.queue.empty()) mark_busy(p);  // progress sends them
}

void DataPath::finish_rma(SendReq *r, int error) noexcept {
    release_put_hold(*r);
    if (r->op == SendOp::kWriteTarget) {
        // The target's zero-copy side of a peer's write: counted and answered already (its
        // gets), or counted on RMA_WRITE_DONE with nothing to answer (a grant).
    } else if (r->op == SendOp::kReadResp) {
        // The target's side of a peer's read: counted once its bytes went.
        if (error == 0) target_.count(r->rma.data(), r->rma.size(), r->iov.total, FI_REMOTE_READ);
    } else {
        if (r->completion || error != 0) {
            Completion c{};
            c.cq = cfg_.tx_cq;
            c.context = r->context;
            c.flags = r->cq_flags;
            c.len = error != 0 ? r->iov.total : 0;
            c.src = FI_ADDR_NOTAVAIL;
            c.err = -error;
            if (c.cq != nullptr) write_completion(c);
        }
        const bool writes = r->op == SendOp::kWrite ||
                            (r->op == SendOp::kAtomic && r->atomic_kind == 0);  // fi_atomic
        cntr::Cntr *counter = writes ? cfg_.write_cntr : cfg_.read_cntr;
        if (counter != nullptr) {
            if (error == 0) cntr::on_completion(counter, r->iov.total);
            else cntr::on_error(counter);
        }
        --tx_outstanding_;
    }
    release_send_slot(*r);
    r->copy.clear();
    r->rma.clear();
    r->result.count = r->result.total = 0;
    r->op = SendOp::kMessage;
    send_pool_.put(r);
}

void DataPath::handle_rma_ack(const uint8_t *data, size_t length) noexcept {
    wire::AckHdr a;
    if (!parse_ack(wire::kAmRmaAck, data, length, a)) return;
    if (a.id & wire::kRmaUntracked) {
        Peer &p = *peers_[a.src];
        if (p.untracked_writes == 0) {  // none of ours is waiting: not an answer to us
            ++stats_.dropped_malformed;
            return;
        }
        finish_untracked_write(p, a.id & ~wire::kRmaUntracked, wire_status(a.status));
        return;
    }
    SendReq *r = send_by_id(a.id, a.src);
    if (r == nullptr || r->op != SendOp::kWrite || !r->started || r->offset != r->iov.total) {
        ++stats_.dropped_malformed;
        return;
    }
    r->status = wire_status(a.status);
    finish_send_rndv(r);
}

SendReq *DataPath::answered(const uint8_t *data, size_t length, SendOp op,
                            wire::RmaRespHdr &h) noexcept {
    if (length < sizeof h) {
        ++stats_.dropped_malformed;
        return nullptr;
    }
    std::memcpy(&h, data, sizeof h);
    const uint8_t id = op == SendOp::kRead ? wire::kAmRmaReadResp : wire::kAmAtomicResp;
    if (!from_connected(h.src, id, data, length)) return nullptr;
    SendReq *r = send_by_id(h.id, h.src);
    if (r == nullptr || r->op != op || !r->started) {
        ++stats_.dropped_malformed;
        return nullptr;
    }
    return r;
}

void DataPath::handle_rma_read_resp(const uint8_t *data, size_t length) noexcept {
    wire::RmaRespHdr h;
    SendReq *r = answered(data, length, SendOp::kRead, h);
    if (r == nullptr) return;
    const size_t len = length - sizeof h;
    if (h.status != 0) {
        r->status = wire_status(h.status);
        finish_send_rndv(r);
        return;
    }
    if (r->rndv_protocol == wire::kRndvPut && len == 0 && h.offset == r->iov.total) {
        r->rma_received = r->iov.total;  // the target wrote it all (zero copy)
        finish_send_rndv(r);
        return;
    }
    if (h.offset != r->rma_received || len > r->iov.total - r->rma_received) {
        ++stats_.dropped_malformed;
        return;
    }
    r->iov.copy_in(h.offset, data + sizeof h, len);
    r->rma_received += len;
    if (r->rma_received == r->iov.total) finish_send_rndv(r);
}

// ---------------------------------------------------------------------------------------
// Target

void DataPath::handle_rma_write(const uint8_t *data, size_t length) noexcept {
    RequestView v;
    if (!parse_request(data, length, v)) {
        ++stats_.dropped_malformed;
        return;
    }
    if (!from_connected(v.h.src, wire::kAmRmaWrite, data, length)) return;
    Peer &p = *peers_[v.h.src];
    if (v.h.flags & wire::kRmaZcopy) {
        if (v.h.offset != 0) {
            ++stats_.dropped_malformed;
            return;
        }
        IovList where;
        const int status = target_.check(p.key_handle, v.segs, v.h.segments, v.h.total, FI_REMOTE_WRITE, true, where);
        if (status != 0) {
            ++stats_.rma_refused;
            send_ack(p, wire::kAmRmaAck, v.h.id, status);
            return;
        }
        start_rma_zcopy(p, SendOp::kWriteTarget, v.h, v.segs, where, v.payload, v.len);
        return;
    }
    const bool first = v.h.offset == 0;
    if (!first && (p.rma_in_id == 0 || v.h.id != p.rma_in_id)) {  // of no write in progress
        ++stats_.dropped_malformed;
        return;
    }
    int status = first ? 0 : p.rma_in_status;
    if (status == 0) {
        IovList where;
        status = target_.check(p.key_handle, v.segs, v.h.segments, v.h.total, FI_REMOTE_WRITE, first, where);
        if (status == 0) where.copy_in(v.h.offset, v.payload, v.len);
        else ++stats_.rma_refused;
    }
    p.rma_in_id = v.h.id;
    p.rma_in_status = status;
    if (v.h.offset + v.len != v.h.total) return;  // more fragments follow
    p.rma_in_id = 0;
    if (status == 0) target_write_done(p, v.segs, v.h.segments, v.h.total, v.h.flags, v.h.data);
    send_ack(p, wire::kAmRmaAck, v.h.id, status);
}

void DataPath::handle_rma_write_short(const uint8_t *data, size_t length) noexcept {
    wire::RmaShortHdr h;
    if (length < sizeof h) {
        ++stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    const bool has_data = (h.flags & wire::kRmaHasData) != 0;
    const size_t at = sizeof h + (has_data ? sizeof(uint64_t) : 0);
    const size_t len = length >= at ? length - at : 0;
    if (length < at || (h.flags & ~uint32_t{wire::kRmaHasData}) != 0 || h.id == 0 ||
        ((h.id & wire::kRmaUntracked) && (h.id & ~wire::kRmaUntracked) != len)) {
        ++stats_.dropped_malformed;
        return;
    }
    if (!from_connected(h.src, wire::kAmRmaWriteShort, data, length)) return;
    Peer &p = *peers_[h.src];
    uint64_t cq_data = 0;
    if (has_data) std::memcpy(&cq_data, data + sizeof h, sizeof cq_data);
    const wire::RmaSeg seg{h.key, h.addr, len};
    IovList where;
    const int status = target_.check_one(p.key_handle, seg, FI_REMOTE_WRITE, where);
    if (status == 0) {
        where.copy_in(0, data + at, len);
        target_write_done(p, &seg, 1, len, h.flags, cq_data);
    } else {
        ++stats_.rma_refused;
    }
    send_ack(p, wire::kAmRmaAck, h.id, status);
}

void DataPath::target_write_done(Peer &p, const wire::RmaSeg *segs, size_t nsegs, uint64_t total,
                                 uint32_t flags, uint64_t data) noexcept {
    target_.count(segs, nsegs, total, FI_REMOTE_WRITE);
    remote_cq_data(p, flags, data, total);
}

void DataPath::remote_cq_data(Peer &p, uint32_t flags, uint64_t data, uint64_t total) noexcept {
    if ((flags & wire::kRmaHasData) && cfg_.rx_cq != nullptr) {
        // fi_writedata: the data reaches the target's CQ (no receive buffer is consumed: ufi
        // does not require FI_RX_CQ_DATA).
        Completion c{};
        c.cq = cfg_.rx_cq;
        c.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
        c.len = total;
        c.data = data;
        c.src = source_of(p);
        write_completion(c);
    }
}

void DataPath::send_read_answer(Peer &p, uint64_t id, int status, uint64_t offset) noexcept {
    try {
        std::vector<uint8_t> m(1 + sizeof(wire::RmaRespHdr));
        m[0] = wire::kAmRmaReadResp;
        const wire::RmaRespHdr h{p.remote_idx, status, id, offset};
        std::memcpy(m.data() + 1, &h, sizeof h);
        send_ctrl(p, std::move(m));
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: a read's error answer is lost");
    }
}

void DataPath::handle_rma_read_req(const uint8_t *data, size_t length) noexcept {
    RequestView v;
    if (!parse_request(data, length, v) || v.h.offset != 0 ||
        (v.len != 0 && !(v.h.flags & wire::kRmaZcopy))) {
        ++stats_.dropped_malformed;
        return;
    }
    if (!from_connected(v.h.src, wire::kAmRmaReadReq, data, length)) return;
    Peer &p = *peers_[v.h.src];
    IovList where;
    const int status = target_.check(p.key_handle, v.segs, v.h.segments, v.h.total, FI_REMOTE_READ, true, where);
    if (status != 0) {
        ++stats_.rma_refused;
        send_read_answer(p, v.h.id, status, 0);
        return;
    }
    if (v.h.flags & wire::kRmaZcopy) {
        start_rma_zcopy(p, SendOp::kReadResp, v.h, v.segs, where, v.payload, v.len);
        return;
    }
    SendReq *r;
    try {
        r = send_pool_.get();
        r->rma.assign(v.segs, v.segs + v.h.segments);
    } catch (const std::bad_alloc &) {
        send_read_answer(p, v.h.id, -FI_ENOMEM, 0);
        return;
    }
    r->op = SendOp::kReadResp;
    r->fence = false;
    r->peer = p.local_idx;
    r->peer_id = v.h.id;
    r->iov.assign(where);
    r->context = nullptr;
    r->completion = false;
    r->confirm = false;
    r->offset = 0;
    r->started = false;
    r->status = 0;
    r->done = false;
    r->announcing = false;
    if (p.queue.empty() && p.ctrl.empty()) {
        const tx::Status s = push(p, *r);
        if (s == tx::kOk) {
            finish_send(r, 0);
            return;
        }
        if (s != tx::kNoResource) {
            p.queue.push_back(r);
            fail_peer(p, transports::fi_errno_of(s));
            return;
        }
    }
    // Ahead of this side's own operations that have not started: on an ordered endpoint they
    // may wait for the peer's answers to ours, and the peer's answers for this one (both sides
    // reading at once, MPICH's test5). An answer is not ordered with our operations; it stays
    // behind what started going out (a message's later fragments) and earlier answers.
    SendReq *before = p.queue.front();
    while (before != nullptr && (before->started || before->op == SendOp::kReadResp)) {
        before = before->hook.next;
    }
    p.queue.insert_before(before, r);
    mark_busy(p);
}

// ---------------------------------------------------------------------------------------
// Zero copy

tx::Status DataPath::send_rma_zcopy(Peer &p, SendReq &r) noexcept {
    if (p.rma_iface == SIZE_MAX) return transports::Status::kUnsupported;
    const tx::TransportCode transport = worker_->ifaces()[p.rma_iface]->code;
    r.recv_id = 0;
    if (r.op == SendOp::kWrite && p.rndv_protocol == wire::kRndvPut) {
        return send_write_put(p, r, transport);
    }
    // The target gets a write from our buffers, and puts a read into them.
    const tx::RmaKind kind = r.op == SendOp::kWrite ? tx::RmaKind::kGet : tx::RmaKind::kPut;
    const tx::OpenIface *oi = zcopy_iface(p, transport, kind);
    if (oi == nullptr || transport == tx::kNoTransport || !tx::zcopy_permitted(*oi) ||
        r.iov.count > wire::kMaxRndvSegments) {
        return transports::Status::kUnsupported;
    }
    if (r.regions.empty() && !register_buffers(*oi, r.iov, r.iov.total, r.regions)) {
        return transports::Status::kUnsupported;
    }
    try {
        std::vector<uint8_t> keys, one;
        std::vector<wire::Segment> segs;
        uint16_t rkey_len = 0;
        for (size_t i = 0; i < r.iov.count; ++i) {
            if (r.iov.v[i].len == 0) continue;
            if (r.regions[i].pack(one) != transports::Status::kOk) return transports::Status::kUnsupported;
            rkey_len = static_cast<uint16_t>(one.size());
            keys.insert(keys.end(), one.begin(), one.end());
            segs.push_back({reinterpret_cast<uint64_t>(r.iov.v[i].base), r.iov.v[i].len});
        }
        const wire::RmaHdr h{p.remote_idx,
                             r.rma_flags | wire::kRmaZcopy,
                             r.rndv_slot,
                             r.iov.total,
                             0,
                             r.rma_data,
                             static_cast<uint32_t>(r.rma.size()),
                             0};
        const wire::RmaZcopyHdr z{static_cast<uint8_t>(segs.size()), transport, rkey_len, 0};
        std::vector<uint8_t> m;
        m.reserve(sizeof h + r.rma.size() * sizeof(wire::RmaSeg) + sizeof z +
                  segs.size() * sizeof(wire::Segment) + keys.size());
        append_bytes(m, &h, sizeof h);
        append_bytes(m, r.rma.data(), r.rma.size() * sizeof(wire::RmaSeg));
        append_bytes(m, &z, sizeof z);
        append_bytes(m, segs.data(), segs.size() * sizeof(wire::Segment));
        append_bytes(m, keys.data(), keys.size());
        if (m.size() > p.lane.max_bcopy()) return transports::Status::kUnsupported;
        // The read's answer comes without data (rma_zcopy_done's offset == total).
        r.rndv_protocol = r.op == SendOp::kRead ? wire::kRndvPut : wire::kRndvGet;
        const uint8_t id = r.op == SendOp::kWrite ? wire::kAmRmaWrite : wire::kAmRmaReadReq;
        return status_of_bcopy(p.lane.send_bcopy(id, pack_vector, &m));
    } catch (const std::bad_alloc &) {
        return transports::Status::kUnsupported;
    }
}

tx::Status DataPath::send_write_put(Peer &p, SendReq &r, tx::TransportCode transport) noexcept {
    // A transport that puts but cannot get (tcp): we write the target's memory once it granted
    // it (RTR); the request names only the transport. Our buffers register when RTR came, and
    // only where the transport needs a local handle.
    if (transport == tx::kNoTransport || zcopy_iface(p, transport, tx::RmaKind::kPut) == nullptr) {
        return transports::Status::kUnsupported;
    }
    try {
        const wire::RmaHdr h{p.remote_idx,
                             r.rma_flags | wire::kRmaZcopy | wire::kRmaInitiatorPuts,
                             r.rndv_slot,
                             r.iov.total,
                             0,
                             r.rma_data,
                             static_cast<uint32_t>(r.rma.size()),
                             0};
        const wire::RmaZcopyHdr z{0, transport, 0, 0};
        std::vector<uint8_t> m;
        m.reserve(sizeof h + r.rma.size() * sizeof(wire::RmaSeg) + sizeof z);
        append_bytes(m, &h, sizeof h);
        append_bytes(m, r.rma.data(), r.rma.size() * sizeof(wire::RmaSeg));
        append_bytes(m, &z, sizeof z);
        if (m.size() > p.lane.max_bcopy()) return transports::Status::kUnsupported;
        r.rndv_protocol = wire::kRndvPut;  // what RTR is checked against
        // Held before the call: over `self` all of it may run inside.
        r.holds_peer = true;
        ++p.put_writes_held;
        const tx::Status s = status_of_bcopy(p.lane.send_bcopy(wire::kAmRmaWrite, pack_vector, &m));
        if (s != tx::kOk) release_put_hold(r);
        return s;
    } catch (const std::bad_alloc &) {
        return transports::Status::kUnsupported;
    }
}

void DataPath::start_target_record(SendReq &t, const Peer &p, SendOp op, uint8_t protocol,
                                   const wire::RmaHdr &h) noexcept {
    t.op = op;
    t.rndv_protocol = protocol;
    t.fence = false;
    t.peer = p.local_idx;
    t.peer_id = h.id;
    t.rma_flags = h.flags;
    t.rma_data = h.data;
    t.context = nullptr;
    t.completion = false;
    t.length = h.total;
    t.status = 0;
    t.started = true;
    t.done = false;
    t.announcing = false;
    t.comp.uct.count = 0;
}

void DataPath::drop_target_record(SendReq *t) noexcept {
    if (t == nullptr) return;
    release_send_slot(*t);
    t->rma.clear();
    send_pool_.put(t);
}

void DataPath::start_rma_zcopy(Peer &p, SendOp op, const wire::RmaHdr &h, const wire::RmaSeg *segs,
                               const IovList &where, const uint8_t *section, size_t len) noexcept {
    const bool write = op == SendOp::kWriteTarget;
    auto answer = [&](int status) {
        if (write) send_ack(p, wire::kAmRmaAck, h.id, status);
        else send_read_answer(p, h.id, status, 0);
    };
    // The initiator's buffers: RmaZcopyHdr (its transport's code), segments, rkeys.
    wire::RmaZcopyHdr z;
    if (len < sizeof z) {
        ++stats_.dropped_malformed;
        return answer(-FI_EINVAL);
    }
    std::memcpy(&z, section, sizeof z);
    if (write && (h.flags & wire::kRmaInitiatorPuts)) {
        // Only the transport the initiator puts with.
        if (z.segments != 0 || z.rkey_len != 0 || z.transport == tx::kNoTransport ||
            len != sizeof z) {
            ++stats_.dropped_malformed;
            return answer(-FI_EINVAL);
        }
        grant_rma_put(p, h, segs, where, z.transport);
        return;
    }
    const size_t need = sizeof z + size_t{z.segments} * (sizeof(wire::Segment) + z.rkey_len);
    if (len != need || z.segments == 0 || z.segments > wire::kMaxRndvSegments ||
        z.transport == tx::kNoTransport) {
        ++stats_.dropped_malformed;
        return answer(-FI_EINVAL);
    }
    SendReq *t = nullptr;
    bool ok = false;
    try {
        t = send_pool_.get();
        const uint8_t *at = section + sizeof z;
        t->remote.resize(z.segments);
        std::memcpy(t->remote.data(), at, z.segments * sizeof(wire::Segment));
        at += z.segments * sizeof(wire::Segment);
        uint64_t sum = 0;
        bool sane = true;
        for (const wire::Segment &sg : t->remote) {
            sane = sane && sg.len != 0 && sg.len <= h.total - sum;
            if (sane) sum += sg.len;
        }
        RtsInfo keys;
        keys.segments = t->remote;
        keys.rkey_len = z.rkey_len;
        keys.rkeys.assign(at, section + len);
        t->rma.assign(segs, segs + h.segments);
        t->iov.assign(where);
        const tx::RmaKind kind = write ? tx::RmaKind::kGet : tx::RmaKind::kPut;
        ok = sane && sum == h.total && open_rma(p, z.transport, kind) && unpack_keys(p, keys, t->keys) &&
             (!p.rma.iface().md_needs_memh ||
              register_buffers(p.rma.iface(), t->iov, h.total, t->regions)) &&
             take_send_slot(*t);  // failures (fail_rndv) find it there
    } catch (const std::bad_alloc &) {
        ok = false;
    }
    if (!ok) {
        UFI_LOG_INFO(Subsys::EpData, "RMA from {}: cannot move it zero copy",
                     tx::address::describe(p.address));
        drop_target_record(t);
        return answer(-FI_EIO);
    }
    // (kWriteTarget with PUT is a grant: grant_rma_put)
    start_target_record(*t, p, op, write ? wire::kRndvGet : wire::kRndvPut, h);
    t->offset = 0;
    t->put_base = 0;
    t->recv_id = 1;  // operations in flight: a failure waits for their completions
    t->comp.owner = this;
    t->comp.req = t;
    issue_puts(t);  // gets for kWriteTarget
}

void DataPath::rma_zcopy_done(SendReq *r) noexcept {
    Peer &p = *peers_[r->peer];
    const uint32_t slot = r->rndv_slot;
    if (r->op == SendOp::kWriteTarget) {
        if (r->status == 0) {
            target_write_done(p, r->rma.data(), r->rma.size(), r->length, r->rma_flags,
                              r->rma_data);
        }
        send_ack(p, wire::kAmRmaAck, r->peer_id, r->status);
    } else {
        // Written with puts that completed (tcp: acknowledged), so the data is in place when
        // the answer arrives.
        send_read_answer(p, r->peer_id, r->status, r->status == 0 ? r->length : 0);
    }
    if (rndv_sends_[slot] == r) finish_send_rndv(r);  // (else the answer failed the peer,
}                                                     // which finished it)

void DataPath::grant_rma_put(Peer &p, const wire::RmaHdr &h, const wire::RmaSeg *segs,
                             const IovList &where, tx::TransportCode transport) noexcept {
    // Our memory behind the checked segments, registered for the initiator's transport, goes
    // back in RTR; a record keeps what counting needs until RMA_WRITE_DONE says it is in place.
    const tx::OpenIface *oi = zcopy_iface(p, transport, tx::RmaKind::kPut);
    SendReq *t = nullptr;
    std::vector<uint8_t> m;
    bool ok = false;
    try {
        t = send_pool_.get();
        t->rma.assign(segs, segs + h.segments);
        ok = oi != nullptr && take_send_slot(*t) &&
             build_rtr_put(p, *oi, where, h.total, t->regions, h.id, t->rndv_slot, m);
    } catch (const std::bad_alloc &) {
        ok = false;
    }
    if (!ok) {
        UFI_LOG_INFO(Subsys::EpData, "RMA write from {}: cannot let it be put over {}",
                     tx::address::describe(p.address), tx::transport_name(transport));
        drop_target_record(t);
        send_ack(p, wire::kAmRmaAck, h.id, -FI_EIO);
        return;
    }
    start_target_record(*t, p, SendOp::kWriteTarget, wire::kRndvPut, h);  // RMA_WRITE_DONE ends it
    t->iov.assign(where);
    t->offset = h.total;
    t->recv_id = 0;  // nothing of ours in flight: a failure of the peer finishes it at once
    ++stats_.rma_put_grants;
    send_ctrl(p, std::move(m));
}

void DataPath::handle_rma_write_done(const uint8_t *data, size_t length) noexcept {
    wire::AckHdr a;
    if (!parse_ack(wire::kAmRmaWriteDone, data, length, a)) return;
    SendReq *t = send_by_id(a.id, a.src);
    if (t == nullptr || t->op != SendOp::kWriteTarget || t->rndv_protocol != wire::kRndvPut) {
        ++stats_.dropped_malformed;  // no write of this peer's granted under that id
        return;
    }
    // (The initiator completed the write when its puts did: nothing to answer.)
    if (a.status == 0) {
        target_write_done(*peers_[t->peer], t->rma.data(), t->rma.size(), t->length,
                          t->rma_flags, t->rma_data);
    }
    finish_send_rndv(t);
}

}  // namespace ufi::runtime::proto
