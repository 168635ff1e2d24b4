// The data path's common cases, inline where they are called: a one-buffer send that fits one
// short active message to a connected peer, a one-buffer receive posted with nothing
// unexpected waiting (both from api/ep_data.cpp), and on arrival the match against the posted
// receives and the completion (from the protocols' handlers). They do what DataPath::send()
// and recv_buffer_slow() do for the same operation, with no list, request record or call layer
// between the call and the lane; anything else goes to those. Kept apart from data_path.h so
// that only the callers pay for compiling them.
#pragma once

#include "runtime/cntr/binding.h"
#include "runtime/cq/cq.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstring>

namespace ufi::runtime::proto {

// An eager message as one am_short stages it: UCT's 8-byte short header carries the tag, and
// `out` gets the rest of wire::EagerHdr (the sender's index at the receiver, the flags), the
// CQ data when wire_flags has it, then the payload. Returns the bytes staged. The caller
// checked that they fit kStagedShort and the lane's short limit.
inline size_t stage_eager_short(uint8_t *out, uint32_t remote_idx, uint32_t wire_flags,
                                uint64_t data, const void *buf, size_t len) noexcept {
    const uint32_t words[2] = {remote_idx, wire_flags};
    std::memcpy(out, words, sizeof words);
    size_t at = sizeof words;
    if (wire_flags & wire::kHasData) {
        std::memcpy(out + at, &data, sizeof data);
        at += sizeof data;
    }
    copy_bytes(out + at, buf, len);
    return at + len;
}

[[gnu::always_inline]] inline DataPath::ShortSend DataPath::try_send_short(Peer *p, const void *buf, size_t len,
                                                     void *context, uint64_t flags, uint64_t tag,
                                                     uint64_t data, bool tagged,
                                                     bool inject) noexcept {
    if (p == nullptr) return ShortSend::kNotHere;
#ifdef UFI_CHECK_INVARIANTS
    check_eager_gate(*p);
#endif
    const bool has_data = (flags & FI_REMOTE_CQ_DATA) != 0;
    // One compare for the peer (Peer::eager_short_max): connected, nothing queued or awaited
    // (control messages that found no room go first too: RMA_WRITE_DONE must precede what the
    // application sends after the write completed; ordered endpoints: messages wait behind
    // RMA), and the message fits one am_short, its CQ data included.
    if (static_cast<int64_t>(len + (has_data ? sizeof(uint64_t) : 0)) > p->eager_short_max)
        [[unlikely]] {
        return p->state == PeerState::kConnected && (!p->queue.empty() || !p->ctrl.empty())
                   ? ShortSend::kQueueWaits
                   : ShortSend::kNotHere;
    }
    if (tx_outstanding_ >= tx_size_ ||
        (flags & (FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE | FI_FENCE)) ||
        ((flags & FI_INJECT) &&
         len > (tagged ? cfg_.inject_tagged_size : cfg_.inject_msg_size))) {
        return ShortSend::kNotHere;
    }
    uint8_t staged[kStagedShort];
    const uint32_t wire_flags = (tagged ? uint32_t{wire::kTagged} : 0u) |
                                (has_data ? uint32_t{wire::kHasData} : 0u);
    const size_t n = stage_eager_short(staged, p->remote_idx, wire_flags, data, buf, len);
    const transports::Status s =
        p->lane.send_short(wire::kAmEager, tag, staged, static_cast<unsigned>(n));
    if (s != transports::kOk) [[unlikely]] {
        // A full lane: relieve_lane() may make room. A failed one fails the peer in send().
        return s == transports::kNoResource ? ShortSend::kLaneFull : ShortSend::kNotHere;
    }
    note_sent(*p);
    // UCT copied it: complete when the call returns, FI_INJECT included.
    if (!inject && (!cfg_.tx_selective || (flags & FI_COMPLETION)) && cfg_.tx_cq != nullptr) {
        const uint64_t cq_flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
        if (completions_.waiting() || cfg_.tx_cq->write(context, cq_flags, 0, nullptr, 0, 0) != 0) {
            Completion c{};
            c.cq = cfg_.tx_cq;
            c.context = context;
            c.flags = cq_flags;
            c.src = FI_ADDR_NOTAVAIL;
            completions_.write(c);  // behind the completions a full CQ holds back
        }
    }
    if (cfg_.send_cntr != nullptr) cntr::on_completion(cfg_.send_cntr, len);
    return ShortSend::kSent;
}

inline ssize_t DataPath::send_buffer(const void *buf, size_t len, fi_addr_t dest, void *context,
                                     uint64_t flags, uint64_t tag, uint64_t data, bool tagged,
                                     bool inject) noexcept {
    Peer *p = peers_.for_addr(dest);
    const ShortSend s = try_send_short(p, buf, len, context, flags, tag, data, tagged, inject);
    if (s == ShortSend::kSent) [[likely]]
        return 0;
    return send_buffer_otherwise(s, buf, len, dest, context, flags, tag, data, tagged, inject);
}

// The largest RMA_WRITE_SHORT staged on the stack (headers included): above ufi's
// shared-memory short limit (UFI_SHM_FIFO_ELEM_SIZE); tcp's larger one takes writes up to it.
inline constexpr size_t kStagedWriteShort = 1024;

// RMA_WRITE_SHORT's headers staged in `out` (wire::RmaShortHdr, the CQ data when flags have
// it); returns where the payload goes.
inline size_t stage_write_short(uint8_t *out, uint32_t remote_idx, uint32_t flags, uint64_t id,
                                uint64_t key, uint64_t addr, uint64_t data) noexcept {
    const wire::RmaShortHdr h{remote_idx, flags, id, key, addr};
    std::memcpy(out, &h, sizeof h);
    if (!(flags & wire::kRmaHasData)) return sizeof h;
    std::memcpy(out + sizeof h, &data, sizeof data);
    return sizeof h + sizeof data;
}

inline bool RmaProtocol::fits_write_short(const Peer &p, size_t len, bool has_data) const noexcept {
    const size_t n = sizeof(wire::RmaShortHdr) + (has_data ? sizeof(uint64_t) : 0) + len;
    return n <= kStagedWriteShort && n <= p.lane.max_short();
}

inline transports::Status DataPath::send_staged(Peer &p, uint8_t id, const uint8_t *staged,
                                                size_t n) noexcept {
    // UCT's 8-byte short header is the message's first word: the receiver sees the same bytes
    // as from a bcopy of the whole.
    uint64_t head;
    std::memcpy(&head, staged, sizeof head);
    note_sent(p);  // (an answer is often awaited from it: warm its lane meanwhile)
    return p.lane.send_short(id, head, staged + sizeof head, static_cast<unsigned>(n - sizeof head));
}

inline bool RmaProtocol::write_untracked(Peer &p, const void *buf, size_t len, uint64_t key,
                                         uint64_t addr, uint64_t flags, uint64_t data) noexcept {
    const bool has_data = (flags & FI_REMOTE_CQ_DATA) != 0;
    // Whatever would make push() hold it or take another protocol goes the record's way: a
    // peer not connected or with sends queued, a fence, an ordered endpoint with an
    // operation in flight, the zero-copy size, a write too large for one short message.
    if (p.state != PeerState::kConnected || !p.queue.empty() || !p.ctrl.empty() ||
        dp_.tx_outstanding_ >= dp_.tx_size_ ||
        (flags & FI_FENCE) || (dp_.cfg_.ordered && p.handed_off > 0) || p.put_writes_held > 0 ||
        (len != 0 && len >= p.rma_thresh) || !fits_write_short(p, len, has_data)) {
        return false;
    }
    uint8_t staged[kStagedWriteShort];
    size_t n = stage_write_short(staged, p.remote_idx, has_data ? uint32_t{wire::kRmaHasData} : 0u,
                                 wire::kRmaUntracked | len, key, addr, data);
    copy_bytes(staged + n, buf, len);
    n += len;
    // Counted before it goes: over `self` the acknowledgement arrives inside the call. A
    // fence or an ordered operation behind it waits for it like for any write handed off.
    ++dp_.tx_outstanding_;
    ++p.handed_off;
    ++p.rma_handed_off;
    ++p.untracked_writes;
    p.eager_short_max = -1;  // messages wait behind it (dp_.refresh_eager_gate)
    if (dp_.send_staged(p, wire::kAmRmaWriteShort, staged, n) == transports::kOk) [[likely]]
        return true;
    --dp_.tx_outstanding_;
    --p.handed_off;
    --p.rma_handed_off;
    --p.untracked_writes;
    dp_.refresh_eager_gate(p);
    return false;  // no room (it queues) or a failed lane (fails the peer): the record's path
}

inline ssize_t RmaProtocol::inject_write(const void *buf, size_t len, fi_addr_t dest,
                                         uint64_t key, uint64_t addr, uint64_t flags, uint64_t data) noexcept {
    Peer *p = dp_.peers_.for_addr(dest);
    if (p != nullptr && len <= dp_.cfg_.inject_rma_size &&
        write_untracked(*p, buf, len, key, addr, flags, data)) {
        return 0;
    }
    IovList local;
    local.set(buf, len);
    const wire::RmaSeg seg{key, addr, len};
    return start(SendOp::kWrite, local, &seg, 1, dest, nullptr, flags, data, true);
}

inline ssize_t DataPath::inject_write(const void *buf, size_t len, fi_addr_t dest, uint64_t key,
                                      uint64_t addr, uint64_t flags, uint64_t data) noexcept {
    return rma_.inject_write(buf, len, dest, key, addr, flags, data);
}

inline void DataPath::fill_recv(RecvReq *r, uint32_t from, void *context, uint64_t flags,
                                uint64_t tag, uint64_t ignore, bool tagged) noexcept {
    r->tagged = tagged;
    r->src = from;
    r->tag = tag;
    r->ignore = ignore;
    r->context = context;
    r->completion = !cfg_.rx_selective || (flags & FI_COMPLETION);
    // (rx op_flags may carry FI_MULTI_RECV to fi_trecv: it applies where the caps allow it)
    r->multi = (flags & FI_MULTI_RECV) != 0 && (!tagged || tagged_multi_recv_);
    r->multi_offset = 0;
    r->children = 0;
    r->released = false;
    r->parent = nullptr;
}

inline ssize_t DataPath::recv_buffer(void *buf, size_t len, fi_addr_t src, void *context,
                                     uint64_t flags, uint64_t tag, uint64_t ignore,
                                     bool tagged) noexcept {
    // Any source (or an endpoint that does not match sources), or a source whose peer the
    // address cache holds (Open MPI's MTL directs every receive that names a rank); nothing
    // unexpected to match, room, a pooled record, not a multi-receive buffer.
    flush_demote();  // (a receive posted: the answer before it went out, its peer reads next)
    uint32_t from = kNoPeer;
    if (source_rule_.directed(tagged) && (src != FI_ADDR_UNSPEC || source_rule_.exact)) {
        from = peers_.cached(src);  // FI_ADDR_UNSPEC (exact directed: refused) holds none
        if (from == kNoPeer) return recv_buffer_slow(buf, len, src, context, flags, tag, ignore, tagged);
    }
    // (A directed receive once a peer failed: post_recv looks at its peer.)
    if ((flags & FI_MULTI_RECV) || rx_posted_ >= rx_size_ || match_.has_unexpected(tagged) ||
        (failed_peers_ != 0 && from != kNoPeer)) {
        return recv_buffer_slow(buf, len, src, context, flags, tag, ignore, tagged);
    }
    RecvReq *r = recv_pool_.get_pooled();
    if (r == nullptr) return recv_buffer_slow(buf, len, src, context, flags, tag, ignore, tagged);
    fill_recv(r, from, context, flags, tag, ignore, tagged);
    r->iov.set(buf, len);
    ++rx_posted_;
    match_.post(r, tagged);
    return 0;
}

inline RecvReq *DataPath::match_posted(uint32_t src, bool tagged, uint64_t tag,
                                       size_t len) noexcept {
    RecvReq *r = match_.first_posted(src, tagged, tag);
    if (r == nullptr) return nullptr;
    if (r->multi) return place_in(r, len);  // nullptr: kept as unexpected
    match_.unpost(r, tagged);
    return r;
}

inline void DataPath::complete_recv(RecvReq *r, uint32_t src, uint32_t wire_flags, uint64_t tag,
                                    uint64_t data, size_t msg_len) noexcept {
    Peer *sender = src < peers_.size() ? peers_[src].get() : nullptr;
    fi_addr_t from = sender != nullptr ? sender->report_id : FI_ADDR_NOTAVAIL;
    if (from == FI_ADDR_NOTAVAIL && sender != nullptr) from = peers_.source_of(*sender);
    // FI_SOURCE_ERR: a sender not in the AV makes this an error entry (the data is delivered).
    const bool unknown = cfg_.source_err && from == FI_ADDR_NOTAVAIL && sender != nullptr;
    if (msg_len <= r->iov.total && !unknown && r->completion && r->parent == nullptr &&
        !completions_.waiting() && cfg_.rx_cq != nullptr) {
        // The common case, straight into the CQ ring.
        const bool has_data = (wire_flags & wire::kHasData) != 0;
        if (cfg_.rx_cq->write(
                r->context,
                FI_RECV | (r->tagged ? FI_TAGGED : FI_MSG) | (has_data ? FI_REMOTE_CQ_DATA : 0),
                msg_len, nullptr, has_data ? data : 0, r->tagged ? tag : 0, from) == 0) {
            if (cfg_.recv_cntr != nullptr) cntr::on_completion(cfg_.recv_cntr, msg_len);
            --rx_posted_;
            recv_pool_.put(r);
            return;
        }
    }
    complete_recv_slow(r, src, wire_flags, tag, data, msg_len, from, unknown);
}

}  // namespace ufi::runtime::proto
