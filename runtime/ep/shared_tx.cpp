// runtime/ep/shared_tx.h.
#include "runtime/ep/shared_tx.h"

#include "base/log/log.h"
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"

#include <rdma/fi_errno.h>

#include <new>

namespace ufi::runtime::ep {

using log::Subsys;

int SharedTx::open(Domain *domain, const fi_tx_attr *attr, void *context, fi_ops *fid_ops,
                   fi_ops_ep *ep_ops, SharedTx **out) noexcept {
    auto *s = new (std::nothrow) SharedTx();
    if (s == nullptr) return -FI_ENOMEM;
    s->domain_ = domain;
    if (attr != nullptr) s->attr_ = *attr;
    s->fid.fclass = FI_CLASS_STX_CTX;
    s->fid.context = context;
    s->fid.ops = fid_ops;
    s->ops = ep_ops;
    domain->add_child();
    *out = s;
    return 0;
}

Shut SharedTx::shut() noexcept {
    if (const int n = bound_.load(std::memory_order_relaxed); n != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_close: {} endpoint(s) are bound to this shared transmit context; close "
                     "them first",
                     n);
        return Shut::kBusy;
    }
    domain_->remove_child();
    return Shut::kFree;
}

SharedTx *shared_tx_of(fid_t fid) noexcept {
    return object_of<SharedTx>(fid, FI_CLASS_STX_CTX);
}

}  // namespace ufi::runtime::ep
