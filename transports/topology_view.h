// The one thing selection needs from the topology: how far each UCT device is
// from the process's CPUs. A plain map, so that selection stays a pure function
// and tests can state distances directly without any hwloc XML.
#pragma once

#include "transports/resource.h"
#include "transports/topology.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ufi::transports {

struct TopologyView {
    // UCT device name ("eth0", "mlx5_0:1", or "mlx5_0" for all its ports) ->
    // hops from the process binding (Topology's distance); nullopt = unknown.
    std::map<std::string, std::optional<unsigned>, std::less<>> distances;

    // Exact name first, then the name without a ":<port>" suffix; nullopt when
    // neither is known.
    std::optional<unsigned> distance(std::string_view device) const;

    // Network resources map by name (mlx5_0:1 -> hwloc mlx5_0, eth0 -> eth0, then by
    // PCI bus id); other resources by PCI bus id when they have one.
    static TopologyView from_topology(const Topology &topology,
                                      const std::vector<Resource> &resources);
};

}  // namespace ufi::transports
