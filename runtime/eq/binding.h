// What endpoints, AVs and domains need from an event queue, implemented by the EQ subsystem
// (runtime/eq/).
#pragma once

#include <rdma/fi_eq.h>

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::eq {

class Eq;

Eq *eq_of(fid_eq *eq) noexcept;
Eq *eq_of(fid_t fid) noexcept;

// A bound object: fi_close(eq) returns -FI_EBUSY while any is attached.
void attach(Eq *eq) noexcept;
void detach(Eq *eq) noexcept;

// Posts an event or an error entry from ufi itself: never refused for space (the EQ grows
// past its size for ufi's events; see eq.h), so 0, or -FI_ENOMEM / -FI_EINVAL.
int post(Eq *eq, uint32_t event, const void *buf, size_t len, uint64_t flags) noexcept;
int post_error(Eq *eq, const fi_eq_err_entry &err) noexcept;

}  // namespace ufi::runtime::eq
