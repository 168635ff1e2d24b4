// The receive side of messages: fi_recv*/fi_trecv* calls that the inline common case
// (fast_path.h) did not take, matching a new receive against the unexpected messages
// (match.h), multi-receive buffers, eager messages arriving (whole, or as a first fragment and
// middle ones) and kept as unexpected until a receive takes them, and the completion of a
// receive, with its errors (truncation, an unknown sender with FI_SOURCE_ERR). The arrival
// handlers live beside the functions they call, so that the compiler sees what those clobber
// (cross-file calls cost the common receive about 14 instructions in saved registers).
// Rendezvous arrivals are rndv_protocol.cpp's.
#include "runtime/av/binding.h"
#include "runtime/av/socket_format.h"
#include "runtime/cntr/binding.h"
#include "runtime/cq/cq.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"
#include "transports/address_name.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;

namespace {

// Bytes reserved at once for an unexpected multi-fragment message (more as they arrive).
constexpr size_t kUnexpectedReserve = 1 << 20;

}  // namespace

uint32_t DataPath::recv_source(fi_addr_t src, bool tagged, ssize_t &rc) noexcept {
    if (!source_rule_.directed(tagged)) return kNoPeer;  // src is ignored
    if (src == FI_ADDR_UNSPEC) {
        if (!source_rule_.exact) return kNoPeer;
        UFI_LOG_INFO(Subsys::EpData,
                     "receive from FI_ADDR_UNSPEC on an FI_EXACT_DIRECTED_RECV endpoint");
        rc = -FI_EINVAL;
        return kNoPeer;
    }
    Peer *p = peers_.for_addr(src);
    if (p == nullptr) {
        rc = -FI_EINVAL;
        return kNoPeer;
    }
    return p->local_idx;
}

RecvReq *DataPath::new_recv(fi_addr_t src, void *context, uint64_t flags, uint64_t tag,
                            uint64_t ignore, bool tagged, ssize_t &rc) noexcept {
    if (connection_over_) {
        UFI_LOG_INFO(Subsys::EpData, "fi_recv: the endpoint's connection is over");
        rc = -FI_ENOTCONN;
        return nullptr;
    }
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
        rndv_.start_recv(r, src, wire_flags, tag, data, info);
        return;
    }
    if (u->received == u->total) {
        r->iov.copy_in(0, u->payload(), u->total);
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
    if (r->src != kNoPeer && failed_peers_ != 0 && peers_[r->src]->state == PeerState::kFailed) {
        // Directed at a failed peer, and nothing it sent before is waiting: nothing will
        // fill it (tell_receivers()).
        r->msg_tag = r->tag;
        ++stats_.directed_recvs_failed;
        complete_recv_error(r, r->src, -peers_[r->src]->fail_status, 0);
        return 0;
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
    if ((completion || (c.flags & FI_MULTI_RECV)) && c.cq != nullptr) completions_.write(c);
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
    c.src = src < peers_.size() ? peers_.source_of(*peers_[src]) : FI_ADDR_NOTAVAIL;
    c.err = err;
    if (r->parent != nullptr) c.buf = r->iov.v[0].base;
    if (cfg_.recv_cntr != nullptr) cntr::on_error(cfg_.recv_cntr);
    c.flags |= retire_recv(r);
    if (c.cq != nullptr) completions_.write(c);
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

void DataPath::release_desc(UnexpMsg *u) noexcept {
    if (u->desc == nullptr) return;
    transports::release_am_desc(u->desc, worker_->rx_headroom());
    u->desc = nullptr;
    u->kept = nullptr;
    --descs_held_;
}

void DataPath::retire_unexpected(UnexpMsg *u) noexcept {
    release_desc(u);
    u->claimed = nullptr;
    u->claim_ctx = nullptr;
    u->discarded = false;
    u->rts = false;
    u->sender_gone = false;
    u->received = u->total = 0;
    unexp_pool_.put(u);
}


// ---------------------------------------------------------------------------------------
// Eager arrivals (EagerProtocol, eager_protocol.h): here, beside the functions they call.

bool EagerProtocol::arrive(const uint8_t *data, size_t length, void *desc) noexcept {
    wire::EagerHdr h;
    if (length < sizeof h) {
        ++dp_.stats_.dropped_malformed;
        return false;
    }
    std::memcpy(&h, data, sizeof h);
    const uint8_t *payload = data + sizeof h;
    size_t len = length - sizeof h;
    uint64_t cq_data = 0;
    if (h.flags & wire::kHasData) {
        if (len < sizeof cq_data) {
            ++dp_.stats_.dropped_malformed;
            return false;
        }
        std::memcpy(&cq_data, payload, sizeof cq_data);
        payload += sizeof cq_data;
        len -= sizeof cq_data;
    }
    if (!dp_.from_connected(h.src, wire::kAmEager, data, length)) return false;
    const bool tagged = (h.flags & wire::kTagged) != 0;
    if (RecvReq *r = dp_.match_posted(h.src, tagged, h.tag, len)) {
        r->iov.copy_in(0, payload, len);
        dp_.complete_recv(r, h.src, h.flags, h.tag, cq_data, len);
        return false;
    }
    try {
        UnexpMsg *u = dp_.new_unexpected(h, cq_data, len, len);
        // In a descriptor the transport lets us keep: kept there until a receive takes it
        // (a bounded number of them: each holds one of the transport's receive buffers).
        const bool keep = desc != nullptr && dp_.descs_held_ < kMaxDescsHeld;
        if (keep) {
            u->desc = desc;
            u->kept = payload;
            ++dp_.descs_held_;
            ++dp_.stats_.unexpected_kept;
        } else {
            u->bytes.assign(payload, payload + len);
        }
        dp_.match_.add_unexpected(u);
        return keep;
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: an unexpected message of {} bytes is dropped",
                     len);
        return false;
    }
}

void EagerProtocol::handle_first(const uint8_t *data, size_t length) noexcept {
    wire::EagerHdr h;
    wire::FirstHdr f;
    if (length < sizeof h + sizeof f) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    std::memcpy(&f, data + sizeof h, sizeof f);
    const uint8_t *payload = data + sizeof h + sizeof f;
    size_t len = length - sizeof h - sizeof f;
    uint64_t cq_data = 0;
    if (h.flags & wire::kHasData) {
        if (len < sizeof cq_data) {
            ++dp_.stats_.dropped_malformed;
            return;
        }
        std::memcpy(&cq_data, payload, sizeof cq_data);
        payload += sizeof cq_data;
        len -= sizeof cq_data;
    }
    if (!dp_.from_connected(h.src, wire::kAmEagerFirst, data, length)) return;
    Peer &p = *dp_.peers_[h.src];
    if (p.rx_recv != nullptr || p.rx_unexp != nullptr || len > f.total ||
        f.total > dp_.cfg_.max_msg_size) {
        // A sender sends one message's fragments at a time, none beyond max_msg_size (the
        // unexpected copy would take that much memory).
        ++dp_.stats_.dropped_malformed;
        return;
    }
    const bool tagged = (h.flags & wire::kTagged) != 0;
    p.rx_msg_id = f.msg_id;
    p.rx_total = f.total;
    p.rx_received = len;
    p.rx_flags = h.flags;
    p.rx_tag = tagged ? h.tag : 0;
    p.rx_data = cq_data;
    if (RecvReq *r = dp_.match_posted(h.src, tagged, h.tag, f.total)) {
        r->iov.copy_in(0, payload, len);
        p.rx_recv = r;
        ++dp_.partial_rx_;
        return;
    }
    try {
        UnexpMsg *u = dp_.new_unexpected(h, cq_data, f.total, len);
        // Grown as fragments arrive (never sized from the header: a peer's claim of a huge
        // message must not make this side allocate it before the bytes come).
        u->bytes.assign(payload, payload + len);
        u->bytes.reserve(std::min<size_t>(f.total, kUnexpectedReserve));
        dp_.match_.add_unexpected(u);
        p.rx_unexp = u;
        ++dp_.partial_rx_;
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: an unexpected message of {} bytes is dropped",
                     f.total);
        p.rx_total = 0;
    }
}

void EagerProtocol::handle_middle(const uint8_t *data, size_t length) noexcept {
    wire::MiddleHdr m;
    if (length < sizeof m) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    std::memcpy(&m, data, sizeof m);
    if (!dp_.from_connected(m.src, wire::kAmEagerMiddle, data, length)) return;
    Peer &p = *dp_.peers_[m.src];
    const uint8_t *payload = data + sizeof m;
    const size_t len = length - sizeof m;
    if ((p.rx_recv == nullptr && p.rx_unexp == nullptr) || m.msg_id != p.rx_msg_id ||
        m.offset != p.rx_received || len > p.rx_total - p.rx_received) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    p.rx_received += len;
    const bool done = p.rx_received == p.rx_total;
    if (RecvReq *r = p.rx_recv) {
        r->iov.copy_in(m.offset, payload, len);
        if (done) {
            p.rx_recv = nullptr;
            --dp_.partial_rx_;
            dp_.complete_recv(r, m.src, p.rx_flags, p.rx_tag, p.rx_data, p.rx_total);
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
                dp_.match_.remove_unexpected(u);
                if (u->claim_ctx != nullptr) dp_.claimed_.erase(u->claim_ctx);
                u->claim_ctx = nullptr;
            }
        }
    }
    u->received = p.rx_received;
    if (!done) return;
    p.rx_unexp = nullptr;
    --dp_.partial_rx_;
    if (RecvReq *r = u->claimed) {
        if (u->discarded) {
            r->msg_tag = u->tag;
            dp_.complete_recv_error(r, u->src, FI_ENOMEM, 0);
        } else {
            r->iov.copy_in(0, u->bytes.data(), u->total);
            dp_.complete_recv(r, u->src, u->wire_flags, u->tag, u->data, u->total);
        }
        dp_.retire_unexpected(u);
    } else if (u->discarded) {
        dp_.retire_unexpected(u);
    }
}

std::span<const MessageHandler> EagerProtocol::handlers() noexcept {
    // Counted (true): the messages a stream is made of (DataPath::trampoline).
    static constexpr MessageHandler kRows[] = {
        DataPath::keeping_row<&DataPath::eager_, &EagerProtocol::arrive>(wire::kAmEager),
        DataPath::module_row<&DataPath::eager_, &EagerProtocol::handle_first, true>(
            wire::kAmEagerFirst),
        DataPath::module_row<&DataPath::eager_, &EagerProtocol::handle_middle, false>(
            wire::kAmEagerMiddle),
    };
    return kRows;
}

}  // namespace ufi::runtime::proto
