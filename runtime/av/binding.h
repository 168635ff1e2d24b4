// What other subsystems (endpoints, MRs) need from an address vector, implemented by the AV
// subsystem (runtime/av/). Kept apart from the AV's own header so the binding rules are one
// small, stable interface.
#pragma once

#include <rdma/fi_domain.h>

#include <vector>

namespace ufi::runtime::av {

class Av;

// The ufi AV behind a handle, or nullptr (not an AV, or not ufi's).
Av *av_of(fid_av *av) noexcept;
Av *av_of(fid_t fid) noexcept;

// An endpoint bound to the AV: fi_close(av) returns -FI_EBUSY while any is attached.
void attach_endpoint(Av *av) noexcept;
void detach_endpoint(Av *av) noexcept;

// FI_AV_AUTH_KEY domains: the authorization-key handles present now. An endpoint (or MR)
// takes them when it is enabled and holds them until it closes; fi_av_remove(FI_AUTH_KEY)
// of a held key returns -FI_EBUSY. Later insertions do not reach already enabled objects.
std::vector<fi_addr_t> hold_auth_keys(Av *av);
void release_auth_keys(Av *av, const std::vector<fi_addr_t> &keys) noexcept;

}  // namespace ufi::runtime::av
