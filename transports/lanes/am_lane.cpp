#include "transports/lanes/am_lane.h"

#include "base/config/config.h"
#include "transports/iface/record_addr.h"
#include "transports/selection_config.h"

#include "transports/lanes/uct_views.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>

#include <algorithm>
#include <cstddef>

namespace ufi::transports {

namespace {

// UFI_SHM_DEMOTE, read once.
bool demote_setting() noexcept {
    static const bool on = config::registry().get_bool("UFI_SHM_DEMOTE");
    return on;
}

constexpr uint64_t kToIface = UCT_IFACE_FLAG_CONNECT_TO_IFACE;
constexpr uint64_t kToEp = UCT_IFACE_FLAG_CONNECT_TO_EP;
constexpr uint64_t kAnyAm = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY;

// Whether `rec` is a record of iface `oi`'s transport that it reaches. An endpoint-to-endpoint
// transport's iface address may be empty (rc): only the device address is compared.
bool reaches(const OpenIface &oi, const address::TransportRecord &rec) {
    return record_fits(oi, rec) &&
           uct_iface_is_reachable(oi.iface.get(), PeerDeviceAddr(rec, oi.ns_mark).get(),
                                  iface_addr_of(rec)) != 0;
}

// The best (lowest latency + overhead) iface that sends AMs, passes `accept`, and reaches one
// of the peer's records.
template <typename Accept>
LaneChoice best_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                     const LanePolicy &policy, Accept &&accept) {
    LaneChoice best;
    double best_cost = 0;
    int best_priority = 0;
    const auto &ifaces = worker.ifaces();
    for (size_t i = 0; i < ifaces.size(); ++i) {
        const OpenIface &oi = *ifaces[i];
        const IfaceCaps &a = oi.caps;
        if ((a.flags & kAnyAm) == 0 || !accept(oi)) continue;
        if (oi.resource->tl == "sysv" && !policy.sysv_allowed) continue;
        for (size_t r = 0; r < peer.records.size(); ++r) {
            if (!reaches(oi, peer.records[r])) continue;
            const double cost = a.perf.latency_s + a.perf.overhead_s;
            const bool better = best.iface == SIZE_MAX || cost < best_cost ||
                                (cost == best_cost && a.perf.priority > best_priority) ||
                                (cost == best_cost && a.perf.priority == best_priority &&
                                 oi.resource->tl == "posix");
            if (better) {
                best.iface = i;
                best.record = r;
                best_cost = cost;
                best_priority = a.perf.priority;
            }
        }
    }
    return best;
}

}  // namespace

Status AmLane::send_short(uint8_t id, const Iov *iov, size_t iovcnt) noexcept {
    answering_ = false;
    size_t n = 0;
    for (size_t i = 0; i < iovcnt; ++i) n += iov[i].length;
    last_short_ = static_cast<uint32_t>(n);
    return status_of(uct_ep_am_short_iov(ep_.get(), id, as_uct(iov), iovcnt));
}

Status AmLane::send_short(uint8_t id, uint64_t header, const void *payload,
                          unsigned length) noexcept {
    answering_ = false;
    last_short_ = static_cast<uint32_t>(sizeof header + length);
    return status_of(uct_ep_am_short(ep_.get(), id, header, payload, length));
}

ssize_t AmLane::send_bcopy(uint8_t id, PackFn pack, void *arg) noexcept {
    last_short_ = 0;  // (the bytes go to a descriptor of the peer's, not into the element)
    const bool answer = answering_;
    answering_ = false;
    if (!answer) [[likely]]
        return uct_ep_am_bcopy(ep_.get(), id, pack, arg, 0);
    return send_bcopy_answer(id, pack, arg);
}

Status AmLane::send_zcopy(uint8_t id, const void *header, unsigned header_len, const Iov *iov,
                          size_t iovcnt, Completion *comp) noexcept {
    return status_of(
        uct_ep_am_zcopy(ep_.get(), id, header, header_len, as_uct(iov), iovcnt, 0, as_uct(comp)));
}

void AmLane::check() noexcept { (void)uct_ep_check(ep_.get(), 0, nullptr); }

Status AmLane::flushed() noexcept {
    if (!ep_) return kOk;
    return status_of(uct_ep_flush(ep_.get(), 0, nullptr));
}

void AmLane::flush_local() noexcept { (void)uct_ep_flush(ep_.get(), UCT_FLUSH_FLAG_LOCAL, nullptr); }

void AmLane::set_limits(const OpenIface &iface) noexcept {
    iface_ = &iface;
    const IfaceCaps &a = iface.caps;
    max_short_ = a.am_short ? a.limits.am.max_short : 0;
    max_bcopy_ = a.am_bcopy ? a.limits.am.max_bcopy : 0;
}

Status AmLane::connect(const OpenIface &iface, const address::TransportRecord &peer, AmLane &out) {
    AmLane lane;
    const Status status =
        Ep::connect_to_iface(iface.iface.get(), PeerDeviceAddr(peer, iface.ns_mark).get(),
                             iface_addr_of(peer), lane.ep_);
    if (status != kOk) return status;
    lane.set_limits(iface);
    // UCT's mm transports (the shared-memory ones that send active messages, connected to
    // the peer's iface): prime() and warm() ready the peer's FIFO head for the next send.
    lane.warms_ = iface.resource->type == DeviceType::SharedMemory &&
                  iface.caps.am_short;
    if (lane.warms_ && cpu_prefetches_for_write()) {
        const MmFifo fifo = mm_fifo(lane.ep_.get(), iface.iface.get());
        lane.fifo_head_ = fifo.head;
        lane.demotes_ = fifo.head != nullptr && lanes_demote_lines() && demote_setting();
        // UCT places element i at elems + i * element size, i the head's count modulo the
        // element count (a power of two): the local iface's shape, which the peer's matches
        // (fifo_tuning.h).
        const FifoShape &shape = iface.fifo_shape;
        if (lane.demotes_ && shape.elem_size > kMmElemHeader && shape.elem_count != 0 &&
            (shape.elem_count & (shape.elem_count - 1)) == 0) {
            lane.fifo_elems_ = fifo.elems;
            lane.elem_size_ = shape.elem_size;
            lane.elem_mask_ = shape.elem_count - 1;
        }
    }
    out = std::move(lane);
    return kOk;
}

ssize_t AmLane::send_bcopy_answer(uint8_t id, PackFn pack, void *arg) noexcept {
    struct Packing {
        PackFn pack;
        void *arg;
        uint8_t *dest;
        size_t len;
    } p{pack, arg, nullptr, 0};
    const ssize_t r = uct_ep_am_bcopy(
        ep_.get(), id,
        [](void *dest, void *a) -> size_t {
            auto *q = static_cast<Packing *>(a);
            q->dest = static_cast<uint8_t *>(dest);
            q->len = q->pack(dest, q->arg);
            return q->len;
        },
        &p, 0);
    if (r < 0 || p.dest == nullptr || !demotes_) return r;
    demoted_at_ = p.dest;
    demoted_len_ = p.len;
    const uintptr_t end = reinterpret_cast<uintptr_t>(p.dest) + p.len;
    for (uintptr_t at = reinterpret_cast<uintptr_t>(p.dest) & ~uintptr_t{kLine - 1}; at < end;
         at += kLine) {
        demote_line(reinterpret_cast<const volatile void *>(at));
    }
    return r;
}

Status AmLane::create_p2p(const OpenIface &iface, AmLane &out) {
    AmLane lane;
    const Status status = Ep::create_unconnected(iface.iface.get(), lane.ep_);
    if (status != kOk) return status;
    lane.set_limits(iface);
    lane.p2p_ = true;
    out = std::move(lane);
    return kOk;
}

Status AmLane::ep_address(std::vector<uint8_t> &out) const {
    if (!p2p_ || !ep_) return Status::kInvalidParam;
    out.assign(iface_->caps.ep_addr_len, 0);
    return status_of(uct_ep_get_address(ep_.get(), reinterpret_cast<uct_ep_addr_t *>(out.data())));
}

Status AmLane::connect_to_peer(const address::TransportRecord &peer, const uint8_t *ep_addr,
                               size_t len) noexcept {
    if (!p2p_ || !ep_ || len != iface_->caps.ep_addr_len || peer.tl != iface_->resource->tl ||
        peer.device_addr.size() != iface_->caps.device_addr_len) {
        return Status::kInvalidParam;
    }
    return status_of(uct_ep_connect_to_ep(ep_.get(), PeerDeviceAddr(peer, iface_->ns_mark).get(),
                                          reinterpret_cast<const uct_ep_addr_t *>(ep_addr)));
}

void release_am_desc(void *data, size_t rx_headroom) noexcept {
    uct_iface_release_desc(static_cast<char *>(data) - rx_headroom);
}

LanePolicy LanePolicy::from_registry() {
    const SelectionConfig cfg = selection_config_from_registry();
    LanePolicy p;
    p.sysv_allowed =
        cfg.tls.mode == FilterMode::Include &&
        std::find(cfg.tls.tokens.begin(), cfg.tls.tokens.end(), "sysv") != cfg.tls.tokens.end();
    p.connect_to_ep = connect_to_ep_from_registry();
    return p;
}

bool LanePolicy::p2p(const OpenIface &iface) const noexcept {
    const uint64_t f = iface.caps.flags;
    if (!(f & kToEp)) return false;
    if (!(f & kToIface)) return true;
    return std::find(connect_to_ep.begin(), connect_to_ep.end(), iface.resource->tl) !=
           connect_to_ep.end();
}

// Which shared-memory FIFO transports reach the peer's host but were refused for the shape of
// the peer's FIFO (record_fits: its geometry fingerprint differs, or it has none).
std::string fifo_mismatch(const EndpointWorker &worker, const address::EndpointAddress &peer) {
    std::string tls;
    for (const auto &oi : worker.ifaces()) {
        const size_t g = oi->fifo_geometry.size();
        if (g == 0 || oi->iface_addr.empty()) continue;
        for (const auto &rec : peer.records) {
            if (rec.tl != oi->resource->tl || rec.device_addr.size() != oi->caps.device_addr_len ||
                record_fits(*oi, rec)) {
                continue;
            }
            const size_t n = rec.iface_addr.size();
            if (n != oi->iface_addr.size() && n + g != oi->iface_addr.size()) continue;
            // (UCT reads its own length, which both forms hold.)
            if (!uct_iface_is_reachable(oi->iface.get(), PeerDeviceAddr(rec, oi->ns_mark).get(),
                                        iface_addr_of(rec))) {
                continue;
            }
            tls += (tls.empty() ? "" : ",") + rec.tl;
            break;
        }
    }
    if (tls.empty()) return {};
    return "the peer's shared-memory FIFOs (" + tls +
           ") are shaped otherwise than this process's (UFI_SHM_FIFO_ELEM_SIZE, or UCX's "
           "FIFO_SIZE or SEG_SIZE for them, differ; or the peer runs a ufi from before "
           "2026-12-03): shared memory is not used with it";
}

LaneChoice choose_am_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                          const LanePolicy &policy) {
    const auto any = [&](const OpenIface &oi) {
        return (oi.caps.flags & kToIface) || policy.p2p(oi);
    };
    const auto to_iface = [&](const OpenIface &oi) {
        return (oi.caps.flags & kToIface) != 0 && !policy.p2p(oi);
    };
    const auto can_iface = [&](const OpenIface &oi) { return (oi.caps.flags & kToIface) != 0; };
    LaneChoice best = best_lane(worker, peer, policy, any);
    if (best.iface != SIZE_MAX && policy.p2p(*worker.ifaces()[best.iface])) {
        // The handshake needs a lane that connects at once (a forced transport's own iface
        // connection serves too).
        const LaneChoice aux = best_lane(worker, peer, policy, can_iface);
        if (aux.iface != SIZE_MAX) {
            best.p2p = true;
            best.aux_iface = aux.iface;
            best.aux_record = aux.record;
        } else {
            best = best_lane(worker, peer, policy, to_iface);
        }
    }
    if (best.iface == SIZE_MAX) {
        const auto &ifaces = worker.ifaces();
        std::string mine, theirs;
        for (const auto &i : ifaces) mine += (mine.empty() ? "" : ",") + i->resource->tl;
        for (const auto &r : peer.records) theirs += (theirs.empty() ? "" : ",") + r.tl;
        best.why = "no transport of this endpoint (" + mine + ") reaches the peer (" + theirs + ")";
        const bool both_fifo = std::any_of(ifaces.begin(), ifaces.end(), [&](const auto &i) {
            return i->ns_mark != 0 && std::any_of(peer.records.begin(), peer.records.end(),
                                                  [&](const auto &r) { return r.tl == i->resource->tl; });
        });
        if (both_fifo) {
            best.why += " (shared memory reaches processes of this host in this network namespace "
                        "only: docs/addresses.md)";
        }
    }
    best.fifo_mismatch = fifo_mismatch(worker, peer);
    if (best.iface == SIZE_MAX && !best.fifo_mismatch.empty()) best.why += ": " + best.fifo_mismatch;
    return best;
}

LaneChoice choose_p2p_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                           const LanePolicy &policy, const std::string &tl) {
    LaneChoice c = best_lane(worker, peer, policy, [&](const OpenIface &oi) {
        return oi.resource->tl == tl && policy.p2p(oi);
    });
    c.p2p = c.iface != SIZE_MAX;
    return c;
}

}  // namespace ufi::transports
