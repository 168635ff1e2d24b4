// The counter side of the bindings (runtime/cntr/binding.h): endpoints and MRs bound to a
// counter, and the data path's accounting.
#include "runtime/cntr/binding.h"

#include "runtime/cntr/cntr.h"
#include "runtime/fid_cast.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::runtime::cntr {

Cntr *cntr_of(fid_cntr *cntr) noexcept {
    return cntr_of(cntr == nullptr ? nullptr : &cntr->fid);
}

Cntr *cntr_of(fid_t fid) noexcept {
    return object_of<Cntr>(fid, FI_CLASS_CNTR);  // class and ufi's ops table
}

int attach_source(Cntr *cntr, const ProgressSource &source) noexcept {
    if (cntr == nullptr || source.progress == nullptr) {
        UFI_LOG_WARN(log::Subsys::Cntr, "cntr attach_source: {} is NULL",
                     cntr == nullptr ? "cntr" : "source.progress");
        return -FI_EINVAL;
    }
    return cntr->attach_source(source);
}

void detach_source(Cntr *cntr, const ProgressSource &source) noexcept {
    if (cntr != nullptr) cntr->detach_source(source);
}

void attach_mr(Cntr *cntr) noexcept {
    if (cntr != nullptr) cntr->attach_mr();
}

void detach_mr(Cntr *cntr) noexcept {
    if (cntr != nullptr) cntr->detach_mr();
}

void on_completion(Cntr *cntr, uint64_t bytes) noexcept {
    cntr->on_completion(bytes);
}

void on_error(Cntr *cntr) noexcept {
    cntr->on_error();
}

}  // namespace ufi::runtime::cntr
