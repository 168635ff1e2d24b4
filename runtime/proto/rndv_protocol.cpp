// Rendezvous, one protocol module (rndv_protocol.h).
#include "runtime/proto/rndv_protocol.h"

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

namespace {

// Without a zero-copy transport, rendezvous still spares the unexpected copy (and memory) of a
// large message: from here on.
constexpr size_t kAmRndvThresh = 256 * 1024;
// The automatic threshold never exceeds this (estimates are rough; large messages should not
// sit in unexpected buffers).
constexpr size_t kMaxAutoRndvThresh = 4 * 1024 * 1024;
// Nor goes below this for PUT (tcp), whose data moves only after a round trip on the AM lane
// (RTS, RTR; for a write, its request and RTR). UCT estimates tcp on a device of unknown speed
// (loopback, most VMs) at ~12 MB/s, which puts the formula's crossover below one bcopy; measured
// on loopback (ufi_perf tag_lat/tag_bw, put_lat/put_bw, UFI_TLS=tcp) the crossover lies between
// 24 KiB (streaming) and 64 KiB (ping-pong).
constexpr size_t kMinAutoPutRndvThresh = 32 * 1024;

const char *protocol_name(uint8_t protocol) {
    switch (protocol) {
        case wire::kRndvGet: return "GET";
        case wire::kRndvPut: return "PUT";
        case wire::kRndvSplit: return "SPLIT";
        default: return "AM";
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Protocol, transport and threshold (per peer, at connection)

void RndvProtocol::choose(Peer &p) {
    if (p.rndv_chosen) return;
    p.rndv_chosen = true;
    const auto &ifaces = dp_.worker_->ifaces();
    // GET first: the receiver, who knows the buffer, moves the data in one step.
    for (tx::RmaKind kind : {tx::RmaKind::kGet, tx::RmaKind::kPut}) {
        const tx::LaneChoice c =
            tx::choose_rma_lane(*dp_.worker_, p.address, kind, &p.lane);
        if (c.iface == SIZE_MAX) continue;
        p.rndv_protocol = kind == tx::RmaKind::kGet ? wire::kRndvGet : wire::kRndvPut;
        p.rma_iface = c.iface;
        p.rma_record = c.record;
        break;
    }
    if (p.rma_iface == SIZE_MAX) p.rndv_protocol = wire::kRndvAm;

    const size_t floor = p.lane.max_bcopy();
    if (dp_.cfg_.rndv_thresh != 0) {
        p.rndv_thresh = dp_.cfg_.rndv_thresh;
    } else if (p.rndv_protocol == wire::kRndvAm) {
        p.rndv_thresh = std::max(floor, kAmRndvThresh);
    } else if (p.rndv_protocol == wire::kRndvGet && ifaces[p.rma_iface]->copies_on_cpu) {
        // A zero copy the CPU makes (cma, knem) costs a system call, a fraction of the 2 us
        // UCT's estimates give cma's overhead, which put the formula below at 30 KiB. Measured
        // (docs/performance-history.md, "The rendezvous threshold over cma"), a message that needs a
        // second bcopy goes faster by rendezvous: 16 KiB one way 2.6 -> 2.0-2.2 us (ufi_perf,
        // Open MPI), writes and reads likewise; streams of 9-16 KiB lose a tenth to a fifth
        // of their rate, larger ones gain. (UCP's own latency there is a rendezvous's too.)
        p.rndv_thresh = floor;
    } else {
        // (RMA takes this; messages may stay eager above it, below.)
        // Where moving the data once (zero copy) beats moving it twice (copied into and out
        // of the AM lane) by more than the rendezvous's fixed cost: a round trip more on the
        // AM lane and the zero-copy call's own overhead and latency.
        const transports::PerfEstimate &rma = ifaces[p.rma_iface]->caps.perf;
        const transports::PerfEstimate &am = p.lane.iface().caps.perf;
        const double am_bw = std::max(am.bandwidth_dedicated + am.bandwidth_shared, 1e6);
        const double rma_bw = std::max(rma.bandwidth_dedicated + rma.bandwidth_shared, 1e6);
        const double fixed = 2 * am.latency_s + rma.overhead_s + rma.latency_s;
        const double gain = 2 / am_bw - 1 / rma_bw;  // seconds per byte saved
        double thresh = gain > 0 ? fixed / gain : double(kMaxAutoRndvThresh);
        const size_t low = p.rndv_protocol == wire::kRndvPut ? std::max(floor, kMinAutoPutRndvThresh)
                                                             : floor;
        thresh = std::clamp(thresh, double(low), double(kMaxAutoRndvThresh));
        p.rndv_thresh = static_cast<size_t>(thresh);
    }
    p.rma_thresh = p.rndv_thresh;
    // A lane that sends a message from the application's buffers in one zero-copy active
    // message (tcp: up to 64 KiB) moves it once, as rendezvous would, without its round trip:
    // messages that fit stay eager. (RMA has no such eager form: it keeps the threshold.)
    const size_t zcopy_max = p.lane.max_zcopy_payload(sizeof(wire::EagerHdr) + sizeof(uint64_t));
    if (dp_.cfg_.rndv_thresh == 0 && zcopy_max > p.rndv_thresh) {
        p.rndv_thresh = std::min(zcopy_max, kMaxAutoRndvThresh);
    }
    // FI_EP_DGRAM: a datagram is one active message (max_msg_size keeps it to what one
    // carries), never a rendezvous, whatever UFI_RNDV_THRESH says.
    if (dp_.cfg_.datagrams) p.rndv_thresh = SIZE_MAX;
    dp_.refresh_eager_gate(p);  // (the rendezvous threshold bounds the short way)
    const auto level = dp_.cfg_.proto_info ? log::Level::Info : log::Level::Debug;
    // (SPLIT is the receiver's choice: this side's setting, for what it receives.)
    const bool split = p.rndv_protocol == wire::kRndvGet && dp_.cfg_.rndv_split != 0 &&
                       ifaces[p.rma_iface]->copies_on_cpu;
    UFI_LOG_IF_ASKED(dp_.cfg_.proto_info, level, Subsys::EpData,
            "protocols to peer {}: active messages over {} (short {} B, bcopy {} B, zero-copy "
            "{} B); messages above {} B by rendezvous {}{}{}; RMA zero copy from {} B",
            tx::address::describe(p.address), p.lane.resource().label(), p.lane.max_short(),
            p.lane.max_bcopy(), zcopy_max, p.rndv_thresh, protocol_name(p.rndv_protocol),
            p.rma_iface != SIZE_MAX ? " over " + ifaces[p.rma_iface]->resource->label()
                                    : std::string(" (streamed active messages)"),
            split ? ", copied by both sides from " + std::to_string(dp_.cfg_.rndv_split) + " B"
                  : std::string(),
            p.rma_thresh);
}

// ---------------------------------------------------------------------------------------
// Sender: RTS

tx::Status RndvProtocol::start_send(Peer &p, SendReq &r) noexcept {
    try {
        if (r.rndv_slot == 0) {  // a retry after a full lane keeps its slot and registrations
            if (!dp_.zcopy_.take_send_slot(r)) return transports::Status::kNoMemory;
            r.rndv = true;
            r.rndv_protocol = p.rndv_protocol;
            r.recv_id = 0;
            r.length = 0;
            r.streaming = false;
            r.done = false;
            r.put_base = 0;
            r.split_copied = false;
            r.split_acked = false;
            if (r.iov.total == 0) {
                r.rndv_protocol = wire::kRndvAm;  // nothing to read (FI_DELIVERY_COMPLETE)
            } else if (p.rndv_protocol == wire::kRndvGet &&
                       !dp_.zcopy_.register_buffers(*dp_.worker_->ifaces()[p.rma_iface], r.iov, r.iov.total,
                                         r.regions)) {
                r.rndv_protocol = wire::kRndvAm;  // the receiver asks for the data instead
            }
        }
        const bool get = r.rndv_protocol == wire::kRndvGet;
        // The message is built in the data path's scratch buffers, whose capacity stays: an
        // RTS allocates nothing once they have grown (it is packed out before send_bcopy
        // returns, so a rendezvous started inside that call, over `self`, may reuse them).
        const tx::OpenIface *zcopy =
            r.rndv_protocol != wire::kRndvAm ? dp_.worker_->ifaces()[p.rma_iface].get() : nullptr;
        std::vector<wire::Segment> &segs = rts_scratch_.segs;
        std::vector<uint8_t> &keys = rts_scratch_.keys;
        std::vector<uint8_t> &m = rts_scratch_.msg;
        segs.clear();
        keys.clear();
        m.clear();
        uint16_t rkey_len = 0;
        if (get) {
            const tx::Status s = segments_and_keys(r.iov, r.iov.total, 0, r.regions, rts_scratch_, rkey_len);
            if (s != transports::Status::kOk) return s;
        }
        const bool has_data = (r.wire_flags & wire::kHasData) != 0;
        m.reserve(1 + sizeof(wire::EagerHdr) + 8 + sizeof(wire::RtsHdr) +
                  segs.size() * sizeof(wire::Segment) + keys.size());
        m.push_back(wire::kAmRts);
        const wire::EagerHdr h{r.tag, p.remote_idx, r.wire_flags};
        append_bytes(m, &h, sizeof h);
        if (has_data) append_bytes(m, &r.data, sizeof r.data);
        wire::RtsHdr rts{};
        rts.total = r.iov.total;
        rts.send_id = r.rndv_slot;
        rts.protocol = r.rndv_protocol;
        rts.segments = static_cast<uint8_t>(segs.size());
        rts.transport = zcopy != nullptr ? zcopy->code : tx::kNoTransport;
        rts.rkey_len = rkey_len;
        if (get && split_.offer(*zcopy)) rts.flags = wire::kRtsSenderPuts;
        append_bytes(m, &rts, sizeof rts);
        append_bytes(m, segs.data(), segs.size() * sizeof(wire::Segment));
        append_bytes(m, keys.data(), keys.size());
        if (m.size() - 1 > p.lane.max_bcopy()) {
            // (dp_.rts_fits() decided it does: a mismatch is a bug of ours, reported as one.)
            UFI_LOG_ERROR(Subsys::EpData, "an RTS of {} bytes exceeds the lane's {}",
                          m.size() - 1, p.lane.max_bcopy());
            return transports::Status::kExceedsLimit;
        }
        const tx::Status sent = status_of_bcopy(p.lane.send_bcopy(wire::kAmRts, pack_after_id, &m));
        if (sent == tx::kOk) ++dp_.stats_.rndv_sends;  // (not the tries a full lane refused)
        return sent;
    } catch (const std::bad_alloc &) {
        return transports::Status::kNoMemory;
    }
}

// ---------------------------------------------------------------------------------------
// Receiver: RTS, and moving the data in

bool RndvProtocol::parse_rts(const uint8_t *data, size_t length, wire::EagerHdr &h, uint64_t &cq_data,
                         RtsInfo &info) noexcept {
    if (length < sizeof h) return false;
    std::memcpy(&h, data, sizeof h);
    size_t at = sizeof h;
    cq_data = 0;
    if (h.flags & wire::kHasData) {
        if (length < at + sizeof cq_data) return false;
        std::memcpy(&cq_data, data + at, sizeof cq_data);
        at += sizeof cq_data;
    }
    wire::RtsHdr rts;
    if (length < at + sizeof rts) return false;
    std::memcpy(&rts, data + at, sizeof rts);
    at += sizeof rts;
    if (rts.segments > wire::kMaxRndvSegments || rts.send_id == 0) return false;
    switch (rts.protocol) {
        case wire::kRndvGet:
            if (rts.segments == 0 || rts.transport == tx::kNoTransport) return false;
            break;
        case wire::kRndvPut:
            if (rts.segments != 0 || rts.transport == tx::kNoTransport) return false;
            break;
        case wire::kRndvAm:
            if (rts.segments != 0 || rts.transport != tx::kNoTransport) return false;
            break;
        default: return false;
    }
    const size_t need = size_t{rts.segments} * (sizeof(wire::Segment) + rts.rkey_len);
    if (length != at + need) return false;
    try {
        info.total = rts.total;
        info.send_id = rts.send_id;
        info.protocol = rts.protocol;
        info.flags = rts.flags;
        info.rkey_len = rts.rkey_len;
        info.segments.resize(rts.segments);
        uint64_t sum = 0;
        for (size_t i = 0; i < rts.segments; ++i) {
            std::memcpy(&info.segments[i], data + at, sizeof(wire::Segment));
            at += sizeof(wire::Segment);
            if (info.segments[i].len == 0 || info.segments[i].len > rts.total - sum) return false;
            sum += info.segments[i].len;
        }
        if (rts.protocol == wire::kRndvGet && sum != rts.total) return false;
        info.transport = rts.transport;
        info.rkeys.assign(data + at, data + length);
    } catch (const std::bad_alloc &) {
        return false;
    }
    return true;
}

void RndvProtocol::handle_rts(const uint8_t *data, size_t length) noexcept {
    // Parsed into the data path's scratch record, whose vectors keep their capacity (an RTS
    // allocates nothing once they have grown); an RTS handled inside another's handling (over
    // `self` a whole exchange can run inside one call) takes a record of its own.
    RtsInfo nested;
    const bool outer = !rts_in_busy_;
    RtsInfo &info = outer ? rts_in_ : nested;
    rts_in_busy_ = true;
    struct Release {
        bool &busy;
        bool outer;
        ~Release() {
            if (outer) busy = false;
        }
    } release{rts_in_busy_, outer};
    wire::EagerHdr h;
    uint64_t cq_data = 0;
    if (!parse_rts(data, length, h, cq_data, info) || info.total > dp_.cfg_.max_msg_size) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (!dp_.from_connected(h.src, wire::kAmRts, data, length)) return;
    const bool tagged = (h.flags & wire::kTagged) != 0;
    if (RecvReq *r = dp_.match_posted(h.src, tagged, h.tag, info.total)) {
        start_recv(r, h.src, h.flags, h.tag, cq_data, info);
        return;
    }
    try {
        // Nothing arrives later: the data waits at the sender.
        UnexpMsg *u = dp_.new_unexpected(h, cq_data, info.total, info.total);
        u->bytes.clear();
        u->rts = true;
        std::swap(u->rts_info, info);  // (the record's old buffers become the scratch's)
        dp_.match_.add_unexpected(u);
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: a rendezvous announcement is dropped");
    }
}

void RndvProtocol::start_recv(RecvReq *r, uint32_t src, uint32_t wire_flags, uint64_t tag,
                               uint64_t cq_data, RtsInfo &info) noexcept {
    Peer &p = *dp_.peers_[src];
    r->msg_tag = tag;
    if (p.state != PeerState::kConnected) {  // it failed since it announced the message
        dp_.complete_recv_error(r, src, p.fail_status != 0 ? -p.fail_status : FI_EIO, 0);
        return;
    }
    if (!dp_.zcopy_.take_recv_slot(*r)) {
        dp_.ctrl_.send_ack(p, wire::kAmAts, info.send_id, -FI_ENOMEM);
        dp_.complete_recv_error(r, src, FI_ENOMEM, 0);
        return;
    }
    r->rndv = true;
    r->peer = src;
    r->send_id = info.send_id;
    r->wire_flags = wire_flags;
    r->msg_tag = tag;
    r->data = cq_data;
    r->total = info.total;
    r->length = std::min<size_t>(info.total, r->iov.total);
    r->received = 0;
    r->issued = 0;
    r->get_end = r->length;
    r->split_copied = false;
    r->split_acked = false;
    r->held = HoldState::kNo;
    r->status = 0;
    r->comp.uct.count = 0;
    r->comp.uct.status = transports::Status::kOk;
    r->comp.owner = &dp_.zcopy_;
    r->comp.req = r;
    if (r->length == 0) {
        // Nothing to move (the buffer is empty): done, and the sender may finish.
        r->rndv_protocol = wire::kRndvGet;
        const uint32_t slot = r->rndv_slot;
        dp_.ctrl_.send_ack(p, wire::kAmAts, info.send_id, 0);
        if (dp_.zcopy_.holds(slot, r)) finish_recv(r);  // (else the ack failed the peer,
        return;                                           // which finished it)
    }
    // The receiver chooses: reading the sender's buffers (GET, which SPLIT may share), else
    // having the sender write ours where its transport is ours too (PUT), else the stream (AM).
    if (get_.start(p, r, info)) return;
    r->keys.clear();
    if (info.protocol != wire::kRndvAm && put_.start(p, r, info)) return;
    am_.start(p, r);
}

void RndvProtocol::finish_recv(RecvReq *r) noexcept {
    if (dp_.zcopy_.hold_from_failed_writer(*r)) return;  // (its error completes later)
    const uint32_t src = r->peer;
    const int status = r->status;
    dp_.zcopy_.release_recv_slot(*r);
    r->rndv = false;
    r->regions.clear();
    r->keys.clear();
    r->segments.clear();
    if (status != 0) {
        dp_.complete_recv_error(r, src, -status, r->received);
        return;
    }
    dp_.complete_recv(r, src, r->wire_flags, r->msg_tag, r->data, r->total);
}

// ---------------------------------------------------------------------------------------
// Sender: RTR (then puts or streamed data), ATS; receiver: ATP, RNDV_DATA

void RndvProtocol::handle_rtr(const uint8_t *data, size_t length) noexcept {
    wire::RtrHdr h;
    if (length < sizeof h) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    const size_t need = size_t{h.segments} * (sizeof(wire::Segment) + h.rkey_len);
    const bool split = h.protocol == wire::kRndvSplit;
    const bool put_rtr = h.protocol == wire::kRndvPut || split;
    if (length != sizeof h + need || h.segments > wire::kMaxRndvSegments || h.recv_id == 0 ||
        (!put_rtr &&
         (h.protocol != wire::kRndvAm || h.segments != 0 || h.transport != tx::kNoTransport)) ||
        (put_rtr && (h.segments == 0 || h.transport == tx::kNoTransport))) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (!dp_.from_connected(h.src, wire::kAmRtr, data, length)) return;
    Peer &p = *dp_.peers_[h.src];
    SendReq *r = dp_.zcopy_.send_by_id(h.send_id, h.src);
    // (An RMA write the target lets us put (kRmaInitiatorPuts) takes all of it, or nothing.
    // SPLIT answers a message we offered to GET, over the transport we offered.)
    const bool write = r != nullptr && r->op == SendOp::kWrite;
    if (r == nullptr || r->recv_id != 0 || h.length == 0 || h.length > r->iov.total ||
        (r->op != SendOp::kMessage && (!write || split || !put_rtr || h.length != r->iov.total ||
                                       r->rndv_protocol != wire::kRndvPut)) ||
        (split && (r->rndv_protocol != wire::kRndvGet || p.rma_iface == SIZE_MAX))) {
        ++dp_.stats_.dropped_malformed;  // unknown, answered twice, or a length it cannot take
        return;
    }
    r->recv_id = h.recv_id;
    r->length = h.length;
    r->rndv_protocol = h.protocol;
    r->put_base = 0;
    if (put_rtr) {
        put_.on_rtr(p, *r, h, data, length);
    } else {
        am_.on_rtr(p, *r);
    }
}

void RndvProtocol::handle_ack(uint8_t id, const uint8_t *data, size_t length) noexcept {
    wire::AckHdr a;
    if (!dp_.ctrl_.parse_ack(id, data, length, a)) return;
    // A status from the wire is a negative fi errno, or it is taken as an I/O error.
    const int status = a.status > 0 || a.status < -FI_ERRNO_MAX ? -FI_EIO : a.status;
    if (id == wire::kAmAts) {
        // The receiver read the data (or gave up before asking for it): valid before RTR only,
        // but for SPLIT, whose RTR comes first.
        SendReq *r = dp_.zcopy_.send_by_id(a.id, a.src);
        if (r != nullptr && r->op == SendOp::kMessage && r->rndv &&
            r->rndv_protocol == wire::kRndvSplit && !r->split_acked) {
            split_.on_ats(*r, status);
            return;
        }
        if (r == nullptr || r->recv_id != 0) {
            ++dp_.stats_.dropped_malformed;
            return;
        }
        r->status = status;
        dp_.zcopy_.finish_send_rndv(r);
        return;
    }
    RecvReq *r = dp_.zcopy_.recv_by_id(a.id, a.src);
    const bool split = r != nullptr && r->rndv_protocol == wire::kRndvSplit;
    if (r == nullptr || (r->rndv_protocol != wire::kRndvPut && !split) ||
        (split && r->split_acked)) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (split) {
        split_.on_atp(*r, status);
    } else {
        put_.on_atp(*r, status);
    }
}

std::span<const MessageHandler> RndvProtocol::handlers() noexcept {
    static constexpr MessageHandler kRows[] = {
        DataPath::module_row<&DataPath::rndv_, &RndvProtocol::handle_rts, false>(wire::kAmRts),
        DataPath::module_row<&DataPath::rndv_, &RndvProtocol::handle_rtr, false>(wire::kAmRtr),
        DataPath::module_row<&DataPath::rndv_, &RndvProtocol::handle_ats, false>(wire::kAmAts),
        DataPath::module_row<&DataPath::rndv_, &RndvProtocol::handle_atp, false>(wire::kAmAtp),
        DataPath::module_row<&DataPath::rndv_, &RndvProtocol::handle_data, false>(
            wire::kAmRndvData),
    };
    return kRows;
}

}  // namespace ufi::runtime::proto
