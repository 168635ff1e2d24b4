// What MRs need from an endpoint (FI_MR_ENDPOINT binding), implemented by the endpoint
// subsystem (runtime/ep/).
#pragma once

#include <rdma/fi_endpoint.h>

namespace ufi::runtime::ep {

class Endpoint;

Endpoint *endpoint_of(fid_t fid) noexcept;
bool is_enabled(const Endpoint *ep) noexcept;

// An MR bound to the endpoint: fi_close(ep) returns -FI_EBUSY while any is bound.
void attach_mr(Endpoint *ep) noexcept;
void detach_mr(Endpoint *ep) noexcept;

}  // namespace ufi::runtime::ep
