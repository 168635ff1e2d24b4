#include "transports/iface/discovery.h"

#include "transports/iface/fifo_tuning.h"
#include "transports/iface/iface_caps.h"

#include "base/log/log.h"
#include "transports/net_interfaces.h"
#include "transports/tl_resource_list.h"
#include "transports/ucs_status.h"
#include "transports/ucx_handles.h"

#include <ucs/sys/topo/base/topo.h>
#include <uct/api/uct.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace ufi::transports {

namespace {

// Discovery never creates endpoints, so no peer can fail; UCT still wants a
// handler installed (without one a failure is fatal, brief section 8).
ucs_status_t ignore_iface_error(void *, uct_ep_h, ucs_status_t) {
    return UCS_OK;
}

DeviceType device_type_of(uct_device_type_t t) {
    switch (t) {
        case UCT_DEVICE_TYPE_NET:
            return DeviceType::Network;
        case UCT_DEVICE_TYPE_SHM:
            return DeviceType::SharedMemory;
        case UCT_DEVICE_TYPE_ACC:
            return DeviceType::Accelerator;
        case UCT_DEVICE_TYPE_SELF:
            return DeviceType::Loopback;
        default:
            return DeviceType::Other;
    }
}

std::string failure(const std::string &what, Status status) {
    return what + ": " + to_string(status);
}

MdInfo md_info_of(const std::string &md_name, const std::string &component,
                  const uct_md_attr_t &attr) {
    MdInfo m;
    m.name = md_name;
    m.component = component;
    m.cap_flags = attr.cap.flags;
    m.max_alloc = attr.cap.max_alloc;
    m.max_reg = attr.cap.max_reg;
    m.reg_cost_c = attr.reg_cost.c;
    m.reg_cost_m = attr.reg_cost.m;
    m.rkey_packed_size = attr.rkey_packed_size;
    m.reg_mem_types = attr.cap.reg_mem_types;
    m.alloc_mem_types = attr.cap.alloc_mem_types;
    m.access_mem_types = attr.cap.access_mem_types;
    m.detect_mem_types = attr.cap.detect_mem_types;
    return m;
}

void copy_iface_attr(const uct_iface_attr_t &a, Resource &r) {
    const IfaceCaps c = caps_of(a);
    r.iface_cap_flags = c.flags;
    r.event_flags = c.event_flags;
    r.limits = c.limits;
    r.perf = c.perf;
    r.device_addr_len = c.device_addr_len;
    r.iface_addr_len = c.iface_addr_len;
    r.ep_addr_len = c.ep_addr_len;
}

// Opens the resource's iface on `worker`, queries it and closes it again.
void probe_iface(const Md &md, const Worker &worker, const uct_tl_resource_desc_t &tl,
                 Resource &r) {
    IfaceConfig config;
    Status status = IfaceConfig::read(md.get(), tl.tl_name, config);
    if (status != UCS_OK) {
        r.usable = false;
        r.error = failure("uct_md_iface_config_read", status);
        return;
    }
    // As endpoints open it (their limits, and their records' length, are these).
    const std::vector<uint8_t> geometry = tune_shm_fifo(config.get(), tl.tl_name);

    uct_iface_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_RX_HEADROOM | UCT_IFACE_PARAM_FIELD_CPU_MASK |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER | UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS | UCT_IFACE_PARAM_FIELD_FEATURES;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = tl.tl_name;
    params.mode.device.dev_name = tl.dev_name;
    params.rx_headroom = 0;
    params.err_handler = ignore_iface_error;
    params.err_handler_arg = nullptr;
    params.err_handler_flags = 0;
    params.features = UCT_IFACE_FEATURE_AM | UCT_IFACE_FEATURE_PUT | UCT_IFACE_FEATURE_GET |
                      UCT_IFACE_FEATURE_AMO32 | UCT_IFACE_FEATURE_AMO64;

    Iface iface;
    status = Iface::open(md, worker, params, config, iface);
    if (status != UCS_OK) {
        r.usable = false;
        r.error = failure("uct_iface_open", status);
        return;
    }
    uct_iface_attr_t attr;
    std::memset(&attr, 0, sizeof(attr));
    status = status_of(uct_iface_query(iface.get(), &attr));
    if (status != UCS_OK) {
        r.usable = false;
        r.error = failure("uct_iface_query", status);
        return;
    }
    copy_iface_attr(attr, r);
    // Records carry a FIFO's geometry after UCT's iface address (endpoint_worker.cpp).
    if ((attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) && attr.iface_addr_len > 0) {
        r.iface_addr_len += geometry.size();
    }
}

void fill_network_facts(const std::vector<NetInterface> &interfaces, Resource &r) {
    auto by_name = [&](std::string_view name) -> const NetInterface * {
        for (const NetInterface &n : interfaces) {
            if (n.name == name) {
                return &n;
            }
        }
        return nullptr;
    };
    const NetInterface *netif = by_name(r.dev);
    if (netif != nullptr) {
        r.netdev = r.dev;
        r.is_loopback_netdev = netif->is_loopback || is_loopback_interface(r.dev);
        if (!r.pci_bus_id) {
            r.pci_bus_id = netif->pci_bus_id;
        }
    } else {
        // An RDMA device port (mlx5_0:1): never loopback; its kernel netdev, if any,
        // gives the IP addresses.
        r.is_loopback_netdev = false;
        r.netdev = rdma_port_netdev(r.dev);
        netif = r.netdev.empty() ? nullptr : by_name(r.netdev);
        if (!r.pci_bus_id) {
            r.pci_bus_id = rdma_device_pci_bus_id(r.dev);
        }
    }
    if (netif != nullptr) {
        for (const InterfaceAddress &a : netif->addresses) {
            r.ip_addrs.push_back(a.address);
        }
    }
}

void probe_cm(uct_component_h comp, const Worker &worker, ComponentInfo &ci) {
    CmConfig config;
    Status status = CmConfig::read(comp, config);
    if (status != UCS_OK) {
        ci.cm_error = failure("uct_cm_config_read", status);
        return;
    }
    Cm cm;
    status = Cm::open(comp, worker, config, cm);
    if (status != UCS_OK) {
        ci.cm_error = failure("uct_cm_open", status);
        return;
    }
    uct_cm_attr_t attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.field_mask = UCT_CM_ATTR_FIELD_MAX_CONN_PRIV;
    status = status_of(uct_cm_query(cm.get(), &attr));
    if (status != UCS_OK) {
        ci.cm_error = failure("uct_cm_query", status);
        return;
    }
    ci.cm_usable = true;
    ci.cm_max_conn_priv = attr.max_conn_priv;
}

void discover_md(uct_component_h comp, const ComponentInfo &ci, const std::string &md_name,
                 const Worker &worker, Discovery &d) {
    MdInfo info;
    info.name = md_name;
    info.component = ci.name;

    MdConfig config;
    Status status = MdConfig::read(comp, config);
    if (status != UCS_OK) {
        info.usable = false;
        info.error = failure("uct_md_config_read", status);
        d.problems.push_back("md " + md_name + ": " + info.error);
        d.mds.push_back(std::move(info));
        return;
    }
    Md md;
    status = Md::open(comp, md_name.c_str(), config, md);
    if (status != UCS_OK) {
        info.usable = false;
        info.error = failure("uct_md_open", status);
        d.problems.push_back("md " + md_name + ": " + info.error);
        d.mds.push_back(std::move(info));
        return;
    }
    uct_md_attr_t attr;
    std::memset(&attr, 0, sizeof(attr));
    status = status_of(uct_md_query(md.get(), &attr));
    if (status != UCS_OK) {
        info.usable = false;
        info.error = failure("uct_md_query", status);
        d.problems.push_back("md " + md_name + ": " + info.error);
        d.mds.push_back(std::move(info));
        return;
    }
    info = md_info_of(md_name, ci.name, attr);

    TlResourceList tls;
    status = status_of(TlResourceList::query(md.get(), tls));
    if (status != UCS_OK) {
        d.problems.push_back("md " + md_name + ": " + failure("uct_md_query_tl_resources", status));
        d.mds.push_back(std::move(info));
        return;
    }

    for (const uct_tl_resource_desc_t &tl : tls.resources()) {
        Resource r;
        r.component = ci.name;
        r.md = md_name;
        r.tl = tl.tl_name;
        r.dev = tl.dev_name;
        r.type = device_type_of(tl.dev_type);
        r.sys_device = tl.sys_device == UCS_SYS_DEVICE_ID_UNKNOWN ? -1 : int(tl.sys_device);
        if (tl.sys_device != UCS_SYS_DEVICE_ID_UNKNOWN) {
            char buf[32] = {};
            const char *bdf = ucs_topo_sys_device_bdf_name(tl.sys_device, buf, sizeof(buf));
            if (bdf != nullptr && *bdf != '\0' && std::strcmp(bdf, "<unknown>") != 0) {
                r.pci_bus_id = std::string(bdf);
            }
        }
        r.md_cap_flags = info.cap_flags;
        r.rkey_packed_size = info.rkey_packed_size;
        r.reg_cost_c = info.reg_cost_c;
        r.reg_cost_m = info.reg_cost_m;
        r.max_reg = info.max_reg;
        if (r.type == DeviceType::Network) {
            fill_network_facts(d.interfaces, r);
        }
        if (worker) {
            probe_iface(md, worker, tl, r);
        } else {
            r.usable = false;
            r.error = "no worker to open the iface on";
        }
        if (!r.usable) {
            d.problems.push_back(r.label() + ": " + r.error);
        }
        d.resources.push_back(std::move(r));
    }
    d.mds.push_back(std::move(info));
}

}  // namespace

Discovery discover_now() {
    Discovery d;
    d.interfaces = list_net_interfaces();

    ComponentList components;
    Status status = ComponentList::query(components);
    if (status != UCS_OK) {
        d.problems.push_back(failure("uct_query_components", status));
        return d;
    }

    // One POLL-mode async context and single-threaded worker for every probe: no
    // helper thread is started, and the ifaces are closed before they progress.
    AsyncContext async;
    Worker worker;
    status = AsyncContext::create(AsyncMode::kPoll, async);
    if (status != UCS_OK) {
        d.problems.push_back(failure("ucs_async_context_create", status));
    } else {
        status = Worker::create(async, ThreadMode::kSingle, worker);
        if (status != UCS_OK) {
            d.problems.push_back(failure("uct_worker_create", status));
        }
    }

    for (uct_component_h comp : components.components()) {
        uct_component_attr_t ca;
        std::memset(&ca, 0, sizeof(ca));
        ca.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT |
                        UCT_COMPONENT_ATTR_FIELD_FLAGS;
        status = status_of(uct_component_query(comp, &ca));
        if (status != UCS_OK) {
            d.problems.push_back(failure("uct_component_query", status));
            continue;
        }
        ComponentInfo ci;
        ci.name = ca.name;
        ci.flags = ca.flags;
        ci.has_cm = (ca.flags & UCT_COMPONENT_FLAG_CM) != 0;

        std::vector<uct_md_resource_desc_t> md_resources(ca.md_resource_count);
        if (!md_resources.empty()) {
            ca.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
            ca.md_resources = md_resources.data();
            status = status_of(uct_component_query(comp, &ca));
            if (status != UCS_OK) {
                d.problems.push_back("component " + ci.name + ": " +
                                     failure("uct_component_query(md_resources)", status));
                md_resources.clear();
            }
        }
        for (const uct_md_resource_desc_t &mr : md_resources) {
            ci.md_names.emplace_back(mr.md_name);
        }

        if (ci.has_cm) {
            if (worker) {
                probe_cm(comp, worker, ci);
            } else {
                ci.cm_error = "no worker to open the connection manager on";
            }
            if (!ci.cm_usable) {
                d.problems.push_back("connection manager " + ci.name + ": " + ci.cm_error);
            }
        }

        for (const std::string &md_name : ci.md_names) {
            discover_md(comp, ci, md_name, worker, d);
        }
        d.components.push_back(std::move(ci));
    }
    return d;
}

const Discovery &discovery() {
    static const Discovery cached = [] {
        Discovery d = discover_now();
        UFI_LOG_DEBUG(ufi::log::Subsys::Core,
                      "UCT discovery: {} components, {} memory domains, {} resources",
                      d.components.size(), d.mds.size(), d.resources.size());
        for (const std::string &p : d.problems) {
            UFI_LOG_DEBUG(ufi::log::Subsys::Core, "UCT discovery: {}", p);
        }
        return d;
    }();
    return cached;
}

const Resource *find_resource(const Discovery &d, std::string_view tl, std::string_view dev) {
    for (const Resource &r : d.resources) {
        if (r.tl == tl && r.dev == dev) {
            return &r;
        }
    }
    return nullptr;
}

const MdInfo *find_md(const Discovery &d, std::string_view md) {
    for (const MdInfo &m : d.mds) {
        if (m.name == md) {
            return &m;
        }
    }
    return nullptr;
}

const ComponentInfo *find_component(const Discovery &d, std::string_view name) {
    for (const ComponentInfo &c : d.components) {
        if (c.name == name) {
            return &c;
        }
    }
    return nullptr;
}

const NetInterface *find_interface(const Discovery &d, std::string_view name) {
    for (const NetInterface &n : d.interfaces) {
        if (n.name == name) {
            return &n;
        }
    }
    return nullptr;
}

}  // namespace ufi::transports
