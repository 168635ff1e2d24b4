// fi_getinfo's hint matching for one candidate entry: either the negotiated fi_info the
// application gets, or the first reason the hints exclude this entry (for the log line and
// `ufi_info -f`, so that users can tell why -FI_ENODATA came back).
#pragma once

#include <rdma/fabric.h>

#include <cstdint>
#include <string>

namespace ufi::runtime::info {

struct MatchResult {
    fi_info *info = nullptr;  // owned by the caller on success (free with free_info)
    std::string reason;       // set when info == nullptr
    int error = 0;            // -FI_ENOMEM on allocation failure, else 0
};

// `candidate`: an entry from make_provider_info. `hints` may be NULL (everything matches).
// The hints have already been widened to the full current layout (older callers' structs
// are copied into zeroed full-size ones by the api layer).
MatchResult match_hints(const fi_info &candidate, const fi_info *hints, uint32_t api_version);

}  // namespace ufi::runtime::info
