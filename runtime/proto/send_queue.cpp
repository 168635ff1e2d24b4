// The send scheduler every operation goes through: fi_send*/fi_tsend* calls that the inline
// common case (fast_path.h) did not take, then submit(), which sends at once where the peer's
// queue is empty and the lane has room, else queues in order; push() hands one queued
// operation to its protocol (a message, an RMA, an atomic, a read's response); drain() sends
// what a peer's queue holds once its lane has room again.
#include "runtime/av/binding.h"
#include "runtime/av/socket_format.h"
#include "runtime/cntr/binding.h"
#include "runtime/cq/cq.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/sched.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"
#include "transports/address_name.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;

void DataPath::check_eager_gate(const Peer &p) const noexcept {
    const int64_t want = eager_gate_of(p);
    if (p.eager_short_max == want) return;
    UFI_LOG_ERROR(Subsys::EpData,
                  "peer {}: the send fast path's gate says {} where its state says {} (a change "
                  "missed refresh_eager_gate)",
                  p.local_idx, p.eager_short_max, want);
    std::abort();
}

ssize_t DataPath::send_buffer_otherwise(ShortSend first, const void *buf, size_t len,
                                        fi_addr_t dest, void *context, uint64_t flags,
                                        uint64_t tag, uint64_t data, bool tagged,
                                        bool inject) noexcept {
    const bool relieved = first != ShortSend::kNotHere;
    if (relieved && relieve_lane(*peers_.for_addr(dest))) {
        // Room again and nothing queued: the short way after all. (Progress may have reset
        // the peer: look it up again.)
        if (try_send_short(peers_.for_addr(dest), buf, len, context, flags, tag, data, tagged,
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
    if (iov.total > cfg_.max_msg_size || iov.total > (tagged ? cfg_.send_max_tagged : cfg_.send_max_msg)) {
        return -FI_EMSGSIZE;
    }
    if ((flags & FI_INJECT) &&
        iov.total > (tagged ? cfg_.inject_tagged_size : cfg_.inject_msg_size)) {
        return -FI_EMSGSIZE;
    }
    Peer *p = peers_.for_addr(dest);
    if (p == nullptr) return -FI_EINVAL;
    const uint32_t wire_flags = (tagged ? uint32_t{wire::kTagged} : 0u) |
                                ((flags & FI_REMOTE_CQ_DATA) ? uint32_t{wire::kHasData} : 0u);
    const bool completion = !inject && (!cfg_.tx_selective || (flags & FI_COMPLETION));
    const bool confirm = completion && !cfg_.datagrams &&
                         (flags & (FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE)) != 0;
    // Completes it at once (UCT copied it, or a datagram was dropped): its entry and counter.
    const auto complete_now = [&]() -> ssize_t {
        if (completion && cfg_.tx_cq != nullptr) {
            Completion c{};
            c.cq = cfg_.tx_cq;
            c.context = context;
            c.flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
            c.src = FI_ADDR_NOTAVAIL;
            completions_.write(c);
        }
        if (cfg_.send_cntr != nullptr) cntr::on_completion(cfg_.send_cntr, iov.total);
        return 0;
    };

    // The fast path: a connected peer with nothing waiting, a message that fits one active
    // message. UCT copies it (short and bcopy), so even FI_INJECT needs no copy of ours and no
    // request record: it is complete when the call returns.
    if (p->state == PeerState::kConnected && p->queue.empty() && p->ctrl.empty() &&
        tx_outstanding_ < tx_size_ &&
        iov.total <= p->rndv_thresh && !confirm && !(flags & FI_FENCE) &&
        p->rma_handed_off == 0 && eager_.fits_single(*p, iov.total, iov.count, wire_flags)) {
        const transports::Status s = eager_.send_single(*p, iov, tag, wire_flags, data);
        if (s == transports::kOk) return complete_now();
        if (s != transports::kNoResource) {
            const int rc = transports::fi_errno_of(s);
            fail_peer(*p, rc);
            return rc;
        }
    }

    if (tx_outstanding_ >= tx_size_) return -FI_EAGAIN;
    if (p->state == PeerState::kKnown) wireup_.connect(*p);
    if (p->state == PeerState::kFailed) {
        if (!cfg_.datagrams) return p->fail_status;
        // A datagram to a peer that cannot be reached is dropped, as UDP drops it: it
        // completes as sent.
        ++stats_.datagrams_dropped;
        return complete_now();
    }
    SendReq *r;
    try {
        r = send_pool_.get();
        r->take_buffers(iov, (flags & FI_INJECT) != 0);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    r->begin(SendOp::kMessage, p->local_idx, context, (flags & FI_FENCE) != 0);
    r->tag = tag;
    r->data = data;
    r->wire_flags = wire_flags;
    r->cq_flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
    r->completion = completion;
    r->confirm = confirm;
    r->injected = (flags & FI_INJECT) != 0;
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
                const int rc = transports::fi_errno_of(s);
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
        if (p->state == PeerState::kKnown) wireup_.connect(*p);
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
    if (sched::held_by_order(p, r, cfg_.ordered)) return transports::kNoResource;
    const transports::Status s = r.op == SendOp::kMessage  ? push_message(p, r)
                                 : r.op == SendOp::kAtomic ? atomics_.push(p, r)
                                                           : rma_.push(p, r);
    if (s == kHandedOff) sched::count_handed_off(p, r);
    return s;
}

void DataPath::drain(Peer &p) noexcept {
    drain_queue(p);
    refresh_eager_gate(p);  // (what went out may open the fast path again)
}

void DataPath::drain_queue(Peer &p) noexcept {
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
            fail_peer(p, transports::fi_errno_of(s));
            return false;
        }
        return true;
    };
    if (!owed(p.reply_unsent, [&] { return wireup_.send_reply(p, p.reply_status, p.reply_to, p.reply_type); }) ||
        !owed(p.request_unsent, [&] { return wireup_.send_request(p); })) {
        return;
    }
    if (p.ack_unsent) {
        // The first message on an endpoint-to-endpoint lane (or the refusal of one): before
        // any traffic.
        if (!owed(p.ack_unsent, [&] { return wireup_.send_wireup_ack(p); })) return;
        if (p.state == PeerState::kConnecting && p.remote_idx != kNoPeer) wireup_.set_connected(p);
    }
    if (p.state != PeerState::kConnected) return;  // the reply will mark it busy (or refuse)
    if (!p.ctrl.empty() && !ctrl_.drain(p)) {
        if (p.state != PeerState::kFailed) mark_busy(p);
        return;
    }
    transports::Status error = transports::kOk;
    const sched::DrainEnd end = sched::drain_sends(
        p, [this](Peer &q, SendReq &r) { return push(q, r); },
        [this](SendReq *r) { finish_send(r, r->status); },
        [&p] { return p.state == PeerState::kFailed; }, error);
    if (end == sched::DrainEnd::kNoRoom) mark_busy(p);
    else if (end == sched::DrainEnd::kError) fail_peer(p, transports::fi_errno_of(error));
}

SendReq *DataPath::new_op(fi_addr_t dest, Peer *&p, ssize_t &rc) noexcept {
    p = peers_.for_addr(dest);
    if (p == nullptr) {
        rc = -FI_EINVAL;
        return nullptr;
    }
    if (tx_outstanding_ >= tx_size_) {
        rc = -FI_EAGAIN;
        return nullptr;
    }
    if (p->state == PeerState::kKnown) wireup_.connect(*p);
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

}  // namespace ufi::runtime::proto
