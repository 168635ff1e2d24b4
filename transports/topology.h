// The machine's hardware topology (hwloc) reduced to what transport selection
// needs: the I/O devices (NICs, RDMA devices, GPUs) with their PCI bus id and
// NUMA node/package, and how far each is from the CPUs this process is bound to.
//
// A Topology is a value: loaded once (from the running system, or from an hwloc
// XML file or buffer in tests, with a binding given as a string), its answers
// are precomputed, so queries are cheap lookups. The hwloc topology it was built
// from is kept, shared and read-only, only to re-evaluate another binding.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct hwloc_topology;

namespace ufi::transports {

enum class IoDeviceKind {
    Network,      // HWLOC_OBJ_OSDEV_NETWORK: eth0, ib0
    OpenFabrics,  // HWLOC_OBJ_OSDEV_OPENFABRICS: mlx5_0, hfi1_0
    Gpu,          // HWLOC_OBJ_OSDEV_GPU: nvml0/nvidia0, card0, rsmi0
    Coprocessor,  // HWLOC_OBJ_OSDEV_COPROC: cuda0, opencl0d0, ve0
};

std::string_view to_string(IoDeviceKind kind);

// One hwloc OS device of a kind above.
struct IoDevice {
    std::string name;  // hwloc's name: "eth0", "mlx5_0", "cuda0"
    IoDeviceKind kind = IoDeviceKind::Network;
    std::string subtype;                    // hwloc subtype ("CUDA"), empty if none
    std::optional<std::string> pci_bus_id;  // "0000:11:00.0" (lower-case hex), if on PCI
    std::optional<unsigned> numa_node;      // OS index of the one NUMA node it is local to
    std::optional<unsigned> package;        // OS index of its package (socket)
    std::string locality;  // CPUs near it, hwloc list syntax ("0-7"); "" if unknown
    // Hops through the hwloc tree from the device's locality to the binding: 0 when
    // the CPUs near the device include every CPU of the binding (same package/NUMA
    // node), 1 per level one must climb from the device's first non-I/O ancestor
    // until its cpuset contains the binding (the other socket of a 2-socket node:
    // 1). nullopt when the device is not on PCI (virtual NICs).
    std::optional<unsigned> distance;
};

class Topology {
  public:
    // The empty topology: no devices, every distance unknown. Use it when hwloc
    // cannot load; selection then falls back to transport quality alone.
    Topology();
    ~Topology();
    Topology(const Topology &);
    Topology &operator=(const Topology &);
    Topology(Topology &&) noexcept;
    Topology &operator=(Topology &&) noexcept;

    // The running system, with I/O devices (HWLOC_TYPE_FILTER_KEEP_IMPORTANT) and
    // this process's CPU binding (hwloc_get_cpubind; all allowed CPUs if unbound
    // or unknown). nullopt with *error set when hwloc fails.
    static std::optional<Topology> from_system(std::string *error = nullptr);

    // An hwloc 2.x XML topology. `binding` is a CPU set in hwloc list syntax
    // ("0-3,8"), or hwloc bitmap syntax ("0x000000ff"), or empty / "all" for every
    // CPU of the topology. nullopt with *error set on bad XML or a binding with no
    // CPU of the topology.
    static std::optional<Topology> from_xml_file(const std::string &path,
                                                 std::string_view binding = {},
                                                 std::string *error = nullptr);
    static std::optional<Topology> from_xml_buffer(std::string_view xml,
                                                   std::string_view binding = {},
                                                   std::string *error = nullptr);

    // The same hardware seen from another binding (same syntax as above).
    // nullopt for the empty topology or a bad binding.
    std::optional<Topology> with_binding(std::string_view binding,
                                         std::string *error = nullptr) const;

    bool empty() const { return !topo_; }
    bool from_this_system() const { return this_system_; }
    const std::vector<IoDevice> &devices() const { return devices_; }
    // The binding in hwloc list syntax ("0-7"); "" for the empty topology.
    const std::string &binding() const { return binding_; }
    unsigned num_packages() const { return num_packages_; }
    unsigned num_numa_nodes() const { return num_numa_nodes_; }

    // By hwloc name, or by a UCT device name: "mlx5_0:1" finds "mlx5_0".
    const IoDevice *find_device(std::string_view name) const;
    // By PCI bus id, "0000:11:00.0" (case-insensitive; a missing domain means 0000).
    // When several OS devices share the function (mlx5_0 and ib0) the first wins.
    const IoDevice *find_by_pci_bus_id(std::string_view bus_id) const;

    // Distance of a device (see IoDevice::distance); nullopt when unknown.
    std::optional<unsigned> distance(std::string_view device) const;
    std::optional<unsigned> distance_by_pci_bus_id(std::string_view bus_id) const;

  private:
    struct HwlocDeleter {
        void operator()(hwloc_topology *t) const;
    };
    static std::optional<Topology> build(std::shared_ptr<hwloc_topology> topo, bool this_system,
                                         std::string_view binding, std::string *error);

    std::shared_ptr<hwloc_topology> topo_;
    bool this_system_ = false;
    std::vector<IoDevice> devices_;
    std::string binding_;
    unsigned num_packages_ = 0;
    unsigned num_numa_nodes_ = 0;
};

// The running system's topology, loaded once per process (thread-safe). The
// empty Topology if hwloc failed; system_topology_error() then says why.
const Topology &system_topology();
const std::string &system_topology_error();

// "0000:11:00.0" from "11:00.0", "0000:11:00.0" or "0000:11:00.0" in upper case;
// nullopt if it does not parse as a PCI address.
std::optional<std::string> normalize_pci_bus_id(std::string_view bus_id);

}  // namespace ufi::transports
