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
// api_version goes into fabric_attr->api_version.
fi_info *make_provider_info(const DomainOffer &offer, fi_ep_type type, uint32_t api_version);

// The single entry FI_PROV_ATTR_ONLY returns: defaults plus fabric_attr prov_name/version.
fi_info *make_provider_attr_only(uint32_t api_version);

}  // namespace ufi::runtime::info
