#include "transports/topology_view.h"

#include "transports/net_interfaces.h"

namespace ufi::transports {

std::optional<unsigned> TopologyView::distance(std::string_view device) const {
    auto it = distances.find(device);
    if (it != distances.end()) {
        return it->second;
    }
    auto [base, port] = split_device_port(device);
    if (port != 0 || base != device) {
        it = distances.find(base);
        if (it != distances.end()) {
            return it->second;
        }
    }
    return std::nullopt;
}

TopologyView TopologyView::from_topology(const Topology &topology,
                                         const std::vector<Resource> &resources) {
    TopologyView view;
    for (const Resource &r : resources) {
        if (view.distances.count(r.dev) != 0) {
            continue;
        }
        std::optional<unsigned> d;
        if (r.type == DeviceType::Network) {
            const IoDevice *dev = topology.find_device(r.dev);
            if (dev == nullptr && !r.netdev.empty()) {
                dev = topology.find_device(r.netdev);
            }
            if (dev != nullptr) {
                d = dev->distance;
            }
        }
        if (!d && r.pci_bus_id) {
            d = topology.distance_by_pci_bus_id(*r.pci_bus_id);
        }
        if (d || r.type == DeviceType::Network) {
            view.distances.emplace(r.dev, d);
        }
    }
    return view;
}

}  // namespace ufi::transports
