// PLACEHOLDER until the EQ subsystem lands.
#include "runtime/eq/binding.h"
#include <rdma/fi_errno.h>
namespace ufi::runtime::eq {
Eq *eq_of(fid_eq *) noexcept { return nullptr; }
Eq *eq_of(fid_t) noexcept { return nullptr; }
void attach(Eq *) noexcept {}
void detach(Eq *) noexcept {}
int post(Eq *, uint32_t, const void *, size_t, uint64_t) noexcept { return -FI_ENOSYS; }
int post_error(Eq *, const fi_eq_err_entry &) noexcept { return -FI_ENOSYS; }
}  // namespace ufi::runtime::eq
