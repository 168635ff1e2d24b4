// Eager messages (wire.h): a send goes out as one short or bcopy active message when it fits
// the lane, else as a first fragment and middle fragments; the receiver matches the message
// (at its first fragment, so matching follows arrival order per sender) against the posted
// receives, or keeps it as unexpected until a receive claims it.
#include "runtime/av/binding.h"
#include "runtime/av/socket_format.h"
#include "runtime/cntr/binding.h"
#include "runtime/cq/cq.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/wire.h"
#include "runtime/ucs_status.h"
#include "transports/address_name.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;

namespace {

// The most iovs a short message takes (header + data buffers); longer lists go by bcopy.
constexpr size_t kMaxShortIov = 8;
// Bytes reserved at once for an unexpected multi-fragment message (more as they arrive).
constexpr size_t kUnexpectedReserve = 1 << 20;

struct PackArgs {
    const uint8_t *hdr;
    size_t hdr_len;
    const IovList *iov;
    size_t from;
    size_t len;
};

size_t pack_message(void *dest, void *arg) {
    const auto *a = static_cast<const PackArgs *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, a->hdr, a->hdr_len);
    a->iov->copy_out(a->from, d + a->hdr_len, a->len);
    return a->hdr_len + a->len;
}

transports::Status status_of_bcopy(ssize_t rc) {
    return rc >= 0 ? transports::kOk : static_cast<transports::Status>(rc);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Sending

// The lane status for "this message does not fit one active message": it goes as fragments.
constexpr transports::Status kNeedsFragments = UCS_ERR_EXCEEDS_LIMIT;

transports::Status DataPath::send_single(Peer &p, const IovList &iov, uint64_t tag,
                                         uint32_t wire_flags, uint64_t data) noexcept {
    const bool has_data = (wire_flags & wire::kHasData) != 0;
    note_sent(p);
    uint8_t hdr[sizeof(wire::EagerHdr) + sizeof(uint64_t)];
    const wire::EagerHdr h{tag, p.remote_idx, wire_flags};
    std::memcpy(hdr, &h, sizeof h);
    size_t hdr_len = sizeof h;
    if (has_data) {
        std::memcpy(hdr + hdr_len, &data, sizeof data);
        hdr_len += sizeof data;
    }
    const size_t single = hdr_len + iov.total;
    if (single <= p.lane.max_short() && iov.count <= 1 && single <= kStagedShort) {
        uint8_t staged[kStagedShort];
        const size_t n = stage_eager_short(staged, p.remote_idx, wire_flags, data,
                                           iov.count != 0 ? iov.v[0].base : nullptr, iov.total);
        return p.lane.send_short(wire::kAmEager, tag, staged, static_cast<unsigned>(n));
    }
    if (single <= p.lane.max_short() && iov.count + 1 <= kMaxShortIov) {
        transports::Iov iovs[kMaxShortIov];
        iovs[0] = transports::make_iov(hdr, hdr_len);
        for (size_t i = 0; i < iov.count; ++i) {
            iovs[i + 1] = transports::make_iov(iov.v[i].base, iov.v[i].len);
        }
        return p.lane.send_short(wire::kAmEager, iovs, iov.count + 1);
    }
    if (single <= p.lane.max_bcopy()) {
        PackArgs a{hdr, hdr_len, &iov, 0, iov.total};
        return status_of_bcopy(p.lane.send_bcopy(wire::kAmEager, pack_message, &a));
    }
    return kNeedsFragments;
}

ssize_t DataPath::send_buffer_otherwise(ShortSend first, const void *buf, size_t len,
                                        fi_addr_t dest, void *context, uint64_t flags,
                                        uint64_t tag, uint64_t data, bool tagged,
                                        bool inject) noexcept {
    const bool relieved = first != ShortSend::kNotHere;
    if (relieved && relieve_lane(*peer_for_addr(dest))) {
        // Room again and nothing queued: the short way after all. (Progress may have reset
        // the peer: look it up again.)
        if (try_send_short(peer_for_addr(dest), buf, len, context, flags, tag, data, tagged,
                           inject) == ShortSend::kSent) {
            return 0;
        }
    }
    IovList iov;
    iov.set(buf, len);
    return send(iov, dest, context, flags, tag, data, tagged, inject, relieved);
}

ssize_t DataPath::send(const IovList &iov, fi_addr_t dest, void *context, uint64_t flags,
                       uint64_t tag, uint64_t data, bool tagged, bool inject,
                       bool relieved) noexcept {
    rx_slip_.on_send();  // (RxSlip: rendezvous and fragments send no eager message first)
    if (iov.total > cfg_.max_msg_size) return -FI_EMSGSIZE;
    if ((flags & FI_INJECT) &&
        iov.total > (tagged ? cfg_.inject_tagged_size : cfg_.inject_msg_size)) {
        return -FI_EMSGSIZE;
    }
    Peer *p = peer_for_addr(dest);
    if (p == nullptr) return -FI_EINVAL;
    const uint32_t wire_flags = (tagged ? uint32_t{wire::kTagged} : 0u) |
                                ((flags & FI_REMOTE_CQ_DATA) ? uint32_t{wire::kHasData} : 0u);
    const bool completion = !inject && (!cfg_.tx_selective || (flags & FI_COMPLETION));
    const bool confirm = completion && (flags & (FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE)) != 0;

    // The fast path: a connected peer with nothing waiting, a message that fits one active
    // message. UCT copies it (short and bcopy), so even FI_INJECT needs no copy of ours and no
    // request record: it is complete when the call returns.
    if (p->state == PeerState::kConnected && p->queue.empty() && p->ctrl.empty() &&
        tx_outstanding_ < tx_size_ &&
        iov.total <= p->rndv_thresh && !confirm && !(flags & FI_FENCE) &&
        p->rma_handed_off == 0) {
        const transports::Status s = send_single(*p, iov, tag, wire_flags, data);
        if (s == transports::kOk) {
            if (completion && cfg_.tx_cq != nullptr) {
                Completion c{};
                c.cq = cfg_.tx_cq;
                c.context = context;
                c.flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
                c.src = FI_ADDR_NOTAVAIL;
                write_completion(c);
            }
            if (cfg_.send_cntr != nullptr) cntr::on_completion(cfg_.send_cntr, iov.total);
            return 0;
        }
        if (s != transports::kNoResource && s != kNeedsFragments) {
            const int rc = fi_errno_of(s);
            fail_peer(*p, rc);
            return rc;
        }
    }

    if (tx_outstanding_ >= tx_size_) return -FI_EAGAIN;
    if (p->state == PeerState::kKnown) connect(*p);
    if (p->state == PeerState::kFailed) return p->fail_status;
    SendReq *r;
    try {
        r = send_pool_.get();
        if (flags & FI_INJECT) {  // the buffer may be reused at once: send a copy
            r->copy.resize(iov.total);
            iov.copy_out(0, r->copy.data(), iov.total);
            r->iov.set(r->copy.data(), iov.total);
        } else {
            r->iov.assign(iov);
        }
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    r->op = SendOp::kMessage;
    r->fence = (flags & FI_FENCE) != 0;
    r->peer = p->local_idx;
    r->tag = tag;
    r->data = data;
    r->wire_flags = wire_flags;
    r->context = context;
    r->cq_flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
    r->completion = completion;
    r->confirm = confirm;
    r->offset = 0;
    r->started = false;
    r->status = 0;
    return submit(*p, r, relieved);
}

ssize_t DataPath::submit(Peer &p_in, SendReq *r, bool relieved) noexcept {
    ++tx_outstanding_;
    Peer *p = &p_in;
    for (;;) {
        if (p->state == PeerState::kConnected && p->queue.empty() && p->ctrl.empty()) {
            const transports::Status s = push(*p, *r);
            if (s == transports::kOk) {
                finish_send(r, r->status);
                return 0;
            }
            if (s == kHandedOff) return 0;  // went out: the peer's answer finishes it
            if (s != transports::kNoResource) {
                const int rc = fi_errno_of(s);
                p->queue.push_back(r);
                fail_peer(*p, rc);  // completes r (and everything queued) with the error
                return 0;
            }
        }
        // The lane full or sends waiting before this one: progress once, then try again.
        // (r is no one's yet: progress cannot touch it. It may reset the peer in place.)
        if (relieved || p->state != PeerState::kConnected) break;
        relieved = true;
        const uint32_t idx = p->local_idx;
        const Peer *before = p;
        const bool room = relieve_lane(*p);
        p = peers_[idx].get();
        if (p != before && r->started) {
            // Reset during progress (its endpoint came back) with part of a message gone to
            // the old one: the rest means nothing to the new one.
            finish_send(r, -FI_ECONNRESET);
            return 0;
        }
        if (!room) break;
    }
    if (relieved) {
        // What progress did to the peer: a fresh one in its place (a restart) connects; a
        // failed one fails this operation as it failed those it held.
        if (p->state == PeerState::kKnown) connect(*p);
        if (p->state == PeerState::kFailed) {
            finish_send(r, p->fail_status);
            return 0;
        }
    }
    // Connecting, or the lane is full (or a fence waits): in order behind what waits already.
    ++stats_.sends_queued;
    p->queue.push_back(r);
    mark_busy(*p);
    return 0;
}

transports::Status DataPath::push(Peer &p, SendReq &r) noexcept {
    // FI_FENCE: nothing of it goes before every earlier operation to this peer completed
    // (earlier ones are ahead in the queue; those that went out are counted).
    // Orderings asked for: an RMA or atomic waits behind anything that went out, a message
    // behind RMA and atomics. Anything waits behind a write we put whose puts are not on their
    // way yet (release_put_hold). (A target's answer to a peer's read never waits.)
    const bool rma = r.op != SendOp::kMessage;
    const bool answer = r.op == SendOp::kReadResp;
    if (!r.started && !answer &&
        ((r.fence && p.handed_off > 0) || p.put_writes_held > 0 ||
         (cfg_.ordered && (rma ? p.handed_off : p.rma_handed_off) > 0))) {
        return transports::kNoResource;
    }
    const transports::Status s = rma ? push_rma(p, r) : push_message(p, r);
    if (s == kHandedOff && !r.handed_off) {
        r.handed_off = true;
        ++p.handed_off;
        if (rma) ++p.rma_handed_off;
    }
    return s;
}

transports::Status DataPath::push_message(Peer &p, SendReq &r) noexcept {
    const size_t total = r.iov.total;
    if (!r.started && (total > p.rndv_thresh || r.confirm)) {
        r.announcing = true;
        const transports::Status s = start_rndv_send(p, r);
        r.announcing = false;
        if (s == transports::kOk) {
            r.started = true;
            if (r.done) return transports::kOk;  // over self, all of it ran inside the call
            if (!r.streaming) return kHandedOff;
            // AM protocol over self: RTR came back inside the call; the data goes now.
        } else if (s == kNeedsFragments) {
            release_send_slot(r);  // announcing it takes more than one message: eager
        } else {
            return s;  // kNoResource keeps the slot for the retry
        }
    }
    if (r.streaming) return push_rndv_data(p, r);
    if (!r.started) {
        const transports::Status s = send_single(p, r.iov, r.tag, r.wire_flags, r.data);
        if (s != kNeedsFragments) {
            if (s == transports::kOk) {
                r.started = true;
                r.offset = total;
            }
            return s;
        }
        // One zero-copy message where the lane sends from our buffers (tcp, RDMA).
        const transports::Status z = send_eager_zcopy(p, r);
        if (z != kNeedsFragments) return z;
        // Fragments: the first carries the headers and as much as fits.
        const bool has_data = (r.wire_flags & wire::kHasData) != 0;
        uint8_t hdr[sizeof(wire::EagerHdr) + sizeof(wire::FirstHdr) + sizeof(uint64_t)];
        const wire::EagerHdr h{r.tag, p.remote_idx, r.wire_flags};
        const uint64_t msg_id = p.next_msg_id;
        const wire::FirstHdr f{total, msg_id};
        std::memcpy(hdr, &h, sizeof h);
        std::memcpy(hdr + sizeof h, &f, sizeof f);
        size_t hdr_len = sizeof h + sizeof f;
        if (has_data) {
            std::memcpy(hdr + hdr_len, &r.data, sizeof r.data);
            hdr_len += sizeof r.data;
        }
        if (p.lane.max_bcopy() <= hdr_len) return UCS_ERR_UNSUPPORTED;
        const size_t chunk = std::min(total, p.lane.max_bcopy() - hdr_len);
        PackArgs a{hdr, hdr_len, &r.iov, 0, chunk};
        const transports::Status first =
            status_of_bcopy(p.lane.send_bcopy(wire::kAmEagerFirst, pack_message, &a));
        if (first != transports::kOk) return first;
        ++p.next_msg_id;
        r.msg_id = msg_id;
        r.started = true;
        r.offset = chunk;
    }
    while (r.offset < total) {
        wire::MiddleHdr m{p.remote_idx, 0, r.msg_id, r.offset};
        const size_t chunk = std::min(total - r.offset, p.lane.max_bcopy() - sizeof m);
        PackArgs a{reinterpret_cast<const uint8_t *>(&m), sizeof m, &r.iov, r.offset, chunk};
        const transports::Status s =
            status_of_bcopy(p.lane.send_bcopy(wire::kAmEagerMiddle, pack_message, &a));
        if (s != transports::kOk) return s;
        r.offset += chunk;
    }
    return transports::kOk;
}

transports::Status DataPath::send_eager_zcopy(Peer &p, SendReq &r) noexcept {
    const bool has_data = (r.wire_flags & wire::kHasData) != 0;
    uint8_t hdr[sizeof(wire::EagerHdr) + sizeof(uint64_t)];
    const wire::EagerHdr h{r.tag, p.remote_idx, r.wire_flags};
    std::memcpy(hdr, &h, sizeof h);
    size_t hdr_len = sizeof h;
    if (has_data) {
        std::memcpy(hdr + hdr_len, &r.data, sizeof r.data);
        hdr_len += sizeof r.data;
    }
    transports::Iov iov[kMaxIov];
    size_t n = 0;
    for (size_t i = 0; i < r.iov.count; ++i) {
        if (r.iov.v[i].len != 0) iov[n++] = transports::make_iov(r.iov.v[i].base, r.iov.v[i].len);
    }
    // (In a send slot while in flight: a failed peer's transfers are found there.)
    if (!p.lane.fits_zcopy(hdr_len, r.iov.total, n) || (r.rndv_slot == 0 && !take_send_slot(r))) {
        return kNeedsFragments;
    }
    r.comp.uct.func = [](uct_completion_t *c) {
        auto *rc = reinterpret_cast<RndvCompletion *>(c);
        auto *sr = static_cast<SendReq *>(rc->req);
        if (c->status != UCS_OK && sr->status == 0) sr->status = fi_errno_of(c->status);
        rc->owner->finish_send_rndv(sr);
    };
    r.comp.uct.count = 1;
    r.comp.uct.status = UCS_OK;
    r.comp.owner = this;
    r.comp.req = &r;
    r.recv_id = 1;  // an operation in flight: a failure of the peer waits for its completion
    const transports::Status s =
        p.lane.send_zcopy(wire::kAmEager, hdr, static_cast<unsigned>(hdr_len), iov, n, &r.comp.uct);
    if (s == transports::kOk || s == transports::kInProgress) {
        ++stats_.eager_zcopy;
        r.started = true;
        r.offset = r.iov.total;
        if (s == transports::kInProgress) return kHandedOff;  // the completion finishes it
    }
    r.comp.uct.count = 0;
    r.recv_id = 0;
    release_send_slot(r);
    return s;  // kOk (complete), kNoResource (retried from the queue), or the lane's error
}

void DataPath::drain(Peer &p) noexcept {
    if (p.state == PeerState::kFailed) return;
    // Handshake messages owed to the peer go first, in this order; false: wait (no room, or
    // the peer failed).
    const auto owed = [&](bool &unsent, auto &&send) {
        if (!unsent) return true;
        const transports::Status s = send();
        if (s == transports::kNoResource) {
            mark_busy(p);
            return false;
        }
        unsent = false;
        if (s != transports::kOk) {
            fail_peer(p, fi_errno_of(s));
            return false;
        }
        return true;
    };
    if (!owed(p.reply_unsent, [&] { return send_reply(p, p.reply_status, p.reply_to, p.reply_type); }) ||
        !owed(p.request_unsent, [&] { return send_request(p); })) {
        return;
    }
    if (p.ack_unsent) {
        // The first message on an endpoint-to-endpoint lane (or the refusal of one): before
        // any traffic.
        if (!owed(p.ack_unsent, [&] { return send_wireup_ack(p); })) return;
        if (p.state == PeerState::kConnecting && p.remote_idx != kNoPeer) set_connected(p);
    }
    if (p.state != PeerState::kConnected) return;  // the reply will mark it busy (or refuse)
    if (!p.ctrl.empty() && !drain_ctrl(p)) {
        if (p.state != PeerState::kFailed) mark_busy(p);
        return;
    }
    while (SendReq *r = p.queue.front()) {
        const transports::Status s = push(p, *r);
        if (p.state == PeerState::kFailed) return;  // a handler failed it (queue completed)
        if (s == transports::kNoResource) {
            mark_busy(p);
            return;
        }
        if (s == kHandedOff) {
            p.queue.pop_front();
            continue;
        }
        if (s != transports::kOk) {
            fail_peer(p, fi_errno_of(s));
            return;
        }
        p.queue.pop_front();
        finish_send(r, r->status);
    }
}

// ---------------------------------------------------------------------------------------
// Receiving

uint32_t DataPath::recv_source(fi_addr_t src, bool tagged, ssize_t &rc) noexcept {
    if (!source_rule_.directed(tagged)) return kNoPeer;  // src is ignored
    if (src == FI_ADDR_UNSPEC) {
        if (!source_rule_.exact) return kNoPeer;
        UFI_LOG_INFO(Subsys::EpData,
                     "receive from FI_ADDR_UNSPEC on an FI_EXACT_DIRECTED_RECV endpoint");
        rc = -FI_EINVAL;
        return kNoPeer;
    }
    Peer *p = peer_for_addr(src);
    if (p == nullptr) {
        rc = -FI_EINVAL;
        return kNoPeer;
    }
    return p->local_idx;
}

RecvReq *DataPath::new_recv(fi_addr_t src, void *context, uint64_t flags, uint64_t tag,
                            uint64_t ignore, bool tagged, ssize_t &rc) noexcept {
    if (rx_posted_ >= rx_size_) {
        rc = -FI_EAGAIN;
        return nullptr;
    }
    const uint32_t from = recv_source(src, tagged, rc);
    if (rc != 0) return nullptr;
    RecvReq *r;
    try {
        r = recv_pool_.get();
    } catch (const std::bad_alloc &) {
        rc = -FI_ENOMEM;
        return nullptr;
    }
    fill_recv(r, from, context, flags, tag, ignore, tagged);
    return r;
}

void DataPath::deliver_unexpected(RecvReq *r, UnexpMsg *u) noexcept {
    if (u->rts) {  // announced: its data is fetched now, into r
        RtsInfo info = std::move(u->rts_info);
        const uint32_t src = u->src, wire_flags = u->wire_flags;
        const uint64_t tag = u->tag, data = u->data;
        const bool gone = u->sender_gone;
        u->rts = false;
        retire_unexpected(u);
        if (gone) {
            r->msg_tag = tag;
            complete_recv_error(r, src, FI_ECONNRESET, 0);
            return;
        }
        start_rndv_recv(r, src, wire_flags, tag, data, info);
        return;
    }
    if (u->received == u->total) {
        r->iov.copy_in(0, u->bytes.data(), u->total);
        complete_recv(r, u->src, u->wire_flags, u->tag, u->data, u->total);
        retire_unexpected(u);
    } else {
        u->claimed = r;  // its last fragment completes r
    }
}

ssize_t DataPath::post_recv(RecvReq *r) noexcept {
    ++rx_posted_;
    if (r->multi) {
        // A multi-receive buffer takes every waiting message that fits, in order.
        match_.post(r);
        while (!r->released && match_.has_unexpected(r->tagged)) {
            UnexpMsg *u = match_.first_unexpected(*r);
            if (u == nullptr) break;
            RecvReq *part = place_in(r, u->total);
            if (part == nullptr) break;  // out of memory: the message waits
            // The part that fills the buffer releases it; its delivery may complete at once
            // and retire the buffer's record (back to the pool, `released` cleared), so the
            // loop must not look at r again.
            const bool last = r->released;
            match_.remove_unexpected(u);
            deliver_unexpected(part, u);
            if (last) break;
        }
        return 0;
    }
    if (match_.has_unexpected(r->tagged)) {
        if (UnexpMsg *u = match_.first_unexpected(*r)) {
            match_.remove_unexpected(u);
            deliver_unexpected(r, u);
            return 0;
        }
    }
    match_.post(r);
    return 0;
}

RecvReq *DataPath::place_in(RecvReq *m, size_t len) noexcept {
    RecvReq *r;
    try {
        r = recv_pool_.get();
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
    r->tagged = m->tagged;
    r->src = m->src;
    r->tag = m->tag;
    r->ignore = m->ignore;
    r->context = m->context;
    r->completion = m->completion;
    r->multi = false;
    r->parent = m;
    const size_t room = m->iov.total - m->multi_offset;
    const size_t take = std::min(len, room);
    r->iov.set(m->iov.count != 0 ? m->iov.v[0].base + m->multi_offset : nullptr, take);
    m->multi_offset += take;
    ++m->children;
    const size_t min_left = cfg_.min_multi_recv != nullptr ? *cfg_.min_multi_recv : 0;
    if (m->iov.total - m->multi_offset < std::max<size_t>(min_left, 1)) {
        m->released = true;  // its last message's completion carries FI_MULTI_RECV
        match_.unpost(m);
    }
    return r;
}

ssize_t DataPath::recv(const IovList &iov, fi_addr_t src, void *context, uint64_t flags,
                       uint64_t tag, uint64_t ignore, bool tagged) noexcept {
    if ((flags & FI_MULTI_RECV) && (!tagged || tagged_multi_recv_) && iov.count > 1) {
        UFI_LOG_INFO(Subsys::EpData, "fi_recvmsg: an FI_MULTI_RECV buffer must be one buffer");
        return -FI_EINVAL;
    }
    ssize_t rc = 0;
    RecvReq *r = new_recv(src, context, flags, tag, ignore, tagged, rc);
    if (r == nullptr) return rc;
    r->iov.assign(iov);
    return post_recv(r);
}

[[gnu::noinline]] ssize_t DataPath::recv_buffer_slow(void *buf, size_t len, fi_addr_t src,
                                                     void *context, uint64_t flags, uint64_t tag,
                                                     uint64_t ignore, bool tagged) noexcept {
    ssize_t rc = 0;
    RecvReq *r = new_recv(src, context, flags, tag, ignore, tagged, rc);
    if (r == nullptr) return rc;
    r->iov.set(buf, len);
    return post_recv(r);
}

[[gnu::noinline]] void DataPath::complete_recv_slow(RecvReq *r, uint32_t src, uint32_t wire_flags,
                                                    uint64_t tag, uint64_t data, size_t msg_len,
                                                    fi_addr_t from, bool unknown) noexcept {
    const bool truncated = msg_len > r->iov.total;
    const bool has_data = (wire_flags & wire::kHasData) != 0;
    Peer *sender = src < peers_.size() ? peers_[src].get() : nullptr;
    Completion c{};
    c.cq = cfg_.rx_cq;
    c.context = r->context;
    c.flags = FI_RECV | (r->tagged ? FI_TAGGED : FI_MSG) | (has_data ? FI_REMOTE_CQ_DATA : 0);
    c.len = truncated ? r->iov.total : msg_len;
    c.data = has_data ? data : 0;
    c.tag = r->tagged ? tag : 0;
    c.src = from;
    c.err = truncated ? FI_ETRUNC : 0;
    c.olen = truncated ? msg_len - r->iov.total : 0;
    if (r->parent != nullptr) c.buf = r->iov.v[0].base;
    if (unknown && !truncated) {
        // Its address, as fi_av_insert takes it; with AV keys, src names the key it used.
        c.err = FI_EADDRNOTAVAIL;
        try {
            // Its name, as its fi_getname gave it (not the full address its handshake brought).
            c.err_data = transports::address::pack(transports::address::name_of(sender->address, cfg_.name_tls));
            if (av::is_socket_format(cfg_.addr_format)) {
                c.err_data = av::socket_bytes(c.err_data.data(), c.err_data.size(), cfg_.addr_format);
            } else if (c.err_data.size() < cfg_.addr_len) {
                c.err_data.resize(cfg_.addr_len, 0);
            }
        } catch (const std::bad_alloc &) {
            c.err_data.clear();
        }
        c.src = cfg_.av_auth_keys ? av::key_report_id(cfg_.av, sender->key_handle) : FI_ADDR_NOTAVAIL;
    }
    const bool completion = r->completion || c.err != 0;
    if (cfg_.recv_cntr != nullptr) {
        if (truncated) cntr::on_error(cfg_.recv_cntr);
        else cntr::on_completion(cfg_.recv_cntr, msg_len);
    }
    c.flags |= retire_recv(r);
    if ((completion || (c.flags & FI_MULTI_RECV)) && c.cq != nullptr) write_completion(c);
}

uint64_t DataPath::retire_recv(RecvReq *r) noexcept {
    uint64_t flags = 0;
    if (RecvReq *m = r->parent) {
        r->parent = nullptr;
        if (--m->children == 0 && m->released) {
            flags = FI_MULTI_RECV;  // the buffer is released with this message
            m->multi = m->released = false;
            --rx_posted_;
            recv_pool_.put(m);
        }
    } else {
        --rx_posted_;
    }
    recv_pool_.put(r);
    return flags;
}

void DataPath::complete_recv_error(RecvReq *r, uint32_t src, int err, size_t len) noexcept {
    Completion c{};
    c.cq = cfg_.rx_cq;
    c.context = r->context;
    c.flags = FI_RECV | (r->tagged ? FI_TAGGED : FI_MSG);
    c.len = len;
    c.tag = r->tagged ? r->msg_tag : 0;
    c.src = src < peers_.size() ? source_of(*peers_[src]) : FI_ADDR_NOTAVAIL;
    c.err = err;
    if (r->parent != nullptr) c.buf = r->iov.v[0].base;
    if (cfg_.recv_cntr != nullptr) cntr::on_error(cfg_.recv_cntr);
    c.flags |= retire_recv(r);
    if (c.cq != nullptr) write_completion(c);
}

UnexpMsg *DataPath::new_unexpected(const wire::EagerHdr &h, uint64_t cq_data, size_t total,
                                   size_t received) {
    UnexpMsg *u = unexp_pool_.get();
    u->tagged = (h.flags & wire::kTagged) != 0;
    u->src = h.src;
    u->wire_flags = h.flags;
    u->tag = u->tagged ? h.tag : 0;
    u->data = cq_data;
    u->total = total;
    u->received = received;
    ++stats_.unexpected;
    return u;
}

void DataPath::retire_unexpected(UnexpMsg *u) noexcept {
    u->claimed = nullptr;
    u->claim_ctx = nullptr;
    u->discarded = false;
    u->rts = false;
    u->sender_gone = false;
    u->received = u->total = 0;
    unexp_pool_.put(u);
}

// The sender of a message, when `src` names a connected peer.
void DataPath::handle_eager(const uint8_t *data, size_t length) noexcept {
    wire::EagerHdr h;
    if (length < sizeof h) {
        ++stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    const uint8_t *payload = data + sizeof h;
    size_t len = length - sizeof h;
    uint64_t cq_data = 0;
    if (h.flags & wire::kHasData) {
        if (len < sizeof cq_data) {
            ++stats_.dropped_malformed;
            return;
        }
        std::memcpy(&cq_data, payload, sizeof cq_data);
        payload += sizeof cq_data;
        len -= sizeof cq_data;
    }
    if (!from_connected(h.src, wire::kAmEager, data, length)) return;
    const bool tagged = (h.flags & wire::kTagged) != 0;
    if (RecvReq *r = match_posted(h.src, tagged, h.tag, len)) {
        r->iov.copy_in(0, payload, len);
        complete_recv(r, h.src, h.flags, h.tag, cq_data, len);
        return;
    }
    try {
        UnexpMsg *u = new_unexpected(h, cq_data, len, len);
        u->bytes.assign(payload, payload + len);
        match_.add_unexpected(u);
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: an unexpected message of {} bytes is dropped",
                     len);
    }
}

void DataPath::handle_first(const uint8_t *data, size_t length) noexcept {
    wire::EagerHdr h;
    wire::FirstHdr f;
    if (length < sizeof h + sizeof f) {
        ++stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    std::memcpy(&f, data + sizeof h, sizeof f);
    const uint8_t *payload = data + sizeof h + sizeof f;
    size_t len = length - sizeof h - sizeof f;
    uint64_t cq_data = 0;
    if (h.flags & wire::kHasData) {
        if (len < sizeof cq_data) {
            ++stats_.dropped_malformed;
            return;
        }
        std::memcpy(&cq_data, payload, sizeof cq_data);
        payload += sizeof cq_data;
        len -= sizeof cq_data;
    }
    if (!from_connected(h.src, wire::kAmEagerFirst, data, length)) return;
    Peer &p = *peers_[h.src];
    if (p.rx_recv != nullptr || p.rx_unexp != nullptr || len > f.total ||
        f.total > cfg_.max_msg_size) {
        // A sender sends one message's fragments at a time, none beyond max_msg_size (the
        // unexpected copy would take that much memory).
        ++stats_.dropped_malformed;
        return;
    }
    const bool tagged = (h.flags & wire::kTagged) != 0;
    p.rx_msg_id = f.msg_id;
    p.rx_total = f.total;
    p.rx_received = len;
    p.rx_flags = h.flags;
    p.rx_tag = tagged ? h.tag : 0;
    p.rx_data = cq_data;
    if (RecvReq *r = match_posted(h.src, tagged, h.tag, f.total)) {
        r->iov.copy_in(0, payload, len);
        p.rx_recv = r;
        ++partial_rx_;
        return;
    }
    try {
        UnexpMsg *u = new_unexpected(h, cq_data, f.total, len);
        // Grown as fragments arrive (never sized from the header: a peer's claim of a huge
        // message must not make this side allocate it before the bytes come).
        u->bytes.assign(payload, payload + len);
        u->bytes.reserve(std::min<size_t>(f.total, kUnexpectedReserve));
        match_.add_unexpected(u);
        p.rx_unexp = u;
        ++partial_rx_;
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: an unexpected message of {} bytes is dropped",
                     f.total);
        p.rx_total = 0;
    }
}

void DataPath::handle_middle(const uint8_t *data, size_t length) noexcept {
    wire::MiddleHdr m;
    if (length < sizeof m) {
        ++stats_.dropped_malformed;
        return;
    }
    std::memcpy(&m, data, sizeof m);
    if (!from_connected(m.src, wire::kAmEagerMiddle, data, length)) return;
    Peer &p = *peers_[m.src];
    const uint8_t *payload = data + sizeof m;
    const size_t len = length - sizeof m;
    if ((p.rx_recv == nullptr && p.rx_unexp == nullptr) || m.msg_id != p.rx_msg_id ||
        m.offset != p.rx_received || len > p.rx_total - p.rx_received) {
        ++stats_.dropped_malformed;
        return;
    }
    p.rx_received += len;
    const bool done = p.rx_received == p.rx_total;
    if (RecvReq *r = p.rx_recv) {
        r->iov.copy_in(m.offset, payload, len);
        if (done) {
            p.rx_recv = nullptr;
            --partial_rx_;
            complete_recv(r, m.src, p.rx_flags, p.rx_tag, p.rx_data, p.rx_total);
        }
        return;
    }
    UnexpMsg *u = p.rx_unexp;
    if (!u->discarded) {
        try {
            u->bytes.insert(u->bytes.end(), payload, payload + len);
        } catch (const std::bad_alloc &) {
            UFI_LOG_WARN(Subsys::EpData,
                         "out of memory: an unexpected message of {} bytes is dropped", u->total);
            u->discarded = true;
            if (u->claimed == nullptr) {
                match_.remove_unexpected(u);
                if (u->claim_ctx != nullptr) claimed_.erase(u->claim_ctx);
                u->claim_ctx = nullptr;
            }
        }
    }
    u->received = p.rx_received;
    if (!done) return;
    p.rx_unexp = nullptr;
    --partial_rx_;
    if (RecvReq *r = u->claimed) {
        if (u->discarded) {
            r->msg_tag = u->tag;
            complete_recv_error(r, u->src, FI_ENOMEM, 0);
        } else {
            r->iov.copy_in(0, u->bytes.data(), u->total);
            complete_recv(r, u->src, u->wire_flags, u->tag, u->data, u->total);
        }
        retire_unexpected(u);
    } else if (u->discarded) {
        retire_unexpected(u);
    }
}

}  // namespace ufi::runtime::proto
