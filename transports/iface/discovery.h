// Discovery: what UCT offers on this host. Every component, memory domain and
// transport resource, each resource opened once on a throw-away worker and
// queried (uct_iface_query) for its capabilities, limits and performance
// estimates, then closed. The result is plain data (resource.h); fi_getinfo,
// selection and ufi_info -d all read it.
#pragma once

#include "transports/resource.h"

#include <string_view>

namespace ufi::transports {

// The process-wide discovery, run on first use (thread-safe) and cached for
// the life of the process. The reference stays valid forever.
const Discovery &discovery();

// Runs discovery again, uncached (tests, or ufi_info after changing UCX_*).
Discovery discover_now();

// Lookups into a Discovery. nullptr when absent.
const Resource *find_resource(const Discovery &d, std::string_view tl, std::string_view dev);
const MdInfo *find_md(const Discovery &d, std::string_view md);
const ComponentInfo *find_component(const Discovery &d, std::string_view name);
const NetInterface *find_interface(const Discovery &d, std::string_view name);

}  // namespace ufi::transports
