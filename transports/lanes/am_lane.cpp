#include "transports/lanes/am_lane.h"

#include "transports/lanes/record_addr.h"
#include "transports/selection_config.h"

#include <algorithm>

namespace ufi::transports {

namespace {

constexpr uint64_t kNeeded = UCT_IFACE_FLAG_CONNECT_TO_IFACE;
constexpr uint64_t kAnyAm = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY;

}  // namespace

Status AmLane::connect(const OpenIface &iface, const address::TransportRecord &peer, AmLane &out) {
    AmLane lane;
    const Status status =
        Ep::connect_to_iface(iface.iface.get(), device_addr_of(peer), iface_addr_of(peer), lane.ep_);
    if (status != UCS_OK) return status;
    lane.iface_ = &iface;
    const uct_iface_attr_t &a = iface.attr;
    lane.max_short_ = (a.cap.flags & UCT_IFACE_FLAG_AM_SHORT) ? a.cap.am.max_short : 0;
    lane.max_bcopy_ = (a.cap.flags & UCT_IFACE_FLAG_AM_BCOPY) ? a.cap.am.max_bcopy : 0;
    out = std::move(lane);
    return UCS_OK;
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
    return p;
}

LaneChoice choose_am_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                          const LanePolicy &policy) {
    LaneChoice best;
    double best_cost = 0;
    int best_priority = 0;
    const auto &ifaces = worker.ifaces();
    for (size_t i = 0; i < ifaces.size(); ++i) {
        const OpenIface &oi = *ifaces[i];
        const uct_iface_attr_t &a = oi.attr;
        if ((a.cap.flags & kNeeded) != kNeeded || (a.cap.flags & kAnyAm) == 0) continue;
        if (oi.resource->tl == "sysv" && !policy.sysv_allowed) continue;
        for (size_t r = 0; r < peer.records.size(); ++r) {
            const address::TransportRecord &rec = peer.records[r];
            if (rec.tl != oi.resource->tl) continue;
            if (rec.device_addr.size() != a.device_addr_len ||
                rec.iface_addr.size() != a.iface_addr_len) {
                continue;
            }
            if (!uct_iface_is_reachable(oi.iface.get(), device_addr_of(rec), iface_addr_of(rec))) continue;
            const double cost = a.latency.c + a.overhead;
            const bool better = best.iface == SIZE_MAX || cost < best_cost ||
                                (cost == best_cost && a.priority > best_priority) ||
                                (cost == best_cost && a.priority == best_priority &&
                                 oi.resource->tl == "posix");
            if (better) {
                best.iface = i;
                best.record = r;
                best_cost = cost;
                best_priority = a.priority;
            }
        }
    }
    if (best.iface == SIZE_MAX) {
        std::string mine, theirs;
        for (const auto &i : ifaces) mine += (mine.empty() ? "" : ",") + i->resource->tl;
        for (const auto &r : peer.records) theirs += (theirs.empty() ? "" : ",") + r.tl;
        best.why = "no transport of this endpoint (" + mine + ") reaches the peer (" + theirs + ")";
    }
    return best;
}

}  // namespace ufi::transports
