// Builds ufi's fi_info entries (before hint matching) from the domains fi_getinfo offers.
#pragma once

#include "runtime/info/domain_offer.h"

#include <rdma/fabric.h>

#include <cstdint>

namespace ufi::runtime::info {

inline constexpr const char kProviderName[] = "ufi";
inline constexpr const char kFabricName[] = "ufi";

// ufi's own version as reported in fabric_attr->prov_version.
uint32_t provider_version();

// The full-capability entry for one domain and endpoint type; NULL on allocation failure.
// api_version goes into fabric_attr->api_version. `msg_prefix`: the application offered
// FI_MSG_PREFIX (offers_msg_prefix), which the entry then requires (capabilities.h).
fi_info *make_provider_info(const DomainOffer &offer, fi_ep_type type, uint32_t api_version,
                            bool msg_prefix = false);

// Whether hints (or an application's fi_info) offer FI_MSG_PREFIX, in mode or in the transmit
// or receive attributes' modes.
bool offers_msg_prefix(const fi_info *hints) noexcept;

// The prefix bytes every message buffer of an endpoint of `info` starts with (0 without
// FI_MSG_PREFIX).
size_t msg_prefix_of(const fi_info &info) noexcept;

// The single entry FI_PROV_ATTR_ONLY returns: defaults plus fabric_attr prov_name/version.
fi_info *make_provider_attr_only(uint32_t api_version);

}  // namespace ufi::runtime::info
