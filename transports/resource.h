// Plain data describing what UCT found on this host: components, memory domains
// and transport resources with their capabilities and performance estimates.
//
// These structs hold no UCX handles and are freely copyable, so that selection
// and the tests can build synthetic resource lists (an InfiniBand node, say) on a
// machine that has none. Capability fields use UCX's own flag values
// (UCT_IFACE_FLAG_*, UCT_MD_FLAG_*, UCS_BIT(UCT_ATOMIC_OP_*), UCS_BIT(ucs_memory_type_t));
// flag_names.h renders them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ufi::transports {

// UCT's uct_device_type_t, as an enum of our own.
enum class DeviceType {
    Network,       // UCT_DEVICE_TYPE_NET: tcp/eth0, rc_mlx5/mlx5_0:1
    SharedMemory,  // UCT_DEVICE_TYPE_SHM: posix, sysv, cma, knem, xpmem
    Accelerator,   // UCT_DEVICE_TYPE_ACC: cuda_copy, cuda_ipc, gdr_copy, rocm_*
    Loopback,      // UCT_DEVICE_TYPE_SELF: self
    Other,
};

// Static performance estimates from uct_iface_query (not measurements).
struct PerfEstimate {
    double latency_s = 0;            // latency.c
    double latency_per_ep_s = 0;     // latency.m (per active endpoint)
    double overhead_s = 0;           // per-message software overhead
    double bandwidth_dedicated = 0;  // bytes/s
    double bandwidth_shared = 0;     // bytes/s, divided among processes per node
    int priority = 0;                // device priority (higher wins ties)
    std::size_t max_num_eps = 0;     // scalability hint; SIZE_MAX = unlimited
    unsigned dev_num_paths = 1;

    // Effective bandwidth for `ppn` processes per node: dedicated + shared/ppn.
    double bandwidth(unsigned ppn = 1) const {
        return bandwidth_dedicated + bandwidth_shared / (ppn == 0 ? 1 : ppn);
    }
};

// Active-message limits. All sizes include the 8-byte AM header. A non-zero size
// means nothing unless the matching UCT_IFACE_FLAG_AM_* bit is set.
struct AmLimits {
    std::size_t max_short = 0;
    std::size_t max_bcopy = 0;
    std::size_t min_zcopy = 0;
    std::size_t max_zcopy = 0;
    std::size_t opt_zcopy_align = 0;
    std::size_t align_mtu = 0;
    std::size_t max_hdr = 0;  // zcopy header limit
    std::size_t max_iov = 0;
};

// put/get limits. Trust UCT_IFACE_FLAG_PUT_* / GET_* bits, never these sizes alone.
struct RmaLimits {
    std::size_t max_short = 0;
    std::size_t max_bcopy = 0;
    std::size_t min_zcopy = 0;
    std::size_t max_zcopy = 0;
    std::size_t opt_zcopy_align = 0;
    std::size_t align_mtu = 0;
    std::size_t max_iov = 0;
};

// Bitmaps of UCS_BIT(UCT_ATOMIC_OP_*): op = post-only, fop = fetching (incl. swap/cswap).
struct AtomicCaps {
    std::uint64_t op_flags = 0;
    std::uint64_t fop_flags = 0;
};

struct IfaceLimits {
    AmLimits am;
    RmaLimits put;
    RmaLimits get;
    AtomicCaps atomic32;
    AtomicCaps atomic64;
    std::size_t max_conn_priv = 0;
};

// A UCT component (uct_component_query).
struct ComponentInfo {
    std::string name;
    std::uint64_t flags = 0;  // UCT_COMPONENT_FLAG_*
    bool has_cm = false;      // flags & UCT_COMPONENT_FLAG_CM
    // Only for has_cm: whether uct_cm_open succeeded (rdmacm without IB fails).
    bool cm_usable = false;
    std::string cm_error;
    std::size_t cm_max_conn_priv = 0;
    std::vector<std::string> md_names;
};

// A memory domain (uct_md_query). usable=false when uct_md_open failed.
struct MdInfo {
    std::string name;
    std::string component;
    bool usable = true;
    std::string error;
    std::uint64_t cap_flags = 0;  // UCT_MD_FLAG_*
    std::uint64_t max_alloc = 0;
    std::size_t max_reg = 0;
    double reg_cost_c = 0;  // seconds
    double reg_cost_m = 0;  // seconds per byte
    std::size_t rkey_packed_size = 0;
    // Bitmaps of UCS_BIT(ucs_memory_type_t).
    std::uint64_t reg_mem_types = 0;
    std::uint64_t alloc_mem_types = 0;
    std::uint64_t access_mem_types = 0;
    std::uint64_t detect_mem_types = 0;
};

// One (md, transport, device) triple: what a domain can open an iface on.
struct Resource {
    std::string component;
    std::string md;
    std::string tl;   // "tcp", "posix", "rc_mlx5"
    std::string dev;  // "eth0", "memory", "mlx5_0:1"
    DeviceType type = DeviceType::Other;

    // False when the iface could not be opened or queried; error says why.
    bool usable = true;
    std::string error;

    // Network devices only.
    bool is_loopback_netdev = false;        // IFF_LOOPBACK (lo); false for IB names
    std::string netdev;                     // kernel interface: "eth0"; "ib0" for mlx5_0:1 if known
    std::vector<std::string> ip_addrs;      // textual IPv4/IPv6 addresses of netdev
    std::optional<std::string> pci_bus_id;  // "0000:00:03.0" when known
    int sys_device = -1;                    // ucs_sys_device_t, -1 = unknown

    std::uint64_t iface_cap_flags = 0;  // UCT_IFACE_FLAG_*
    std::uint64_t event_flags = 0;      // UCT_IFACE_FLAG_EVENT_*
    IfaceLimits limits;
    PerfEstimate perf;
    std::size_t device_addr_len = 0;
    std::size_t iface_addr_len = 0;  // in address records: a FIFO transport's geometry included
    std::size_t ep_addr_len = 0;

    // Copied from the memory domain.
    std::uint64_t md_cap_flags = 0;
    std::size_t rkey_packed_size = 0;
    double reg_cost_c = 0;
    double reg_cost_m = 0;
    std::size_t max_reg = 0;

    bool has(std::uint64_t iface_flags) const {
        return (iface_cap_flags & iface_flags) == iface_flags;
    }
    // "tcp/eth0"
    std::string label() const { return tl + "/" + dev; }
};

// An IPv4 or IPv6 address of a network interface.
struct InterfaceAddress {
    int family = 0;           // AF_INET or AF_INET6
    std::string address;      // inet_ntop text
    unsigned prefix_len = 0;  // from the netmask
};

// A kernel network interface (getifaddrs), whether or not UCT uses it.
struct NetInterface {
    std::string name;
    bool is_loopback = false;
    bool is_up = false;
    std::vector<InterfaceAddress> addresses;
    std::optional<std::string> pci_bus_id;
};

// Everything discovery learned. problems lists what went wrong, readable.
struct Discovery {
    std::vector<ComponentInfo> components;
    std::vector<MdInfo> mds;
    std::vector<Resource> resources;
    std::vector<NetInterface> interfaces;
    std::vector<std::string> problems;
};

}  // namespace ufi::transports
