#include "transports/topology.h"

#include "base/log/log.h"

#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace ufi::transports {

namespace {

struct BitmapDeleter {
    void operator()(hwloc_bitmap_s *b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

Bitmap make_bitmap() {
    return Bitmap(hwloc_bitmap_alloc());
}

std::string list_string(hwloc_const_bitmap_t set) {
    char *s = nullptr;
    if (set == nullptr || hwloc_bitmap_list_asprintf(&s, set) < 0 || s == nullptr) {
        return {};
    }
    std::string out(s);
    std::free(s);
    return out;
}

std::string format_pci(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%01x", domain, bus, dev, func);
    return buf;
}

// The PCI function an OS device hangs under, if any.
hwloc_obj_t pci_parent(hwloc_obj_t osdev) {
    for (hwloc_obj_t o = osdev->parent; o != nullptr; o = o->parent) {
        if (o->type == HWLOC_OBJ_PCI_DEVICE) {
            return o;
        }
        if (o->type != HWLOC_OBJ_OS_DEVICE) {
            return nullptr;
        }
    }
    return nullptr;
}

std::optional<IoDeviceKind> kind_of(hwloc_obj_osdev_type_t t) {
    switch (t) {
        case HWLOC_OBJ_OSDEV_NETWORK:
            return IoDeviceKind::Network;
        case HWLOC_OBJ_OSDEV_OPENFABRICS:
            return IoDeviceKind::OpenFabrics;
        case HWLOC_OBJ_OSDEV_GPU:
            return IoDeviceKind::Gpu;
        case HWLOC_OBJ_OSDEV_COPROC:
            return IoDeviceKind::Coprocessor;
        default:
            return std::nullopt;
    }
}

// Parses a binding string against the topology's CPUs.
Bitmap parse_binding(hwloc_topology_t topo, std::string_view text, std::string *error) {
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    Bitmap set = make_bitmap();
    std::string s(text);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.pop_back();
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
        s.erase(s.begin());
    }
    if (s.empty() || s == "all") {
        hwloc_bitmap_copy(set.get(), all);
        return set;
    }
    bool hex = s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    int rc = hex ? hwloc_bitmap_sscanf(set.get(), s.c_str())
                 : hwloc_bitmap_list_sscanf(set.get(), s.c_str());
    if (rc < 0 || hwloc_bitmap_iszero(set.get())) {
        if (error != nullptr) {
            *error = "cannot parse CPU binding '" + s + "'";
        }
        return nullptr;
    }
    hwloc_bitmap_and(set.get(), set.get(), all);
    if (hwloc_bitmap_iszero(set.get())) {
        if (error != nullptr) {
            *error =
                "CPU binding '" + s + "' has no CPU of the topology (" + list_string(all) + ")";
        }
        return nullptr;
    }
    return set;
}

}  // namespace

std::string_view to_string(IoDeviceKind kind) {
    switch (kind) {
        case IoDeviceKind::Network:
            return "network";
        case IoDeviceKind::OpenFabrics:
            return "openfabrics";
        case IoDeviceKind::Gpu:
            return "gpu";
        case IoDeviceKind::Coprocessor:
            return "coprocessor";
    }
    return "unknown";
}

std::optional<std::string> normalize_pci_bus_id(std::string_view bus_id) {
    // [domain:]bus:dev.func, all hex, nothing else.
    auto hex_field = [](std::string_view s, std::size_t max_digits, unsigned &out) {
        if (s.empty() || s.size() > max_digits) {
            return false;
        }
        out = 0;
        for (char c : s) {
            if (std::isxdigit(static_cast<unsigned char>(c)) == 0) {
                return false;
            }
            out = out * 16 + static_cast<unsigned>(
                                 std::isdigit(static_cast<unsigned char>(c)) != 0
                                     ? c - '0'
                                     : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
        }
        return true;
    };
    unsigned domain = 0, bus = 0, dev = 0, func = 0;
    std::string_view s = bus_id;
    std::size_t dot = s.rfind('.');
    if (dot == std::string_view::npos || !hex_field(s.substr(dot + 1), 1, func)) {
        return std::nullopt;
    }
    s = s.substr(0, dot);
    std::size_t c2 = s.rfind(':');
    if (c2 == std::string_view::npos || !hex_field(s.substr(c2 + 1), 2, dev)) {
        return std::nullopt;
    }
    s = s.substr(0, c2);
    std::size_t c1 = s.rfind(':');
    if (c1 == std::string_view::npos) {
        if (!hex_field(s, 2, bus)) {
            return std::nullopt;
        }
    } else if (!hex_field(s.substr(c1 + 1), 2, bus) || !hex_field(s.substr(0, c1), 4, domain)) {
        return std::nullopt;
    }
    if (dev > 0x1f || func > 0x7) {
        return std::nullopt;
    }
    return format_pci(domain, bus, dev, func);
}

void Topology::HwlocDeleter::operator()(hwloc_topology *t) const {
    hwloc_topology_destroy(t);
}

Topology::Topology() = default;
Topology::~Topology() = default;
Topology::Topology(const Topology &) = default;
Topology &Topology::operator=(const Topology &) = default;
Topology::Topology(Topology &&) noexcept = default;
Topology &Topology::operator=(Topology &&) noexcept = default;

namespace {

// A fresh hwloc topology that keeps the important I/O objects (NICs, GPUs).
std::unique_ptr<hwloc_topology, void (*)(hwloc_topology *)> new_hwloc(std::string *error) {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) {
        if (error != nullptr) {
            *error = "hwloc_topology_init failed";
        }
        return {nullptr, hwloc_topology_destroy};
    }
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    // The linux component finds PCI devices and OS devices (NICs, RDMA devices,
    // DRM GPUs) in sysfs by itself. The plugins that would also do it load GPU
    // runtimes (CUDA, NVML, ROCm SMI, Level Zero, OpenCL, GL) into the process,
    // or go through libpciaccess, which leaks; a communication library wants none
    // of that. GPUs then appear as DRM devices and are matched by PCI bus id.
    for (const char *name : {"pci", "opencl", "gl", "cuda", "nvml", "rsmi", "levelzero"}) {
        hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
    }
    return {t, hwloc_topology_destroy};
}

}  // namespace

std::optional<Topology> Topology::build(std::shared_ptr<hwloc_topology> shared, bool this_system,
                                        std::string_view binding_text, std::string *error) {
    hwloc_topology_t topo = shared.get();
    Bitmap binding;
    if (this_system && binding_text.empty()) {
        binding = make_bitmap();
        if (hwloc_get_cpubind(topo, binding.get(), HWLOC_CPUBIND_PROCESS) != 0 ||
            hwloc_bitmap_iszero(binding.get())) {
            hwloc_bitmap_copy(binding.get(), hwloc_topology_get_allowed_cpuset(topo));
        }
        hwloc_bitmap_and(binding.get(), binding.get(), hwloc_topology_get_topology_cpuset(topo));
        if (hwloc_bitmap_iszero(binding.get())) {
            hwloc_bitmap_copy(binding.get(), hwloc_topology_get_topology_cpuset(topo));
        }
    } else {
        binding = parse_binding(topo, binding_text, error);
        if (!binding) {
            return std::nullopt;
        }
    }

    Topology t;
    t.topo_ = std::move(shared);
    t.this_system_ = this_system;
    t.binding_ = list_string(binding.get());
    t.num_packages_ =
        static_cast<unsigned>(std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE)));
    t.num_numa_nodes_ =
        static_cast<unsigned>(std::max(0, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE)));

    for (hwloc_obj_t o = hwloc_get_next_osdev(topo, nullptr); o != nullptr;
         o = hwloc_get_next_osdev(topo, o)) {
        std::optional<IoDeviceKind> kind = kind_of(o->attr->osdev.type);
        if (!kind || o->name == nullptr) {
            continue;
        }
        IoDevice d;
        d.name = o->name;
        d.kind = *kind;
        if (o->subtype != nullptr) {
            d.subtype = o->subtype;
        }
        hwloc_obj_t pci = pci_parent(o);
        if (pci != nullptr) {
            const auto &p = pci->attr->pcidev;
            d.pci_bus_id = format_pci(p.domain, p.bus, p.dev, p.func);
        }
        hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
        if (anc != nullptr && anc->cpuset != nullptr) {
            d.locality = list_string(anc->cpuset);
            if (anc->nodeset != nullptr && hwloc_bitmap_weight(anc->nodeset) == 1) {
                d.numa_node = static_cast<unsigned>(hwloc_bitmap_first(anc->nodeset));
            }
            hwloc_obj_t pkg = anc->type == HWLOC_OBJ_PACKAGE
                                  ? anc
                                  : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, anc);
            if (pkg == nullptr) {
                // Attached above the packages (to the Machine): still one package's if
                // its CPUs all belong to one (single-socket machines).
                hwloc_obj_t only = hwloc_get_next_obj_covering_cpuset_by_type(
                    topo, anc->cpuset, HWLOC_OBJ_PACKAGE, nullptr);
                if (only != nullptr && hwloc_bitmap_isincluded(anc->cpuset, only->cpuset)) {
                    pkg = only;
                }
            }
            if (pkg != nullptr && pkg->os_index != HWLOC_UNKNOWN_INDEX) {
                d.package = pkg->os_index;
            }
            if (pci != nullptr) {
                unsigned hops = 0;
                hwloc_obj_t up = anc;
                while (up != nullptr && up->cpuset != nullptr &&
                       !hwloc_bitmap_isincluded(binding.get(), up->cpuset)) {
                    up = up->parent;
                    ++hops;
                }
                d.distance = hops;
            }
        }
        t.devices_.push_back(std::move(d));
    }
    return t;
}

std::optional<Topology> Topology::from_system(std::string *error) {
    auto h = new_hwloc(error);
    if (!h) {
        return std::nullopt;
    }
    if (hwloc_topology_load(h.get()) != 0) {
        if (error != nullptr) {
            *error = "hwloc_topology_load failed";
        }
        return std::nullopt;
    }
    // HWLOC_XMLFILE or HWLOC_SYNTHETIC in the environment make hwloc load something
    // else; then our binding means nothing to it.
    bool this_system = hwloc_topology_is_thissystem(h.get()) != 0;
    std::shared_ptr<hwloc_topology> shared(h.release(), HwlocDeleter{});
    return build(std::move(shared), this_system, {}, error);
}

std::optional<Topology> Topology::from_xml_file(const std::string &path, std::string_view binding,
                                                std::string *error) {
    auto h = new_hwloc(error);
    if (!h) {
        return std::nullopt;
    }
    if (hwloc_topology_set_xml(h.get(), path.c_str()) != 0 || hwloc_topology_load(h.get()) != 0) {
        if (error != nullptr) {
            *error = "cannot load hwloc XML topology from " + path;
        }
        return std::nullopt;
    }
    std::shared_ptr<hwloc_topology> shared(h.release(), HwlocDeleter{});
    return build(std::move(shared), false, binding, error);
}

std::optional<Topology> Topology::from_xml_buffer(std::string_view xml, std::string_view binding,
                                                  std::string *error) {
    auto h = new_hwloc(error);
    if (!h) {
        return std::nullopt;
    }
    std::string copy(xml);  // NUL-terminated; the size passed includes the NUL
    if (hwloc_topology_set_xmlbuffer(h.get(), copy.c_str(), static_cast<int>(copy.size() + 1)) !=
            0 ||
        hwloc_topology_load(h.get()) != 0) {
        if (error != nullptr) {
            *error = "cannot load hwloc XML topology from buffer";
        }
        return std::nullopt;
    }
    std::shared_ptr<hwloc_topology> shared(h.release(), HwlocDeleter{});
    return build(std::move(shared), false, binding, error);
}

std::optional<Topology> Topology::with_binding(std::string_view binding, std::string *error) const {
    if (!topo_) {
        if (error != nullptr) {
            *error = "empty topology";
        }
        return std::nullopt;
    }
    // An empty binding on the live system means "this process's binding" again.
    return build(topo_, this_system_, binding, error);
}

const IoDevice *Topology::find_device(std::string_view name) const {
    for (const IoDevice &d : devices_) {
        if (d.name == name) {
            return &d;
        }
    }
    // UCT names RDMA device ports "mlx5_0:1"; hwloc names the device "mlx5_0".
    auto colon = name.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < name.size()) {
        std::string_view port = name.substr(colon + 1);
        bool numeric = true;
        for (char c : port) {
            numeric = numeric && std::isdigit(static_cast<unsigned char>(c)) != 0;
        }
        if (numeric) {
            return find_device(name.substr(0, colon));
        }
    }
    return nullptr;
}

const IoDevice *Topology::find_by_pci_bus_id(std::string_view bus_id) const {
    std::optional<std::string> norm = normalize_pci_bus_id(bus_id);
    if (!norm) {
        return nullptr;
    }
    for (const IoDevice &d : devices_) {
        if (d.pci_bus_id == norm) {
            return &d;
        }
    }
    return nullptr;
}

std::optional<unsigned> Topology::distance(std::string_view device) const {
    const IoDevice *d = find_device(device);
    return d != nullptr ? d->distance : std::nullopt;
}

std::optional<unsigned> Topology::distance_by_pci_bus_id(std::string_view bus_id) const {
    const IoDevice *d = find_by_pci_bus_id(bus_id);
    return d != nullptr ? d->distance : std::nullopt;
}

namespace {

struct SystemTopology {
    Topology topology;
    std::string error;
};

const SystemTopology &system_topology_state() {
    static const SystemTopology state = [] {
        SystemTopology s;
        std::optional<Topology> t = Topology::from_system(&s.error);
        if (t) {
            s.topology = std::move(*t);
        } else {
            UFI_LOG_INFO(ufi::log::Subsys::Core, "no hwloc topology ({}); device distances unknown",
                         s.error);
        }
        return s;
    }();
    return state;
}

}  // namespace

const Topology &system_topology() {
    return system_topology_state().topology;
}
const std::string &system_topology_error() {
    return system_topology_state().error;
}

}  // namespace ufi::transports
