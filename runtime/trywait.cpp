#include "runtime/trywait.h"

#include "runtime/cntr/cntr.h"
#include "runtime/cq/cq.h"
#include "runtime/eq/eq.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::runtime::wait {

int trywait(fid **fids, int count) noexcept {
    if (count < 0 || (count > 0 && fids == nullptr)) {
        UFI_LOG_WARN(log::Subsys::Core, "fi_trywait: fids is NULL or count {} is negative", count);
        return -FI_EINVAL;
    }
    for (int i = 0; i < count; ++i) {
        fid *f = fids[i];
        int rc;
        if (auto *c = cq::cq_of(f)) {
            rc = c->trywait();
        } else if (auto *e = eq::eq_of(f)) {
            rc = e->trywait();
        } else if (auto *n = cntr::cntr_of(f)) {
            rc = n->trywait();
        } else {
            UFI_LOG_WARN(log::Subsys::Core, "fi_trywait: fids[{}] is not a ufi CQ, EQ or counter",
                         i);
            return -FI_EINVAL;
        }
        if (rc != 0) return rc;
    }
    return 0;
}

}  // namespace ufi::runtime::wait
