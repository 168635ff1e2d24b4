#include "runtime/diag/report.h"

#include "base/config/config.h"
#include "runtime/info/getinfo.h"
#include "runtime/info/provider_info.h"
#include "runtime/version.h"
#include "transports/iface/discovery.h"
#include "transports/flag_names.h"
#include "transports/op_limits.h"
#include "transports/selection.h"
#include "transports/topology.h"
#include "transports/topology_view.h"
#include "transports/versions.h"

#include <rdma/fabric.h>

#include <spdlog/version.h>

#include <cmath>
#include <cstdio>

namespace ufi::runtime::diag {

Record &Record::str(std::string key, std::string value) {
    fields.push_back({std::move(key), std::move(value), ValueKind::String});
    return *this;
}

Record &Record::num(std::string key, uint64_t value) {
    fields.push_back({std::move(key), std::to_string(value), ValueKind::Number});
    return *this;
}

Record &Record::num(std::string key, double value) {
    char buf[64];
    if (!std::isfinite(value)) value = 0;
    snprintf(buf, sizeof(buf), "%.6g", value);
    fields.push_back({std::move(key), buf, ValueKind::Number});
    return *this;
}

Record &Record::boolean(std::string key, bool value) {
    fields.push_back({std::move(key), value ? "true" : "false", ValueKind::Bool});
    return *this;
}

Record &Record::list(std::string key, const std::vector<std::string> &items) {
    fields.push_back({std::move(key), transports::join_names(items, ", "), ValueKind::List});
    return *this;
}

namespace {

std::string version_string(uint32_t v) {
    return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

Record transport_record(const transports::Resource &r, const transports::TopologyView &view) {
    Record rec{"transport", r.label(), {}};
    rec.str("transport", r.tl).str("device", r.dev).str("component", r.component).str("md", r.md);
    rec.str("type", std::string(transports::to_string(r.type)));
    rec.boolean("usable", r.usable);
    if (!r.usable) rec.str("error", r.error);
    if (r.type == transports::DeviceType::Network) {
        rec.boolean("loopback", r.is_loopback_netdev);
        if (!r.netdev.empty()) rec.str("netdev", r.netdev);
        rec.list("ip_addrs", r.ip_addrs);
    }
    if (r.pci_bus_id) rec.str("pci_bus_id", *r.pci_bus_id);
    const auto dist = view.distance(r.dev);
    rec.str("distance", dist ? std::to_string(*dist) : "unknown");
    if (!r.usable) return rec;
    rec.num("bandwidth_dedicated_MBps", r.perf.bandwidth_dedicated / 1e6);
    rec.num("bandwidth_shared_MBps", r.perf.bandwidth_shared / 1e6);
    rec.num("latency_ns", r.perf.latency_s * 1e9);
    rec.num("latency_per_ep_ns", r.perf.latency_per_ep_s * 1e9);
    rec.num("overhead_ns", r.perf.overhead_s * 1e9);
    rec.num("priority", static_cast<uint64_t>(r.perf.priority < 0 ? 0 : r.perf.priority));
    rec.num("max_eps", static_cast<uint64_t>(r.perf.max_num_eps));
    rec.num("num_paths", static_cast<uint64_t>(r.perf.dev_num_paths));
    const auto &l = r.limits;
    // Sizes of the operations the transport supports, as ucx_info shows them.
    for (const transports::SizeLimit &lim : transports::op_size_limits(r))
        rec.num(std::string(lim.name), static_cast<uint64_t>(lim.value));
    if (l.atomic32.op_flags | l.atomic32.fop_flags) {
        rec.list("atomic32_post", transports::atomic_op_names(l.atomic32.op_flags));
        rec.list("atomic32_fetch", transports::atomic_op_names(l.atomic32.fop_flags));
    }
    if (l.atomic64.op_flags | l.atomic64.fop_flags) {
        rec.list("atomic64_post", transports::atomic_op_names(l.atomic64.op_flags));
        rec.list("atomic64_fetch", transports::atomic_op_names(l.atomic64.fop_flags));
    }
    rec.list("capabilities", transports::iface_cap_flag_names(r.iface_cap_flags));
    rec.list("events", transports::iface_event_flag_names(r.event_flags));
    rec.num("device_addr_len", static_cast<uint64_t>(r.device_addr_len));
    rec.num("iface_addr_len", static_cast<uint64_t>(r.iface_addr_len));
    rec.num("ep_addr_len", static_cast<uint64_t>(r.ep_addr_len));
    rec.list("md_flags", transports::md_flag_names(r.md_cap_flags));
    rec.num("rkey_packed_size", static_cast<uint64_t>(r.rkey_packed_size));
    rec.num("reg_cost_ns", r.reg_cost_c * 1e9);
    return rec;
}

const transports::TopologyView &process_view() {
    static const transports::TopologyView view = transports::TopologyView::from_topology(
        transports::system_topology(), transports::discovery().resources);
    return view;
}

}  // namespace

Report versions_report() {
    Report out;
    out.push_back(Record{"version", "ufi", {}}
                      .str("version", UFI_VERSION_STRING)
                      .str("provider_version", version_string(info::provider_version())));
    out.push_back(Record{"version", "libfabric_api", {}}.str(
        "version", version_string(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION))));
    out.push_back(Record{"version", "ucx", {}}.str("version", transports::ucx_version()));
    out.push_back(Record{"version", "hwloc", {}}.str("version", transports::hwloc_version()));
    out.push_back(Record{"version", "spdlog", {}}.str(
        "version", std::to_string(SPDLOG_VER_MAJOR) + "." + std::to_string(SPDLOG_VER_MINOR) + "." +
                       std::to_string(SPDLOG_VER_PATCH)));
    return out;
}

Report transports_report() {
    Report out;
    const transports::Discovery &d = transports::discovery();
    for (const auto &c : d.components) {
        Record rec{"component", c.name, {}};
        rec.list("mds", c.md_names).list("flags", transports::component_flag_names(c.flags));
        if (c.has_cm) {
            rec.boolean("cm_usable", c.cm_usable);
            if (!c.cm_usable) rec.str("cm_error", c.cm_error);
            else rec.num("cm_max_conn_priv", static_cast<uint64_t>(c.cm_max_conn_priv));
        }
        out.push_back(std::move(rec));
    }
    for (const auto &m : d.mds) {
        Record rec{"md", m.name, {}};
        rec.str("component", m.component).boolean("usable", m.usable);
        if (!m.usable) {
            rec.str("error", m.error);
        } else {
            rec.list("flags", transports::md_flag_names(m.cap_flags));
            rec.num("max_reg", static_cast<uint64_t>(m.max_reg));
            rec.num("reg_cost_ns", m.reg_cost_c * 1e9);
            rec.num("reg_cost_per_byte_ns", m.reg_cost_m * 1e9);
            rec.num("rkey_packed_size", static_cast<uint64_t>(m.rkey_packed_size));
            rec.list("reg_mem_types", transports::memory_type_names(m.reg_mem_types));
            rec.list("alloc_mem_types", transports::memory_type_names(m.alloc_mem_types));
            rec.list("access_mem_types", transports::memory_type_names(m.access_mem_types));
        }
        out.push_back(std::move(rec));
    }
    for (const auto &r : d.resources) out.push_back(transport_record(r, process_view()));
    for (const auto &p : d.problems) out.push_back(Record{"problem", "discovery", {}}.str("text", p));
    return out;
}

Report config_report() {
    Report out;
    for (const auto &v : config::registry().list()) {
        Record rec{"variable", v.name, {}};
        rec.str("value", v.value).str("default", v.default_value).str("type", v.type_name);
        rec.str("syntax", v.syntax).str("doc", v.doc).boolean("set", v.is_set);
        rec.boolean("dynamic", v.is_dynamic);
        out.push_back(std::move(rec));
    }
    return out;
}

Report topology_report() {
    Report out;
    const transports::Topology &topo = transports::system_topology();
    Record binding{"binding", "process", {}};
    if (topo.empty()) {
        binding.str("error", transports::system_topology_error());
    } else {
        binding.str("cpus", topo.binding());
        binding.num("packages", static_cast<uint64_t>(topo.num_packages()));
        binding.num("numa_nodes", static_cast<uint64_t>(topo.num_numa_nodes()));
    }
    out.push_back(std::move(binding));
    for (const auto &dev : topo.devices()) {
        Record rec{"device", dev.name, {}};
        // Not "kind": every record has its own kind ("device"), and JSON keys must be unique.
        rec.str("device_kind", std::string(transports::to_string(dev.kind)));
        if (!dev.subtype.empty()) rec.str("subtype", dev.subtype);
        if (dev.pci_bus_id) rec.str("pci_bus_id", *dev.pci_bus_id);
        if (dev.numa_node) rec.num("numa_node", static_cast<uint64_t>(*dev.numa_node));
        if (dev.package) rec.num("package", static_cast<uint64_t>(*dev.package));
        if (!dev.locality.empty()) rec.str("near_cpus", dev.locality);
        rec.str("distance", dev.distance ? std::to_string(*dev.distance) : "unknown");
        out.push_back(std::move(rec));
    }
    // The UCT network devices, mapped onto the topology (lo has no hardware: unknown).
    const auto &view = process_view();
    std::vector<std::string> seen;
    for (const auto &r : transports::discovery().resources) {
        if (r.type != transports::DeviceType::Network) continue;
        bool dup = false;
        for (const auto &s : seen) dup |= s == r.dev;
        if (dup) continue;
        seen.push_back(r.dev);
        const auto dist = view.distance(r.dev);
        Record rec{"uct_device", r.dev, {}};
        rec.boolean("loopback", r.is_loopback_netdev);
        rec.str("distance", dist ? std::to_string(*dist) : "unknown");
        out.push_back(std::move(rec));
    }
    return out;
}

Report domains_report() {
    Report out;
    const info::GetinfoEnv &env = info::process_env();
    uint64_t rank = 0;
    for (const auto &o : env.offers) {
        Record rec{"domain", o.name, {}};
        rec.num("rank", rank++).str("transports", o.description);
        if (!o.net_device.empty()) rec.str("net_device", o.net_device);
        rec.boolean("reaches_local", o.reaches_local).boolean("reaches_remote", o.reaches_remote);
        rec.list("ip_addrs", o.ip_addrs);
        rec.num("inject_size", static_cast<uint64_t>(o.inject_size));
        rec.num("max_msg_size", static_cast<uint64_t>(o.max_msg_size));
        rec.num("iov_limit", static_cast<uint64_t>(o.iov_limit));
        rec.num("rma_iov_limit", static_cast<uint64_t>(o.rma_iov_limit));
        out.push_back(std::move(rec));
    }
    for (const auto &note : env.selection_notes) out.push_back(Record{"excluded", "transport", {}}.str("reason", note));
    return out;
}

Report getinfo_explain_report() {
    Report out;
    const info::Explanation &why = info::last_explanation();
    for (const auto &line : why.lines) {
        out.push_back(Record{"reason", "fi_getinfo", {}}.str("text", line).boolean("explicit_request", why.explicit_request));
    }
    return out;
}

}  // namespace ufi::runtime::diag
