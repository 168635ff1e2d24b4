#include "runtime/info/offers.h"

#include "runtime/info/capabilities.h"
#include "base/log/log.h"
#include "transports/address.h"
#include "transports/address_name.h"
#include "transports/address_svc.h"
#include "transports/iface/discovery.h"
#include "transports/op_limits.h"
#include "transports/selection_config.h"
#include "transports/topology.h"
#include "transports/topology_view.h"


#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <optional>

namespace ufi::runtime::info {

namespace {

size_t inject_of(const transports::Resource &r) {
    const std::optional<size_t> limit = transports::am_send_max(r);
    if (!limit) return std::numeric_limits<size_t>::max();  // carries no messages (e.g. cma)
    // Messages go as am_short_iov, whose iovs together are limited by max_short (no separate
    // UCT header): what one short message carries beyond ufi's header.
    return *limit > kEagerShortOverhead ? *limit - kEagerShortOverhead : 0;
}

// What one datagram carries on this transport beyond ufi's eager header (with CQ data).
size_t datagram_of(const transports::Resource &r) {
    const std::optional<size_t> limit = transports::am_datagram_max(r);
    if (!limit) return std::numeric_limits<size_t>::max();  // carries no messages (e.g. cma)
    return *limit > kEagerShortOverhead ? *limit - kEagerShortOverhead : 0;
}

}  // namespace

DomainOffer offer_from_choice(const std::vector<transports::Resource> &resources,
                              const transports::DomainChoice &choice) {
    DomainOffer offer;
    offer.name = choice.name;
    offer.description = choice.description;
    offer.net_device = choice.net_device;
    offer.reaches_local = choice.reaches_local;
    offer.reaches_remote = choice.reaches_remote;
    offer.resources = choice.resources;

    size_t inject = std::numeric_limits<size_t>::max();
    size_t datagram = std::numeric_limits<size_t>::max();
    size_t iov = std::numeric_limits<size_t>::max();
    size_t rma_iov = std::numeric_limits<size_t>::max();
    std::vector<const transports::Resource *> chosen;
    for (size_t idx : choice.resources) {
        if (idx >= resources.size()) continue;
        const transports::Resource &r = resources[idx];
        chosen.push_back(&r);
        if (r.tl == "tcp") offer.has_tcp = true;
        inject = std::min(inject, inject_of(r));
        datagram = std::min(datagram, datagram_of(r));
        if (const size_t n = transports::am_zcopy_max_iov(r); n > 0) iov = std::min(iov, n);
        if (const size_t n = transports::put_zcopy_max_iov(r); n > 0) rma_iov = std::min(rma_iov, n);
        if (const size_t n = transports::get_zcopy_max_iov(r); n > 0) rma_iov = std::min(rma_iov, n);
    }
    for (size_t idx : choice.net_resources) {
        if (idx < resources.size() && offer.ip_addrs.empty()) offer.ip_addrs = resources[idx].ip_addrs;
    }
    offer.inject_size = inject == std::numeric_limits<size_t>::max() ? 0 : inject;
    offer.max_msg_size = static_cast<size_t>(SSIZE_MAX);
    offer.datagram_size = datagram == std::numeric_limits<size_t>::max() ? 0 : datagram;
    offer.iov_limit = iov == std::numeric_limits<size_t>::max() ? kDefaultIovLimit : iov;
    offer.rma_iov_limit = rma_iov == std::numeric_limits<size_t>::max() ? kDefaultIovLimit : rma_iov;
    const transports::address::NamePlan names = transports::address::plan_names(chosen);
    // Every domain's addresses also hold a host and port (fi_getinfo's default source,
    // fi_av_insertsvc): one tcp record (transports/address_svc.h). And every domain whose
    // names fit FI_NAME_MAX takes all of it: processes that chose different transports
    // (UFI_TLS, UFI_NET_DEVICES) then still read each other's addresses, packed at one
    // length, and meet on a transport both have.
    namespace address = transports::address;
    offer.addr_len = std::max({names.size, address::kNameBudget,
                               address::padded_size(address::record_overhead("tcp") +
                                                    address::kTcpDeviceAddressMax +
                                                    address::kTcpIfaceAddressLen)});
    offer.name_tls = names.tls;
    if (names.over_budget()) {
        UFI_LOG_INFO(log::Subsys::Core,
                     "domain {}: endpoint names take {} bytes, more than FI_NAME_MAX (64): programs "
                     "that hold names in FI_NAME_MAX bytes (Open MPI) cannot use this domain",
                     offer.name, names.size);
    } else if (!names.left_out.empty()) {
        UFI_LOG_DEBUG(log::Subsys::Core, "domain {}: names of {} bytes carry {}; {} come with the handshake",
                      offer.name, names.size, fmt::join(names.tls, ","), fmt::join(names.left_out, ","));
    }
    return offer;
}

OfferSet build_offers() {
    OfferSet set;
    const transports::Discovery &d = transports::discovery();
    const transports::SelectionConfig cfg = transports::selection_config_from_registry();
    const transports::TopologyView view =
        transports::TopologyView::from_topology(transports::system_topology(), d.resources);
    const transports::SelectionResult sel = transports::select_domains(d.resources, view, cfg);

    for (const auto &choice : sel.choices) set.offers.push_back(offer_from_choice(d.resources, choice));
    for (const auto &iface : d.interfaces) {
        for (const auto &a : iface.addresses) set.local_addrs.push_back(a.address);
    }
    for (const auto &diag : sel.diagnostics) {
        UFI_LOG_WARN(log::Subsys::Core, "{}", diag);
        set.notes.push_back(diag);
    }
    for (const auto &ex : sel.excluded) {
        UFI_LOG_INFO(log::Subsys::Core, "transport {}", ex.text());
        set.notes.push_back(ex.text());
    }
    for (const auto &problem : d.problems) {
        UFI_LOG_INFO(log::Subsys::Core, "discovery: {}", problem);
    }
    if (sel.choices.empty()) {
        UFI_LOG_WARN(log::Subsys::Core, "no usable UCT transport: fi_getinfo will offer nothing");
    }
    return set;
}

}  // namespace ufi::runtime::info
