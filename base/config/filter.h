// Name filters as libfabric writes them (FI_PROVIDER, FI_LOG_PROV, FI_LOG_SUBSYS) and UCX
// writes UFI_TLS/UFI_NET_DEVICES: a comma list, a leading '^' turning it into an exclusion.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ufi::config {

struct NameFilter {
    bool exclude = false;            // the list started with '^'
    std::vector<std::string> names;  // without the '^'

    // No names: everything passes. Otherwise a listed name (any case) passes unless the
    // filter excludes, and an unlisted one passes only if it does. No aliases ("all") here.
    bool allows(std::string_view name) const noexcept;
};

// From parse_list() items: a '^' at the start of the first item marks an exclusion (a lone
// "^" item is dropped). May throw std::bad_alloc.
NameFilter make_filter(const std::vector<std::string> &items);

// Shorthand for make_filter(parse_list(text)).
NameFilter parse_filter(std::string_view text);

}  // namespace ufi::config
