// PLACEHOLDER until the AV subsystem lands: nothing is a ufi AV yet.
#include "runtime/av/binding.h"
namespace ufi::runtime::av {
Av *av_of(fid_av *) noexcept { return nullptr; }
Av *av_of(fid_t) noexcept { return nullptr; }
void attach_endpoint(Av *) noexcept {}
void detach_endpoint(Av *) noexcept {}
std::vector<fi_addr_t> hold_auth_keys(Av *) { return {}; }
void release_auth_keys(Av *, const std::vector<fi_addr_t> &) noexcept {}
}  // namespace ufi::runtime::av
