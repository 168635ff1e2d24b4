// mr_mode negotiation (shared/spec/fi_mr.3.md): the application lists the mr_mode bits it
// is prepared to honour; ufi keeps set only the bits it requires plus the bits it chooses
// to honour at no cost. ufi never requires FI_MR_LOCAL or FI_MR_RAW (Open MPI refuses
// FI_MR_RAW; MPICH never offers it nor FI_MR_LOCAL), so every request can be met.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ufi::runtime::info {

struct MrModeOutcome {
    bool ok = false;
    int mr_mode = 0;      // what fi_getinfo reports
    std::string reason;   // why not, when !ok
};

// requested: hints->domain_attr->mr_mode, nullopt when the caller gave no domain hints (any
// int the caller stores, -1 included, is a request).
// api_version: the caller's FI_VERSION; below 1.5 the legacy FI_MR_UNSPEC/BASIC/SCALABLE
// values are the only vocabulary. caps: the negotiated capabilities (FI_RMA_EVENT decides
// FI_MR_RMA_EVENT).
MrModeOutcome negotiate_mr_mode(std::optional<int> requested, uint32_t api_version, uint64_t caps);

// Bits ufi honours when the application offers them. Per-bit policy, see mr_mode.cpp.
uint64_t mr_mode_kept_if_offered(uint64_t caps);

}  // namespace ufi::runtime::info
