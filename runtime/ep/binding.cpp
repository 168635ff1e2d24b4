// What MRs need from an endpoint (runtime/ep/binding.h), on top of runtime/ep/endpoint.h.
#include "runtime/ep/binding.h"

#include "runtime/ep/endpoint.h"
#include "runtime/fid_cast.h"

namespace ufi::runtime::ep {

Endpoint *endpoint_of(fid_t fid) noexcept {
    return object_of<Endpoint>(fid, FI_CLASS_EP);
}

bool is_enabled(const Endpoint *ep) noexcept {
    return ep != nullptr && ep->enabled();
}

void attach_mr(Endpoint *ep) noexcept {
    if (ep != nullptr) ep->attach_mr();
}

void detach_mr(Endpoint *ep) noexcept {
    if (ep != nullptr) ep->detach_mr();
}

}  // namespace ufi::runtime::ep
