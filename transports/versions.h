// The versions of the libraries transports/ binds, for reports (ufi_info -v): the UCX that ufi
// was built against and the hwloc API it runs with. Only transports/ includes their headers.
#pragma once

#include <string>

namespace ufi::transports {

std::string ucx_version();    // "1.13.1"
std::string hwloc_version();  // "2.9.0"

}  // namespace ufi::transports
