// The CQ side of the endpoint bindings (runtime/cq/binding.h).
#include "runtime/cq/binding.h"

#include "runtime/cq/cq.h"
#include "runtime/fid_cast.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::runtime::cq {

Cq *cq_of(fid_cq *cq) noexcept {
    return cq_of(cq == nullptr ? nullptr : &cq->fid);
}

Cq *cq_of(fid_t fid) noexcept {
    return object_of<Cq>(fid, FI_CLASS_CQ);  // class and ufi's ops table
}

int attach_source(Cq *cq, const ProgressSource &source) noexcept {
    if (cq == nullptr || source.progress == nullptr) {
        UFI_LOG_WARN(log::Subsys::Cq, "cq attach_source: {} is NULL",
                     cq == nullptr ? "cq" : "source.progress");
        return -FI_EINVAL;
    }
    return cq->attach_source(source);
}

void detach_source(Cq *cq, const ProgressSource &source) noexcept {
    if (cq != nullptr) cq->detach_source(source);
}

}  // namespace ufi::runtime::cq
