// RMA moved zero copy, one protocol module (rma_zcopy.h).
#include "runtime/proto/rma_zcopy.h"

#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/iov_segments.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/wire.h"
#include "transports/address_name.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <cstring>
#include <new>
#include <vector>

namespace ufi::runtime::proto {

using log::Subsys;
namespace tx = transports;

namespace {

// A message built in a vector (the AM id is not in it).
size_t pack_vector(void *dest, void *arg) {
    const auto *m = static_cast<const std::vector<uint8_t> *>(arg);
    std::memcpy(dest, m->data(), m->size());
    return m->size();
}

}  // namespace

bool RmaZcopyProtocol::fits(const Peer &p, const SendReq &r) const noexcept {
    // (An injected write goes by active messages: its caller may never progress the endpoint
    // for it again, and a write we put waits for the target's grant.)
    if ((r.op != SendOp::kWrite && r.op != SendOp::kRead) || r.iov.total == 0 || r.injected ||
        r.iov.total < p.rma_thresh || p.rma_iface == SIZE_MAX) {
        return false;
    }
    const tx::TransportCode transport = dp_.worker_->ifaces()[p.rma_iface]->code;
    if (transport == tx::kNoTransport) return false;
    const size_t head = sizeof(wire::RmaHdr) + r.rma.size() * sizeof(wire::RmaSeg) +
                        sizeof(wire::RmaZcopyHdr);
    if (r.op == SendOp::kWrite && p.rndv_protocol == wire::kRndvPut) {
        // We put it once the target granted it: the request names the transport alone.
        return dp_.zcopy_.zcopy_iface(p, transport, tx::RmaKind::kPut) != nullptr &&
               head <= p.lane.max_bcopy();
    }
    // The target gets a write from our buffers, and puts a read into them.
    const tx::RmaKind kind = r.op == SendOp::kWrite ? tx::RmaKind::kGet : tx::RmaKind::kPut;
    const tx::OpenIface *oi = dp_.zcopy_.zcopy_iface(p, transport, kind);
    if (oi == nullptr || !tx::zcopy_permitted(*oi) || r.iov.count > wire::kMaxRndvSegments) {
        return false;
    }
    size_t named = 0;  // the buffers the request names (empty ones are left out)
    for (size_t i = 0; i < r.iov.count; ++i) named += r.iov.v[i].len != 0 ? 1 : 0;
    return head + named * (sizeof(wire::Segment) + oi->rkey_packed_size) <= p.lane.max_bcopy();
}

bool RmaZcopyProtocol::choose(Peer &p, SendReq &r) noexcept {
    if (r.rma_way != RmaWay::kUndecided) return r.rma_way == RmaWay::kZeroCopy;
    r.rma_way = RmaWay::kActiveMessages;
    if (!fits(p, r)) return false;
    if (!(r.op == SendOp::kWrite && p.rndv_protocol == wire::kRndvPut)) {
        // The target reads or writes our buffers: they register now (the write we put
        // registers its own when the grant came, where the transport needs a local handle).
        const tx::TransportCode transport = dp_.worker_->ifaces()[p.rma_iface]->code;
        const tx::RmaKind kind = r.op == SendOp::kWrite ? tx::RmaKind::kGet : tx::RmaKind::kPut;
        const tx::OpenIface *oi = dp_.zcopy_.zcopy_iface(p, transport, kind);
        if (r.regions.empty() && !dp_.zcopy_.register_buffers(*oi, r.iov, r.iov.total, r.regions)) {
            UFI_LOG_DEBUG(Subsys::EpData,
                          "RMA of {} B to {}: its buffers cannot be registered; sent by active messages",
                          r.iov.total, tx::address::describe(p.address));
            return false;
        }
    }
    r.rma_way = RmaWay::kZeroCopy;
    return true;
}

void RmaZcopyProtocol::release_put_hold(SendReq &r) noexcept {
    if (!r.holds_peer) return;
    r.holds_peer = false;
    if (r.peer >= dp_.peers_.size()) return;
    Peer &p = *dp_.peers_[r.peer];
    if (--p.put_writes_held == 0 && !p.queue.empty()) dp_.mark_busy(p);  // progress sends them
}

tx::Status RmaZcopyProtocol::send(Peer &p, SendReq &r) noexcept {
    // (choose() said so: the transport, its iface and the request's size are settled, the
    // buffers registered.)
    const tx::TransportCode transport = dp_.worker_->ifaces()[p.rma_iface]->code;
    r.recv_id = 0;
    if (r.op == SendOp::kWrite && p.rndv_protocol == wire::kRndvPut) {
        return send_write_put(p, r, transport);
    }
    try {
        uint16_t rkey_len = 0;
        const tx::Status packed = segments_and_keys(r.iov, r.iov.total, 0, r.regions, scratch_, rkey_len);
        if (packed != tx::kOk) {
            UFI_LOG_WARN(Subsys::EpData, "RMA of {} B to {}: a registered buffer's key cannot be packed",
                         r.iov.total, tx::address::describe(p.address));
            return packed;
        }
        const std::vector<wire::Segment> &segs = scratch_.segs;
        const std::vector<uint8_t> &keys = scratch_.keys;
        std::vector<uint8_t> &m = scratch_.msg;
        m.clear();
        const wire::RmaHdr h{p.remote_idx,
                             r.rma_flags | wire::kRmaZcopy,
                             r.rndv_slot,
                             r.iov.total,
                             0,
                             r.rma_data,
                             static_cast<uint32_t>(r.rma.size()),
                             0};
        const wire::RmaZcopyHdr z{static_cast<uint8_t>(segs.size()), transport, rkey_len, 0};
        m.reserve(sizeof h + r.rma.size() * sizeof(wire::RmaSeg) + sizeof z +
                  segs.size() * sizeof(wire::Segment) + keys.size());
        append_bytes(m, &h, sizeof h);
        append_bytes(m, r.rma.data(), r.rma.size() * sizeof(wire::RmaSeg));
        append_bytes(m, &z, sizeof z);
        append_bytes(m, segs.data(), segs.size() * sizeof(wire::Segment));
        append_bytes(m, keys.data(), keys.size());
        if (m.size() > p.lane.max_bcopy()) {
            // (fits() decided it does from the iface's packed key size: a mismatch is a bug
            // of ours, reported as one.)
            UFI_LOG_ERROR(Subsys::EpData, "a zero-copy RMA request of {} bytes exceeds the lane's {}",
                          m.size(), p.lane.max_bcopy());
            return tx::Status::kExceedsLimit;
        }
        // The read's answer comes without data (done()'s offset == total).
        r.rndv_protocol = r.op == SendOp::kRead ? wire::kRndvPut : wire::kRndvGet;
        const uint8_t id = r.op == SendOp::kWrite ? wire::kAmRmaWrite : wire::kAmRmaReadReq;
        return status_of_bcopy(p.lane.send_bcopy(id, pack_vector, &m));
    } catch (const std::bad_alloc &) {
        return tx::Status::kNoMemory;
    }
}

tx::Status RmaZcopyProtocol::send_write_put(Peer &p, SendReq &r, tx::TransportCode transport) noexcept {
    // A transport that puts but cannot get (tcp): we write the target's memory once it granted
    // it (RTR); the request names only the transport. Our buffers register when RTR came, and
    // only where the transport needs a local handle.
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
        std::vector<uint8_t> &m = scratch_.msg;
        m.clear();
        m.reserve(sizeof h + r.rma.size() * sizeof(wire::RmaSeg) + sizeof z);
        append_bytes(m, &h, sizeof h);
        append_bytes(m, r.rma.data(), r.rma.size() * sizeof(wire::RmaSeg));
        append_bytes(m, &z, sizeof z);
        r.rndv_protocol = wire::kRndvPut;  // what RTR is checked against
        // Held before the call: over `self` all of it may run inside.
        r.holds_peer = true;
        ++p.put_writes_held;
        const tx::Status s = status_of_bcopy(p.lane.send_bcopy(wire::kAmRmaWrite, pack_vector, &m));
        if (s != tx::kOk) release_put_hold(r);
        return s;
    } catch (const std::bad_alloc &) {
        return tx::Status::kNoMemory;
    }
}

void RmaZcopyProtocol::start_target_record(SendReq &t, const Peer &p, SendOp op, uint8_t protocol,
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

void RmaZcopyProtocol::drop_target_record(SendReq *t) noexcept {
    if (t == nullptr) return;
    dp_.zcopy_.release_send_slot(*t);
    t->rma.clear();
    dp_.send_pool_.put(t);
}

void RmaZcopyProtocol::start(Peer &p, SendOp op, const wire::RmaHdr &h, const wire::RmaSeg *segs,
                               const IovList &where, const uint8_t *section, size_t len) noexcept {
    const bool write = op == SendOp::kWriteTarget;
    auto answer = [&](int status) {
        if (write) dp_.ctrl_.send_ack(p, wire::kAmRmaAck, h.id, status);
        else dp_.rma_.send_read_answer(p, h.id, status, 0);
    };
    // The initiator's buffers: RmaZcopyHdr (its transport's code), segments, rkeys.
    wire::RmaZcopyHdr z;
    if (len < sizeof z) {
        ++dp_.stats_.dropped_malformed;
        return answer(-FI_EINVAL);
    }
    std::memcpy(&z, section, sizeof z);
    if (write && (h.flags & wire::kRmaInitiatorPuts)) {
        // Only the transport the initiator puts with.
        if (z.segments != 0 || z.rkey_len != 0 || z.transport == tx::kNoTransport ||
            len != sizeof z) {
            ++dp_.stats_.dropped_malformed;
            return answer(-FI_EINVAL);
        }
        grant_put(p, h, segs, where, z.transport);
        return;
    }
    const size_t need = sizeof z + size_t{z.segments} * (sizeof(wire::Segment) + z.rkey_len);
    if (len != need || z.segments == 0 || z.segments > wire::kMaxRndvSegments ||
        z.transport == tx::kNoTransport) {
        ++dp_.stats_.dropped_malformed;
        return answer(-FI_EINVAL);
    }
    SendReq *t = nullptr;
    bool ok = false;
    try {
        t = dp_.send_pool_.get();
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
        ok = sane && sum == h.total && dp_.zcopy_.open_rma(p, z.transport, kind) && dp_.zcopy_.unpack_keys(p, keys, t->keys) &&
             (!p.rma.iface().md_needs_memh ||
              dp_.zcopy_.register_buffers(p.rma.iface(), t->iov, h.total, t->regions)) &&
             dp_.zcopy_.take_send_slot(*t);  // failures (ZcopyTransfers::fail) find it there
    } catch (const std::bad_alloc &) {
        ok = false;
    }
    if (!ok) {
        UFI_LOG_INFO(Subsys::EpData, "RMA from {}: cannot move it zero copy",
                     tx::address::describe(p.address));
        drop_target_record(t);
        return answer(-FI_EIO);
    }
    // (kWriteTarget with PUT is a grant: grant_put)
    start_target_record(*t, p, op, write ? wire::kRndvGet : wire::kRndvPut, h);
    t->offset = 0;
    t->put_base = 0;
    t->recv_id = 1;  // operations in flight: a failure waits for their completions
    t->comp.owner = &dp_.zcopy_;
    t->comp.req = t;
    dp_.zcopy_.issue_puts(t);  // gets for kWriteTarget
}

void RmaZcopyProtocol::done(SendReq *r) noexcept {
    Peer &p = *dp_.peers_[r->peer];
    const uint32_t slot = r->rndv_slot;
    if (r->op == SendOp::kWriteTarget) {
        if (r->status == 0) {
            dp_.rma_.target_write_done(p, r->rma.data(), r->rma.size(), r->length, r->rma_flags,
                              r->rma_data);
        }
        dp_.ctrl_.send_ack(p, wire::kAmRmaAck, r->peer_id, r->status);
    } else {
        // Written with puts that completed (tcp: acknowledged), so the data is in place when
        // the answer arrives.
        dp_.rma_.send_read_answer(p, r->peer_id, r->status, r->status == 0 ? r->length : 0);
    }
    if (dp_.zcopy_.holds(slot, r)) dp_.zcopy_.finish_send_rndv(r);  // (else the answer failed the peer,
}                                                     // which finished it)

void RmaZcopyProtocol::grant_put(Peer &p, const wire::RmaHdr &h, const wire::RmaSeg *segs,
                             const IovList &where, tx::TransportCode transport) noexcept {
    // Our memory behind the checked segments, registered for the initiator's transport, goes
    // back in RTR; a record keeps what counting needs until RMA_WRITE_DONE says it is in place.
    const tx::OpenIface *oi = dp_.zcopy_.zcopy_iface(p, transport, tx::RmaKind::kPut);
    SendReq *t = nullptr;
    ControlMsg *m = dp_.ctrl_.make(wire::kAmRtr, 0);
    bool ok = false;
    try {
        t = dp_.send_pool_.get();
        t->rma.assign(segs, segs + h.segments);
        ok = oi != nullptr && m != nullptr && dp_.zcopy_.take_send_slot(*t) &&
             dp_.zcopy_.build_rtr_put(p, *oi, where, h.total, t->regions, h.id, t->rndv_slot, m->bytes);
    } catch (const std::bad_alloc &) {
        ok = false;
    }
    if (!ok) {
        dp_.ctrl_.drop(m);
        UFI_LOG_INFO(Subsys::EpData, "RMA write from {}: cannot let it be put over {}",
                     tx::address::describe(p.address), tx::transport_name(transport));
        drop_target_record(t);
        dp_.ctrl_.send_ack(p, wire::kAmRmaAck, h.id, -FI_EIO);
        return;
    }
    start_target_record(*t, p, SendOp::kWriteTarget, wire::kRndvPut, h);  // RMA_WRITE_DONE ends it
    t->iov.assign(where);
    t->offset = h.total;
    t->recv_id = 0;  // nothing of ours in flight: a failure of the peer finishes it at once
    ++dp_.stats_.rma_put_grants;
    dp_.ctrl_.send(p, m);
}

void RmaZcopyProtocol::handle_write_done(const uint8_t *data, size_t length) noexcept {
    wire::AckHdr a;
    if (!dp_.ctrl_.parse_ack(wire::kAmRmaWriteDone, data, length, a)) return;
    SendReq *t = dp_.zcopy_.send_by_id(a.id, a.src);
    if (t == nullptr || t->op != SendOp::kWriteTarget || t->rndv_protocol != wire::kRndvPut) {
        ++dp_.stats_.dropped_malformed;  // no write of this peer's granted under that id
        return;
    }
    // (The initiator completed the write when its puts did: nothing to answer.)
    if (a.status == 0) {
        dp_.rma_.target_write_done(*dp_.peers_[t->peer], t->rma.data(), t->rma.size(), t->length,
                          t->rma_flags, t->rma_data);
    }
    dp_.zcopy_.finish_send_rndv(t);
}

std::span<const MessageHandler> RmaZcopyProtocol::handlers() noexcept {
    static constexpr MessageHandler kRows[] = {
        DataPath::module_row<&DataPath::rma_zcopy_, &RmaZcopyProtocol::handle_write_done, false>(
            wire::kAmRmaWriteDone),
    };
    return kRows;
}

}  // namespace ufi::runtime::proto
