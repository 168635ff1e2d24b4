#include "transports/address_name.h"

#include <uct/api/uct.h>

#include <algorithm>

namespace ufi::transports::address {

namespace {

// Reachable with no handshake of its own: connects to an iface and carries active messages.
bool first_contact(const Resource &r) {
    return r.has(UCT_IFACE_FLAG_CONNECT_TO_IFACE) &&
           (r.iface_cap_flags & (UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY)) != 0;
}

bool contains(std::span<const std::string> tls, const std::string &tl) {
    return std::find(tls.begin(), tls.end(), tl) != tls.end();
}

}  // namespace

NamePlan plan_names(std::span<const Resource *const> resources) {
    std::vector<const Resource *> chosen;
    // Of each kind, the first-contact transport with the smallest record (ties: domain order),
    // so that names fit; the handshake then moves a peer to its best lane. sysv only when it
    // is the only shared-memory one (lanes use it only where UFI_TLS names it).
    const auto pick = [&](DeviceType type) {
        const Resource *best = nullptr;
        for (const bool sysv_pass : {false, true}) {
            for (const Resource *r : resources) {
                if (r->type != type || !first_contact(*r) || (r->tl == "sysv") != sysv_pass) continue;
                if (best == nullptr || record_bound(*r) < record_bound(*best)) best = r;
            }
            if (best != nullptr) break;
        }
        if (best != nullptr) chosen.push_back(best);
    };
    pick(DeviceType::SharedMemory);
    pick(DeviceType::Network);
    NamePlan plan;
    if (chosen.empty()) {
        // Nothing to make first contact over but self (UFI_TLS=self): names are full addresses.
        for (const Resource *r : resources) plan.tls.push_back(r->tl);
        plan.size = fixed_size(resources);
        return plan;
    }
    size_t bytes = 0;
    for (const Resource *r : chosen) bytes += record_bound(*r);
    // The rest, in domain order, while the name stays within budget; sysv last (lanes use it
    // only where UFI_TLS names it, and then posix, if present, still wins).
    for (const bool sysv_pass : {false, true}) {
        for (const Resource *r : resources) {
            if (std::find(chosen.begin(), chosen.end(), r) != chosen.end()) continue;
            if (r->type == DeviceType::Loopback || (r->tl == "sysv") != sysv_pass) continue;
            if (padded_size(bytes + record_bound(*r)) <= kNameBudget) {
                chosen.push_back(r);
                bytes += record_bound(*r);
            } else {
                plan.left_out.push_back(r->tl);
            }
        }
    }
    for (const Resource *r : resources) {  // domain order
        if (std::find(chosen.begin(), chosen.end(), r) != chosen.end() && !contains(plan.tls, r->tl)) {
            plan.tls.push_back(r->tl);
        }
    }
    plan.size = padded_size(bytes);
    // An endpoint that opened self alone (shared memory not permitted, no network) is named
    // by its self record.
    for (const Resource *r : resources) {
        if (r->type == DeviceType::Loopback) plan.size = std::max(plan.size, padded_size(record_bound(*r)));
    }
    return plan;
}

EndpointAddress name_of(const EndpointAddress &full, std::span<const std::string> tls) {
    EndpointAddress name;
    name.uuid = full.uuid;
    name.endpoint_id = full.endpoint_id;
    name.partial = full.partial;
    for (const TransportRecord &r : full.records) {
        if (contains(tls, r.tl)) {
            name.records.push_back(r);
        } else if (r.tl != "self") {
            name.partial = true;
        }
    }
    // An endpoint that opened none of the name's transports (only self: shared memory not
    // permitted and no network) is named by what it has.
    if (name.records.empty()) return full;
    return name;
}

}  // namespace ufi::transports::address
