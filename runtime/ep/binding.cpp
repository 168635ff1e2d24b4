// What MRs need from an endpoint (runtime/ep/binding.h), on top of runtime/ep/endpoint.h.
#include "runtime/ep/binding.h"

#include "runtime/ep/endpoint.h"
#include "runtime/ep/endpoint_face.h"

namespace ufi::runtime::ep {

Endpoint *endpoint_of(fid_t fid) noexcept {
    // (An alias's handle names its endpoint: an MR bound through it binds to the endpoint.)
    EndpointFace *face = face_of(fid);
    return face != nullptr ? face->endpoint : nullptr;
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
