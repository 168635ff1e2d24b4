// The EQ side of the bindings (runtime/eq/binding.h): what AVs, MRs, domains and endpoints
// use to deliver events.
#include "runtime/eq/binding.h"

#include "runtime/eq/eq.h"
#include "runtime/fid_cast.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::runtime::eq {

Eq *eq_of(fid_eq *eq) noexcept {
    return eq_of(eq == nullptr ? nullptr : &eq->fid);
}

Eq *eq_of(fid_t fid) noexcept {
    return object_of<Eq>(fid, FI_CLASS_EQ);  // class and ufi's ops table
}

void attach(Eq *eq) noexcept {
    if (eq != nullptr) eq->attach();
}

void detach(Eq *eq) noexcept {
    if (eq != nullptr) eq->detach();
}

int post(Eq *eq, uint32_t event, const void *buf, size_t len, uint64_t flags) noexcept {
    if (eq == nullptr || (buf == nullptr && len > 0)) {
        UFI_LOG_WARN(log::Subsys::Eq, "eq post: {} is NULL", eq == nullptr ? "eq" : "buf");
        return -FI_EINVAL;
    }
    (void)flags;  // no flag changes how an internal event is queued
    return eq->post(event, buf, len, Eq::Origin::Provider);
}

int post_error(Eq *eq, const fi_eq_err_entry &err) noexcept {
    if (eq == nullptr) {
        UFI_LOG_WARN(log::Subsys::Eq, "eq post_error: eq is NULL");
        return -FI_EINVAL;
    }
    return eq->post_error(err, Eq::Origin::Provider);
}

}  // namespace ufi::runtime::eq
