// Selection: which UCT resources a ufi domain uses. fi_getinfo offers one domain
// per choice, best first. A pure function of (resources, topology distances,
// UFI_TLS/UFI_NET_DEVICES), so the policy for InfiniBand nodes is tested on
// synthetic resource lists here, where there is no InfiniBand.
//
// A choice groups
//   - the intra-node lanes: every selected shared-memory, self and accelerator
//     resource (posix, sysv, cma, knem, xpmem, self, cuda_copy, ...), and
//   - at most one network device with every selected transport on it
//     (rc_mlx5+dc_mlx5+ud_mlx5 on mlx5_0:1, or tcp on eth0).
// Its name is the network device's ("eth0", "mlx5_0:1", "lo"), or "shm" for
// the choice without a network device.
//
// Ordering policy (best first):
//   1. Real network devices, whose choices reach same-host peers (shm) and
//      remote peers; then loopback network devices (lo: no remote peer, but
//      another process over tcp); then the shm-only choice, listed whenever a
//      shared-memory or self resource is selected.
//   2. Among network devices, RDMA devices first: a device with a transport
//      whose memory domain needs registered memory (UCT_MD_FLAG_NEED_MEMH) or
//      that offers get_zcopy or device atomics. Deliberately before distance: an
//      RDMA NIC on the other socket still beats tcp on the near one by an order
//      of magnitude, so tcp on an IPoIB netdev (ib0) ranks below every RDMA port.
//   3. Then the nearest to the process binding (smallest hwloc distance). Unknown
//      distances count as near (0) when no network device has a known distance
//      (a VM, no hwloc), and as farther than every known one otherwise.
//   4. Then the better transport by UCT's static estimates: the device's best
//      score 1 / (256 KiB / bandwidth + latency + overhead), bandwidth =
//      dedicated + shared (one process per node); then UCT's device priority
//      (higher first); then the name, so the order is deterministic.
#pragma once

#include "transports/resource.h"
#include "transports/selection_config.h"
#include "transports/topology_view.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ufi::transports {

struct DomainChoice {
    std::string name;  // "eth0", "mlx5_0:1", "lo", "shm"
    // "shm(posix,sysv,cma,self)+tcp/eth0"; several transports on the device:
    // "shm(posix,sysv,cma,self)+{rc_mlx5,dc_mlx5,ud_mlx5}/mlx5_0:1"; accelerators
    // add "+acc(cuda_copy,cuda_ipc)".
    std::string description;
    // Indices into the resource list given to select_domains, local lanes first
    // (posix, sysv, xpmem, knem, cma, self, then accelerators), then the network
    // transports (rc_mlx5, dc_mlx5, ud_mlx5, rc_verbs, ud_verbs, tcp, others).
    std::vector<std::size_t> resources;
    std::vector<std::size_t> local_resources;  // shm, self, accelerator
    std::vector<std::size_t> net_resources;    // on net_device
    std::string net_device;                    // "" for "shm"
    bool reaches_local = false;                // reaches same-host peers: shared memory, self, or
                                               // a network transport (tcp, an HCA loopback)
    bool reaches_remote = false;               // has a non-loopback network device
    bool loopback_net = false;                 // its network device is a loopback interface (lo)
    bool rdma = false;                 // its network device is an RDMA device (policy step 2)
    std::optional<unsigned> distance;  // of net_device, from the TopologyView
    double score = 0;  // best transport score (policy step 4), 1/s: higher is better
    int priority = 0;  // best UCT device priority among its network transports
};

struct ExcludedResource {
    std::size_t resource = 0;  // index into the resource list
    std::string label;         // "tcp/eth0"
    std::string reason;        // "excluded by UFI_TLS=^tcp", "unusable: <error>"
    // "tcp/eth0: excluded by UFI_TLS=^tcp"
    std::string text() const { return label + ": " + reason; }
};

struct SelectionResult {
    std::vector<DomainChoice> choices;       // best first; empty if nothing is usable
    std::vector<ExcludedResource> excluded;  // in resource order
    // The config's diagnostics, plus names in UFI_TLS/UFI_NET_DEVICES that match
    // nothing on this host.
    std::vector<std::string> diagnostics;

    const DomainChoice *find(std::string_view name) const;
    std::vector<std::string> choice_names() const;
};

SelectionResult select_domains(const std::vector<Resource> &resources, const TopologyView &topo,
                               const SelectionConfig &cfg);

// Policy step 2 and 4 for one resource, exposed for ufi_info and the tests.
bool is_rdma_resource(const Resource &r);
double transport_score(const Resource &r);

}  // namespace ufi::transports
