// UFI_TLS and UFI_NET_DEVICES, parsed: which transports and which network
// devices a domain may use. Same spirit as UCX_TLS / UCX_NET_DEVICES: "all", or a
// comma list, or a list starting with '^' meaning "everything but these".
//
// UFI_TLS names transports or aliases (expanded here):
//   shm, sm = posix,sysv,cma,self,knem,xpmem    mm = posix,sysv,xpmem
//   ib = rc_verbs,rc_mlx5,dc_mlx5,ud_verbs,ud_mlx5
//   rc = rc_verbs,rc_mlx5   ud = ud_verbs,ud_mlx5   dc = dc_mlx5
//   rc_v = rc_verbs  rc_x = rc_mlx5  ud_v = ud_verbs  ud_x = ud_mlx5  dc_x = dc_mlx5
//   cuda = cuda_copy,cuda_ipc,gdr_copy   rocm = rocm_copy,rocm_ipc   tcp = tcp
// Names are case-insensitive. Unknown names are kept (a UCT plugin may provide
// them) and reported as diagnostics.
//
// UFI_NET_DEVICES names network devices: "mlx5_0:1" matches that port exactly,
// "mlx5_0" every port of mlx5_0, "eth0" the interface. It never filters
// shared-memory, self or accelerator resources.
//
// Parsing is pure: it takes the raw lists (as base/config's get_list returns
// them, or plain comma strings) and returns diagnostics as data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ufi::transports {

enum class FilterMode {
    All,      // "all", unset or empty: everything passes
    Include,  // "a,b": only these pass ("^all": nothing passes)
    Exclude,  // "^a,b": everything but these passes
};

struct TransportFilter {
    FilterMode mode = FilterMode::All;
    std::vector<std::string> names;   // aliases expanded, lower case, unique, in order
    std::vector<std::string> tokens;  // the names as written (lower case, no '^')
    std::string text = "all";         // the setting written back: "all", "^tcp", "shm,tcp"

    bool selects(std::string_view tl) const;
};

struct DeviceFilter {
    FilterMode mode = FilterMode::All;
    std::vector<std::string> names;  // as written, unique, in order, no '^'
    std::string text = "all";

    bool selects(std::string_view dev) const;
    // Whether one written name designates `dev` ("mlx5_0" designates "mlx5_0:1").
    static bool name_matches(std::string_view name, std::string_view dev);
};

struct SelectionConfig {
    TransportFilter tls;
    DeviceFilter net_devices;
    // Readable warnings, e.g. "UFI_TLS: unknown transport 'foo'". Never fatal.
    std::vector<std::string> diagnostics;
};

// Items may be whole comma lists ("^tcp,ib") or single names; whitespace is
// trimmed and empty items dropped. A leading '^' on the first name makes the list
// an exclusion.
TransportFilter parse_transport_filter(const std::vector<std::string> &items,
                                       std::vector<std::string> &diagnostics);
DeviceFilter parse_device_filter(const std::vector<std::string> &items,
                                 std::vector<std::string> &diagnostics);
SelectionConfig parse_selection_config(const std::vector<std::string> &tls,
                                       const std::vector<std::string> &net_devices);
// Convenience for tests and tools: each argument one comma string.
SelectionConfig parse_selection_config(std::string_view tls, std::string_view net_devices);

// From UFI_TLS and UFI_NET_DEVICES in ufi::config::registry().
SelectionConfig selection_config_from_registry();

// UFI_CONNECT_TO_EP: transport names (aliases expanded, lower case, unique) whose lanes connect
// endpoint to endpoint; unknown names are warned about once and dropped.
std::vector<std::string> connect_to_ep_from_registry();

// The transports an alias stands for; {name} itself when it is no alias.
std::vector<std::string> expand_transport_alias(std::string_view name);
// True for UCX 1.13 transport names and the aliases above.
bool is_known_transport_name(std::string_view name);

}  // namespace ufi::transports
