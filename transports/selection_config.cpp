#include "transports/selection_config.h"

#include "base/config/config.h"
#include "base/log/log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>
#include <utility>

namespace ufi::transports {

namespace {

struct Alias {
    std::string_view name;
    std::string_view members;  // comma list
};

constexpr std::array<Alias, 15> kAliases = {{
    {"shm", "posix,sysv,cma,self,knem,xpmem"},
    {"sm", "posix,sysv,cma,self,knem,xpmem"},
    {"mm", "posix,sysv,xpmem"},
    {"ib", "rc_verbs,rc_mlx5,dc_mlx5,ud_verbs,ud_mlx5"},
    {"rc", "rc_verbs,rc_mlx5"},
    {"ud", "ud_verbs,ud_mlx5"},
    {"dc", "dc_mlx5"},
    {"rc_v", "rc_verbs"},
    {"rc_x", "rc_mlx5"},
    {"ud_v", "ud_verbs"},
    {"ud_x", "ud_mlx5"},
    {"dc_x", "dc_mlx5"},
    {"cuda", "cuda_copy,cuda_ipc,gdr_copy"},
    {"rocm", "rocm_copy,rocm_ipc"},
    {"gdr", "gdr_copy"},
}};

// Transport names UCX 1.13 can report (uct_md_query_tl_resources tl_name).
constexpr std::array<std::string_view, 22> kKnownTransports = {
    "self",      "posix",    "sysv",      "xpmem",     "knem",     "cma",
    "tcp",       "rc_verbs", "rc_mlx5",   "dc_mlx5",   "ud_verbs", "ud_mlx5",
    "cuda_copy", "cuda_ipc", "gdr_copy",  "rocm_copy", "rocm_ipc", "rocm_gdr",
    "ugni_rdma", "ugni_udt", "ugni_smsg", "sockcm",
};

std::string trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])) != 0) {
        ++b;
    }
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])) != 0) {
        --e;
    }
    return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
    for (char &c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

std::vector<std::string> split_commas(std::string_view s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t comma = s.find(',', start);
        std::string_view part = s.substr(
            start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        std::string t = trim(part);
        if (!t.empty()) {
            out.push_back(std::move(t));
        }
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    return out;
}

void push_unique(std::vector<std::string> &v, std::string s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) {
        v.push_back(std::move(s));
    }
}

// The common part: tokens, mode, '^' handling and 'all'.
struct Tokens {
    FilterMode mode = FilterMode::All;
    bool nothing = false;  // "^all"
    std::vector<std::string> names;
};

Tokens tokenize(const std::vector<std::string> &items, std::string_view var, bool fold_case,
                std::vector<std::string> &diagnostics) {
    std::vector<std::string> raw;
    for (const std::string &item : items) {
        for (std::string &t : split_commas(item)) {
            raw.push_back(std::move(t));
        }
    }
    Tokens out;
    bool exclude = false;
    bool saw_all = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        std::string t = raw[i];
        if (!t.empty() && t.front() == '^') {
            if (i == 0) {
                exclude = true;
            } else {
                diagnostics.push_back(std::string(var) +
                                      ": '^' only applies at the start of the list; '" + t +
                                      "' read as '" + t.substr(1) + "'");
            }
            t = trim(std::string_view(t).substr(1));
        }
        if (t.empty()) {
            continue;
        }
        if (fold_case) {
            t = lower(std::move(t));
        }
        if (lower(t) == "all") {
            saw_all = true;
            continue;
        }
        push_unique(out.names, std::move(t));
    }
    if (saw_all) {
        if (exclude) {
            diagnostics.push_back(std::string(var) + "=^all excludes everything");
            out.mode = FilterMode::Include;
            out.nothing = true;
            out.names.clear();
        } else {
            if (!out.names.empty()) {
                diagnostics.push_back(std::string(var) + ": 'all' makes the other names redundant");
            }
            out.mode = FilterMode::All;
            out.names.clear();
        }
        return out;
    }
    if (out.names.empty()) {
        if (exclude) {
            diagnostics.push_back(std::string(var) + ": '^' with no names; using all");
        }
        out.mode = FilterMode::All;
        return out;
    }
    out.mode = exclude ? FilterMode::Exclude : FilterMode::Include;
    return out;
}

// `prefix` then the names, comma-separated. Built by appending into one string: GCC 12 at -O3
// reports a false -Wrestrict overlap inside `"^" + std::string` (operator+ inserting at 0).
std::string join(const std::vector<std::string> &v, std::string_view prefix = {}) {
    std::string out(prefix);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i != 0) {
            out += ',';
        }
        out += v[i];
    }
    return out;
}

std::string text_of(const Tokens &t) {
    if (t.nothing) {
        return "^all";
    }
    switch (t.mode) {
        case FilterMode::All:
            return "all";
        case FilterMode::Include:
            return join(t.names);
        case FilterMode::Exclude:
            return join(t.names, "^");
    }
    return "all";
}

}  // namespace

std::vector<std::string> expand_transport_alias(std::string_view name) {
    std::string n = lower(std::string(name));
    for (const Alias &a : kAliases) {
        if (a.name == n) {
            return split_commas(a.members);
        }
    }
    return {n};
}

bool is_known_transport_name(std::string_view name) {
    std::string n = lower(std::string(name));
    if (n == "all") {
        return true;
    }
    for (const Alias &a : kAliases) {
        if (a.name == n) {
            return true;
        }
    }
    return std::find(kKnownTransports.begin(), kKnownTransports.end(), n) != kKnownTransports.end();
}

bool TransportFilter::selects(std::string_view tl) const {
    std::string n = lower(std::string(tl));
    bool listed = std::find(names.begin(), names.end(), n) != names.end();
    switch (mode) {
        case FilterMode::All:
            return true;
        case FilterMode::Include:
            return listed;
        case FilterMode::Exclude:
            return !listed;
    }
    return true;
}

bool DeviceFilter::name_matches(std::string_view name, std::string_view dev) {
    if (name == dev) {
        return true;
    }
    // "mlx5_0" designates every port "mlx5_0:<n>".
    if (name.find(':') != std::string_view::npos || dev.size() <= name.size() + 1 ||
        dev.substr(0, name.size()) != name || dev[name.size()] != ':') {
        return false;
    }
    std::string_view port = dev.substr(name.size() + 1);
    return std::all_of(port.begin(), port.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

bool DeviceFilter::selects(std::string_view dev) const {
    bool listed = std::any_of(names.begin(), names.end(),
                              [&](const std::string &n) { return name_matches(n, dev); });
    switch (mode) {
        case FilterMode::All:
            return true;
        case FilterMode::Include:
            return listed;
        case FilterMode::Exclude:
            return !listed;
    }
    return true;
}

TransportFilter parse_transport_filter(const std::vector<std::string> &items,
                                       std::vector<std::string> &diagnostics) {
    Tokens t = tokenize(items, "UFI_TLS", true, diagnostics);
    TransportFilter f;
    f.mode = t.mode;
    f.text = text_of(t);
    f.tokens = t.names;
    for (const std::string &tok : t.names) {
        if (!is_known_transport_name(tok)) {
            diagnostics.push_back("UFI_TLS: unknown transport '" + tok + "'");
        }
        for (std::string &member : expand_transport_alias(tok)) {
            push_unique(f.names, std::move(member));
        }
    }
    return f;
}

DeviceFilter parse_device_filter(const std::vector<std::string> &items,
                                 std::vector<std::string> &diagnostics) {
    Tokens t = tokenize(items, "UFI_NET_DEVICES", false, diagnostics);
    DeviceFilter f;
    f.mode = t.mode;
    f.text = text_of(t);
    f.names = t.names;
    return f;
}

SelectionConfig parse_selection_config(const std::vector<std::string> &tls,
                                       const std::vector<std::string> &net_devices) {
    SelectionConfig cfg;
    cfg.tls = parse_transport_filter(tls, cfg.diagnostics);
    cfg.net_devices = parse_device_filter(net_devices, cfg.diagnostics);
    return cfg;
}

SelectionConfig parse_selection_config(std::string_view tls, std::string_view net_devices) {
    return parse_selection_config(std::vector<std::string>{std::string(tls)},
                                  std::vector<std::string>{std::string(net_devices)});
}

SelectionConfig selection_config_from_registry() {
    const ufi::config::Registry &reg = ufi::config::registry();
    return parse_selection_config(reg.get_list("UFI_TLS"), reg.get_list("UFI_NET_DEVICES"));
}

std::vector<std::string> connect_to_ep_from_registry() {
    std::vector<std::string> out;
    for (const std::string &item : ufi::config::registry().get_list("UFI_CONNECT_TO_EP")) {
        std::string name = lower(item);
        if (!is_known_transport_name(name)) {
            static std::once_flag warned;
            std::call_once(warned, [&] {
                UFI_LOG_WARN(ufi::log::Subsys::Core, "UFI_CONNECT_TO_EP: unknown transport '{}' ignored",
                             name);
            });
            continue;
        }
        for (std::string &member : expand_transport_alias(name)) push_unique(out, std::move(member));
    }
    return out;
}

}  // namespace ufi::transports
