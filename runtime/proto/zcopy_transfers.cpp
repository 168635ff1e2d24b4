// The zero-copy transfers (zcopy_transfers.h): the table of operations in flight by id (send
// slots, receive slots), the gets a receiver issues and the puts a sender (or an RMA target)
// issues, their completions, the ones a full lane refused (retried from progress), and what a
// peer's failure does to them.
#include "runtime/cntr/binding.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/iov_segments.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace ufi::runtime::proto {

using log::Subsys;
namespace tx = transports;


// ---------------------------------------------------------------------------------------
// Operations in flight, by the id their peer names them with (send and receive slots)


bool ZcopyTransfers::take_send_slot(SendReq &r) noexcept { return sends_.take(r); }

void ZcopyTransfers::release_send_slot(SendReq &r) noexcept {
    if (r.rndv_slot == 0) return;
    sends_.release(r);
    r.rndv = false;
    r.split_copied = false;
    r.split_acked = false;
    r.put_base = 0;
    r.streaming = false;
    r.regions.clear();
    r.keys.clear();
    r.remote.clear();
}

bool ZcopyTransfers::take_recv_slot(RecvReq &r) noexcept { return recvs_.take(r); }

void ZcopyTransfers::release_recv_slot(RecvReq &r) noexcept { recvs_.release(r); }

void ZcopyTransfers::detach_completions() noexcept {
    const auto nothing = [](transports::Completion *) {};
    for (size_t i = 1; i < sends_.size(); ++i) {
        if (sends_[i] != nullptr) sends_[i]->comp.uct.func = nothing;
    }
    for (size_t i = 1; i < recvs_.size(); ++i) {
        if (recvs_[i] != nullptr) recvs_[i]->comp.uct.func = nothing;
    }
}

void ZcopyTransfers::finish_send_rndv(SendReq *r) noexcept {
    if (r->announcing) {
        r->done = true;  // the RTS call's caller finishes it
        return;
    }
    if (hold_from_failed_writer(*r)) return;
    dp_.finish_send(r, r->status);
}

// ---------------------------------------------------------------------------------------
// Buffers a failed peer may still write (zcopy_transfers.h)

bool ZcopyTransfers::writer_failed(int status, uint32_t peer) const noexcept {
    return status != 0 && peer < dp_.peers_.size() && dp_.peers_[peer]->state == PeerState::kFailed;
}

bool ZcopyTransfers::hold_from_failed_writer(RecvReq &r) noexcept {
    if (r.held != HoldState::kNo) return r.held == HoldState::kHeld;  // (finished once, later)
    const bool peer_writes =
        r.rndv_protocol == wire::kRndvPut || r.rndv_protocol == wire::kRndvSplit;
    return peer_writes && writer_failed(r.status, r.peer) && hold(nullptr, &r);
}

bool ZcopyTransfers::hold_from_failed_writer(SendReq &r) noexcept {
    if (r.held != HoldState::kNo) return r.held == HoldState::kHeld;
    // A zero-copy read: the target puts the data into our buffers.
    const bool peer_writes = r.op == SendOp::kRead && r.rma_way == RmaWay::kZeroCopy &&
                             r.rndv_protocol == wire::kRndvPut;
    return peer_writes && writer_failed(r.status, r.peer) && hold(&r, nullptr);
}

bool ZcopyTransfers::hold(SendReq *s, RecvReq *r) noexcept {
    try {
        held_.push_back({s, r, std::chrono::steady_clock::now() + kFailedWriterGrace, 0});
    } catch (const std::bad_alloc &) {
        return false;  // completes now
    }
    (s != nullptr ? s->held : r->held) = HoldState::kHeld;
    ++dp_.stats_.held_from_failed_writers;
    return true;
}

unsigned ZcopyTransfers::release_held() noexcept {
    const auto now = std::chrono::steady_clock::now();
    held_due_.clear();
    for (size_t i = 0; i < held_.size();) {
        Held &h = held_[i];
        if (++h.rounds < kFailedWriterRounds || now < h.until) {
            ++i;
            continue;
        }
        try {
            held_due_.push_back(h);
        } catch (const std::bad_alloc &) {
            break;  // the next call takes the rest
        }
        held_[i] = held_.back();
        held_.pop_back();
    }
    // (Finished after the scan: a completion may run code that holds another, into held_.)
    for (const Held &h : held_due_) {
        if (h.recv != nullptr) {
            h.recv->held = HoldState::kReleased;
            dp_.rndv_.finish_recv(h.recv);
        } else {
            h.send->held = HoldState::kReleased;
            dp_.finish_send(h.send, h.send->status);
        }
    }
    return static_cast<unsigned>(held_due_.size());
}

SendReq *ZcopyTransfers::send_by_id(uint64_t id, uint32_t peer) const noexcept {
    return sends_.find(id, peer);
}

RecvReq *ZcopyTransfers::recv_by_id(uint64_t id, uint32_t peer) const noexcept {
    return recvs_.find(id, peer);
}

// ---------------------------------------------------------------------------------------
// Gets (a rendezvous receiver's), and the memory a receiver or RMA target lets be put into




bool ZcopyTransfers::unpack_keys(Peer &p, const RtsInfo &info, std::vector<tx::PeerKey> &keys) noexcept {
    try {
        keys.clear();
        if (info.rkeys.size() != info.segments.size() * info.rkey_len) return false;
        keys.resize(info.segments.size());
        for (size_t i = 0; i < info.segments.size(); ++i) {
            if (tx::PeerKey::unpack(p.rma.iface(), info.rkeys.data() + i * info.rkey_len,
                                    info.rkey_len, keys[i]) != transports::Status::kOk) {
                keys.clear();
                return false;
            }
        }
        return true;
    } catch (const std::bad_alloc &) {
        keys.clear();
        return false;
    }
}

// Reads the sender's segments into the receive buffer (its first r->length bytes), one get per
// piece, from r->issued on (a full lane leaves the rest to progress).
void ZcopyTransfers::issue_gets(RecvReq *r) noexcept {
    Peer &p = *dp_.peers_[r->peer];
    r->comp.uct.func = [](transports::Completion *c) {
        auto *rc = reinterpret_cast<RndvCompletion *>(c);
        auto *rr = static_cast<RecvReq *>(rc->req);
        if (c->status != transports::Status::kOk && rr->status == 0) rr->status = transports::fi_errno_of(c->status);
        rc->owner->gets_done(rr);
    };
    ++r->comp.uct.count;  // held until every get is issued
    const size_t max_iov = std::max<size_t>(1, std::min(p.rma.max_iov(tx::RmaKind::kGet), kMaxIov));
    const size_t max_len = p.rma.max_get();
    size_t local = r->issued;
    size_t seg_start = 0;
    for (size_t k = 0; k < r->segments.size() && local < r->get_end; ++k) {
        const wire::Segment &seg = r->segments[k];
        const size_t seg_end = seg_start + seg.len;
        while (local < seg_end && local < r->get_end) {
            tx::Iov iov[kMaxIov];
            size_t n = 0;
            const size_t want = std::min({seg_end - local, r->get_end - local, max_len});
            const size_t got = slice(r->iov, local, want, r->regions, iov, max_iov, n);
            const tx::Status s =
                p.rma.get(iov, n, seg.addr + (local - seg_start), r->keys[k].rkey(), &r->comp.uct);
            if (s == tx::kNoResource) {
                r->issued = local;
                try {
                    retry_gets_.push_back(r);  // progress issues the rest
                } catch (const std::bad_alloc &) {
                    r->status = -FI_ENOMEM;
                    r->issued = r->get_end;
                }
                if (--r->comp.uct.count == 0) gets_done(r);
                return;
            }
            if (s == tx::kInProgress) {
                ++r->comp.uct.count;
            } else if (s != tx::kOk) {
                UFI_LOG_INFO(Subsys::EpData, "rendezvous from {}: get failed: {}",
                             tx::address::describe(p.address), tx::to_string(s));
                r->status = transports::fi_errno_of(s);
                r->issued = r->get_end;
                if (--r->comp.uct.count == 0) gets_done(r);
                return;
            }
            local += got;
        }
        seg_start = seg_end;
    }
    r->issued = local;
    if (--r->comp.uct.count == 0) gets_done(r);
}

void ZcopyTransfers::gets_done(RecvReq *r) noexcept {
    if (r->issued < r->get_end && r->status == 0) return;  // progress issues the rest
    if (r->issued < r->get_end) std::erase(retry_gets_, r);  // failed with gets still to issue
    Peer &p = *dp_.peers_[r->peer];
    const uint32_t slot = r->rndv_slot;
    dp_.ctrl_.send_ack(p, wire::kAmAts, r->send_id, r->status);
    if (!recvs_.holds(slot, r)) return;  // the ack failed the peer, which finished it
    if (r->rndv_protocol == wire::kRndvSplit && !dp_.rndv_.split().gets_done(p, *r)) return;
    dp_.rndv_.finish_recv(r);
}



bool ZcopyTransfers::build_rtr_put(Peer &p, const tx::OpenIface &oi, const IovList &iov, size_t length,
                             std::vector<tx::LocalRegion> &regions, uint64_t send_id,
                             uint64_t recv_id, std::vector<uint8_t> &m, size_t from) noexcept {
    if (oi.code == tx::kNoTransport || !register_buffers(oi, iov, length, regions)) return false;
    try {
        // (Scratch kept between calls: no allocation once grown. Built and done with before
        // anything is sent, so a handler run inside a send never finds it in use.)
        uint16_t rkey_len = 0;
        if (segments_and_keys(iov, length, from, regions, rtr_scratch_, rkey_len) != transports::Status::kOk) {
            regions.clear();
            return false;
        }
        const std::vector<wire::Segment> &segs = rtr_scratch_.segs;
        const std::vector<uint8_t> &keys = rtr_scratch_.keys;
        m.clear();
        m.push_back(wire::kAmRtr);
        wire::RtrHdr h{};
        h.src = p.remote_idx;
        h.protocol = from > 0 ? wire::kRndvSplit : wire::kRndvPut;
        h.segments = static_cast<uint8_t>(segs.size());
        h.transport = oi.code;
        h.send_id = send_id;
        h.recv_id = recv_id;
        h.length = length;
        h.rkey_len = rkey_len;
        append_bytes(m, &h, sizeof h);
        append_bytes(m, segs.data(), segs.size() * sizeof(wire::Segment));
        append_bytes(m, keys.data(), keys.size());
        if (segs.size() > wire::kMaxRndvSegments || m.size() - 1 > p.lane.max_bcopy()) {
            regions.clear();
            return false;
        }
        return true;
    } catch (const std::bad_alloc &) {
        regions.clear();
        return false;
    }
}



// ---------------------------------------------------------------------------------------
// Puts (a rendezvous sender's, an RMA target's), and the acknowledgements' parsing


void ZcopyTransfers::issue_puts(SendReq *r) noexcept {
    Peer &p = *dp_.peers_[r->peer];
    // An RMA target reading a peer's zero-copy write gets instead (rma_zcopy.cpp).
    const bool get = r->op == SendOp::kWriteTarget;
    const tx::RmaKind kind = get ? tx::RmaKind::kGet : tx::RmaKind::kPut;
    r->comp.uct.func = [](transports::Completion *c) {
        auto *rc = reinterpret_cast<RndvCompletion *>(c);
        auto *sr = static_cast<SendReq *>(rc->req);
        if (c->status != transports::Status::kOk && sr->status == 0) sr->status = transports::fi_errno_of(c->status);
        rc->owner->puts_done(sr);
    };
    ++r->comp.uct.count;  // held until every put is issued
    const size_t max_iov = std::max<size_t>(1, std::min(p.rma.max_iov(kind), kMaxIov));
    const size_t max_len = get ? p.rma.max_get() : p.rma.max_put();
    size_t local = r->offset;
    size_t seg_start = r->put_base;
    for (size_t k = 0; k < r->remote.size() && local < r->length; ++k) {
        const wire::Segment &seg = r->remote[k];
        const size_t seg_end = seg_start + seg.len;
        while (local < seg_end) {
            tx::Iov iov[kMaxIov];
            size_t n = 0;
            const size_t want = std::min(seg_end - local, max_len);
            const size_t got = slice(r->iov, local, want, r->regions, iov, max_iov, n);
            const uint64_t remote_addr = seg.addr + (local - seg_start);
            const tx::Status s = get ? p.rma.get(iov, n, remote_addr, r->keys[k].rkey(), &r->comp.uct)
                                     : p.rma.put(iov, n, remote_addr, r->keys[k].rkey(), &r->comp.uct);
            if (s == tx::kNoResource) {
                r->offset = local;
                try {
                    retry_puts_.push_back(r);  // progress issues the rest
                } catch (const std::bad_alloc &) {
                    r->status = -FI_ENOMEM;
                    r->offset = r->length;
                }
                if (--r->comp.uct.count == 0) puts_done(r);
                return;
            }
            if (s == tx::kInProgress) {
                ++r->comp.uct.count;
            } else if (s != tx::kOk) {
                UFI_LOG_INFO(Subsys::EpData, "zero copy with {}: {} failed: {}",
                             tx::address::describe(p.address), get ? "get" : "put",
                             tx::to_string(s));
                r->status = transports::fi_errno_of(s);
                r->offset = r->length;
                if (--r->comp.uct.count == 0) puts_done(r);
                return;
            }
            local += got;
        }
        seg_start = seg_end;
    }
    r->offset = local;
    // A write we put: on the AM lane's own connection its puts stay ahead of what is sent
    // after them, so what waited behind it may go now.
    if (r->op == SendOp::kWrite && p.rma.shares_lane()) dp_.rma_zcopy_.release_put_hold(*r);
    if (--r->comp.uct.count == 0) puts_done(r);
}

void ZcopyTransfers::puts_done(SendReq *r) noexcept {
    if (r->offset < r->length && r->status == 0) return;  // progress issues the rest
    if (r->offset < r->length) std::erase(retry_puts_, r);  // failed with puts still to issue
    Peer &p = *dp_.peers_[r->peer];
    if (r->op == SendOp::kWrite) {
        // An RMA write we put: its puts completed (tcp: the target's iface acknowledged each,
        // so the bytes are in place), which completes it, with no answer to wait for: an
        // application polling the target's memory may stop progressing once it sees them.
        // RMA_WRITE_DONE has the target count it (counters, CQ data) and free its grant.
        dp_.rma_zcopy_.release_put_hold(*r);
        const uint32_t slot = r->rndv_slot;
        dp_.ctrl_.send_ack(p, wire::kAmRmaWriteDone, r->recv_id, r->status);
        if (sends_.holds(slot, r)) finish_send_rndv(r);  // (else the ack failed the peer)
        return;
    }
    if (r->op != SendOp::kMessage) {
        dp_.rma_zcopy_.done(r);
        return;
    }
    // The puts completed (tcp: the receiver acknowledged them), so the data is in place when
    // ATP arrives, whatever lane it takes.
    const uint32_t slot = r->rndv_slot;
    dp_.ctrl_.send_ack(p, wire::kAmAtp, r->recv_id, r->status);
    if (!sends_.holds(slot, r)) return;  // the ack failed the peer, which finished it
    if (r->rndv_protocol == wire::kRndvSplit && !dp_.rndv_.split().puts_done(p, *r)) return;
    finish_send_rndv(r);
}





// ---------------------------------------------------------------------------------------
// Retries (a lane that had no room for a get or put) and a failed peer's transfers

unsigned ZcopyTransfers::retry() noexcept {
    unsigned n = 0;
    if (!retry_gets_.empty()) {
        std::vector<RecvReq *> gets;
        gets.swap(retry_gets_);
        for (RecvReq *r : gets) {
            issue_gets(r);
            ++n;
        }
    }
    if (!retry_puts_.empty()) {
        std::vector<SendReq *> puts;
        puts.swap(retry_puts_);
        for (SendReq *r : puts) {
            issue_puts(r);
            ++n;
        }
    }
    return n;
}

void ZcopyTransfers::fail(Peer &p, bool force) noexcept {
    // Transfers with zero-copy operations still in flight finish from their completion (with
    // this error); the others now.
    for (size_t i = 1; i < sends_.size(); ++i) {
        SendReq *r = sends_[i];
        if (r == nullptr || r->peer != p.local_idx) continue;
        if (r->status == 0) r->status = p.fail_status;
        std::erase(retry_puts_, r);
        r->offset = r->length;
        if (force || r->comp.uct.count == 0 || r->recv_id == 0 || r->streaming) {
            r->comp.uct.count = 0;
            finish_send_rndv(r);
        }
    }
    for (size_t i = 1; i < recvs_.size(); ++i) {
        RecvReq *r = recvs_[i];
        if (r == nullptr || r->peer != p.local_idx) continue;
        if (r->status == 0) r->status = p.fail_status;
        std::erase(retry_gets_, r);
        r->issued = r->length;
        if (force || r->comp.uct.count == 0) {
            r->comp.uct.count = 0;
            dp_.rndv_.finish_recv(r);
        }
    }
}

}  // namespace ufi::runtime::proto
