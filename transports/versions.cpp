#include "transports/versions.h"

#include <hwloc.h>
#include <uct/api/version.h>

namespace ufi::transports {

std::string ucx_version() {
    return UCT_VERNO_STRING;
}

std::string hwloc_version() {
    const unsigned v = hwloc_get_api_version();
    return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
           std::to_string(v & 0xff);
}

}  // namespace ufi::transports
