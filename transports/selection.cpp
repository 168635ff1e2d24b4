#include "transports/selection.h"

#include <uct/api/uct.h>

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <tuple>

namespace ufi::transports {

namespace {

constexpr double kScoreMessageSize = 256.0 * 1024.0;

constexpr std::array<std::string_view, 6> kLocalOrder = {"posix", "sysv", "xpmem",
                                                         "knem",  "cma",  "self"};
constexpr std::array<std::string_view, 6> kAccOrder = {"cuda_copy", "cuda_ipc", "gdr_copy",
                                                       "rocm_copy", "rocm_ipc", "rocm_gdr"};
constexpr std::array<std::string_view, 6> kNetOrder = {"rc_mlx5",  "dc_mlx5",  "ud_mlx5",
                                                       "rc_verbs", "ud_verbs", "tcp"};

template <std::size_t N>
std::size_t rank_in(const std::array<std::string_view, N> &order, std::string_view tl) {
    auto it = std::find(order.begin(), order.end(), tl);
    return static_cast<std::size_t>(it - order.begin());  // N when absent
}

bool is_local_type(DeviceType t) {
    return t == DeviceType::SharedMemory || t == DeviceType::Loopback ||
           t == DeviceType::Accelerator;
}

// Sorts resource indices: by canonical transport order, unknown names after known
// ones alphabetically, then device name, then index.
template <std::size_t N>
void sort_canonical(std::vector<std::size_t> &idx, const std::vector<Resource> &res,
                    const std::array<std::string_view, N> &order) {
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        const Resource &ra = res[a];
        const Resource &rb = res[b];
        return std::make_tuple(rank_in(order, ra.tl), std::string_view(ra.tl),
                               std::string_view(ra.dev),
                               a) < std::make_tuple(rank_in(order, rb.tl), std::string_view(rb.tl),
                                                    std::string_view(rb.dev), b);
    });
}

void append_unique_tl(std::vector<std::string> &out, const std::string &tl) {
    if (std::find(out.begin(), out.end(), tl) == out.end()) {
        out.push_back(tl);
    }
}

std::string join(const std::vector<std::string> &v, char sep) {
    std::string out;
    for (const std::string &s : v) {
        if (!out.empty()) {
            out += sep;
        }
        out += s;
    }
    return out;
}

// "shm(posix,sysv,cma,self)", "acc(cuda_copy)" parts of a description.
std::string local_description(const std::vector<std::size_t> &local,
                              const std::vector<Resource> &res) {
    std::vector<std::string> shm, acc;
    for (std::size_t i : local) {
        append_unique_tl(res[i].type == DeviceType::Accelerator ? acc : shm, res[i].tl);
    }
    std::string out;
    if (!shm.empty()) {
        out = "shm(" + join(shm, ',') + ")";
    }
    if (!acc.empty()) {
        out += (out.empty() ? "" : "+") + std::string("acc(") + join(acc, ',') + ")";
    }
    return out;
}

std::string filter_reason(FilterMode mode, std::string_view var, const std::string &text) {
    return mode == FilterMode::Exclude ? "excluded by " + std::string(var) + "=" + text
                                       : "not selected, " + std::string(var) + "=" + text;
}

}  // namespace

bool is_rdma_resource(const Resource &r) {
    return (r.md_cap_flags & UCT_MD_FLAG_NEED_MEMH) != 0 || r.has(UCT_IFACE_FLAG_GET_ZCOPY) ||
           r.has(UCT_IFACE_FLAG_ATOMIC_DEVICE);
}

double transport_score(const Resource &r) {
    double bw = r.perf.bandwidth(1);
    if (!(bw > 0)) {
        return 0;
    }
    double t = kScoreMessageSize / bw + r.perf.latency_s + r.perf.overhead_s;
    return t > 0 ? 1.0 / t : 0;
}

const DomainChoice *SelectionResult::find(std::string_view name) const {
    for (const DomainChoice &c : choices) {
        if (c.name == name) {
            return &c;
        }
    }
    return nullptr;
}

std::vector<std::string> SelectionResult::choice_names() const {
    std::vector<std::string> out;
    out.reserve(choices.size());
    for (const DomainChoice &c : choices) {
        out.push_back(c.name);
    }
    return out;
}

SelectionResult select_domains(const std::vector<Resource> &resources, const TopologyView &topo,
                               const SelectionConfig &cfg) {
    SelectionResult result;
    result.diagnostics = cfg.diagnostics;

    // Names in the settings that match nothing here (usable or not).
    if (cfg.tls.mode != FilterMode::All) {
        for (const std::string &tok : cfg.tls.tokens) {
            std::vector<std::string> members = expand_transport_alias(tok);
            bool found = std::any_of(resources.begin(), resources.end(), [&](const Resource &r) {
                return std::find(members.begin(), members.end(), r.tl) != members.end();
            });
            if (!found) {
                result.diagnostics.push_back("UFI_TLS: '" + tok +
                                             "' matches no transport on this host");
            }
        }
    }
    if (cfg.net_devices.mode != FilterMode::All) {
        for (const std::string &name : cfg.net_devices.names) {
            bool found = std::any_of(resources.begin(), resources.end(), [&](const Resource &r) {
                return r.type == DeviceType::Network && DeviceFilter::name_matches(name, r.dev);
            });
            if (!found) {
                result.diagnostics.push_back("UFI_NET_DEVICES: '" + name +
                                             "' matches no network device on this host");
            }
        }
    }

    // Filter.
    std::vector<std::size_t> local;
    std::map<std::string, std::vector<std::size_t>> by_netdev;
    auto exclude = [&](std::size_t i, std::string reason) {
        result.excluded.push_back({i, resources[i].label(), std::move(reason)});
    };
    for (std::size_t i = 0; i < resources.size(); ++i) {
        const Resource &r = resources[i];
        if (!r.usable) {
            exclude(i, "unusable: " + (r.error.empty() ? std::string("unknown error") : r.error));
        } else if (!cfg.tls.selects(r.tl)) {
            exclude(i, filter_reason(cfg.tls.mode, "UFI_TLS", cfg.tls.text));
        } else if (r.type == DeviceType::Network && !cfg.net_devices.selects(r.dev)) {
            exclude(i,
                    filter_reason(cfg.net_devices.mode, "UFI_NET_DEVICES", cfg.net_devices.text));
        } else if (r.type == DeviceType::Network) {
            by_netdev[r.dev].push_back(i);
        } else if (is_local_type(r.type)) {
            local.push_back(i);
        } else {
            exclude(i, "unsupported device type");
        }
    }

    // Local lanes: shm/self in canonical order, then accelerators.
    std::vector<std::size_t> shm_self, acc;
    for (std::size_t i : local) {
        (resources[i].type == DeviceType::Accelerator ? acc : shm_self).push_back(i);
    }
    sort_canonical(shm_self, resources, kLocalOrder);
    sort_canonical(acc, resources, kAccOrder);
    std::vector<std::size_t> local_lanes = shm_self;
    local_lanes.insert(local_lanes.end(), acc.begin(), acc.end());
    const bool has_shm = !shm_self.empty();
    const std::string local_desc = local_description(local_lanes, resources);

    // One choice per network device.
    std::vector<DomainChoice> net_choices;
    for (auto &[dev, idx] : by_netdev) {
        sort_canonical(idx, resources, kNetOrder);
        DomainChoice c;
        c.name = dev;
        c.net_device = dev;
        c.local_resources = local_lanes;
        c.net_resources = idx;
        c.resources = local_lanes;
        c.resources.insert(c.resources.end(), idx.begin(), idx.end());
        // A network transport reaches the peers of this host too (tcp to a local address,
        // an HCA's loopback), shared memory or not: libfabric's tcp provider says FI_LOCAL_COMM.
        c.reaches_local = true;
        c.distance = topo.distance(dev);
        std::vector<std::string> tls;
        bool first = true;
        for (std::size_t i : idx) {
            const Resource &r = resources[i];
            append_unique_tl(tls, r.tl);
            c.loopback_net = c.loopback_net || r.is_loopback_netdev;
            c.rdma = c.rdma || is_rdma_resource(r);
            c.score = std::max(c.score, transport_score(r));
            c.priority = first ? r.perf.priority : std::max(c.priority, r.perf.priority);
            first = false;
        }
        c.reaches_remote = !c.loopback_net;
        std::string net_desc =
            (tls.size() == 1 ? tls.front() : "{" + join(tls, ',') + "}") + "/" + dev;
        c.description = local_desc.empty() ? net_desc : local_desc + "+" + net_desc;
        net_choices.push_back(std::move(c));
    }

    // Order: category, RDMA tier, distance, score, priority, name (see selection.h).
    bool any_known = std::any_of(net_choices.begin(), net_choices.end(), [](const DomainChoice &c) {
        return !c.loopback_net && c.distance.has_value();
    });
    auto distance_rank = [&](const DomainChoice &c) -> unsigned {
        if (c.distance) {
            return *c.distance;
        }
        return any_known ? UINT_MAX : 0U;
    };
    std::stable_sort(
        net_choices.begin(), net_choices.end(), [&](const DomainChoice &a, const DomainChoice &b) {
            auto key = [&](const DomainChoice &c) {
                return std::make_tuple(c.loopback_net ? 1 : 0, c.rdma ? 0 : 1,
                                       c.loopback_net ? 0U : distance_rank(c), -c.score,
                                       -c.priority, std::string_view(c.name));
            };
            return key(a) < key(b);
        });
    result.choices = std::move(net_choices);

    if (has_shm) {
        DomainChoice c;
        c.name = "shm";
        c.local_resources = local_lanes;
        c.resources = local_lanes;
        c.reaches_local = true;
        c.description = local_desc;
        for (std::size_t i : local_lanes) {
            c.score = std::max(c.score, transport_score(resources[i]));
        }
        result.choices.push_back(std::move(c));
    } else if (result.choices.empty()) {
        // Accelerator transports alone reach no peer.
        for (std::size_t i : acc) {
            exclude(i,
                    "no shared-memory or network transport to pair the accelerator transport with");
        }
        std::stable_sort(result.excluded.begin(), result.excluded.end(),
                         [](const ExcludedResource &a, const ExcludedResource &b) {
                             return a.resource < b.resource;
                         });
    }
    if (result.choices.empty()) {
        result.diagnostics.push_back(resources.empty()
                                         ? "no transport resources found"
                                         : "no usable transport resource is selected");
    }
    return result;
}

}  // namespace ufi::transports
