#include "runtime/wait/trywait.h"

#include "base/log/log.h"

#include <rdma/fi_errno.h>

#include <atomic>

namespace ufi::runtime::wait {

namespace {

constexpr size_t kClasses = 64;  // FI_CLASS_* values are small

// Constant-initialised, so registrations during static initialisation find it ready.
std::atomic<TrywaitCheck> g_checks[kClasses] = {};

}  // namespace

void register_trywait(size_t fclass, TrywaitCheck check) noexcept {
    if (fclass < kClasses) g_checks[fclass].store(check, std::memory_order_release);
}

int not_ufi_object(fid_t fid) noexcept {
    UFI_LOG_WARN(log::Subsys::Core, "fi_trywait: {} (class {}) is not one of ufi's objects",
                 static_cast<const void *>(fid), fid->fclass);
    return -FI_EINVAL;
}

int trywait(fid **fids, int count) noexcept {
    if (count < 0 || (count > 0 && fids == nullptr)) {
        UFI_LOG_WARN(log::Subsys::Core, "fi_trywait: fids is NULL or count {} is negative", count);
        return -FI_EINVAL;
    }
    for (int i = 0; i < count; ++i) {
        fid *f = fids[i];
        const TrywaitCheck check =
            f != nullptr && f->fclass < kClasses ? g_checks[f->fclass].load(std::memory_order_acquire)
                                                 : nullptr;
        if (check == nullptr) {
            UFI_LOG_WARN(log::Subsys::Core, "fi_trywait: fids[{}] is not a ufi CQ, EQ or counter", i);
            return -FI_EINVAL;
        }
        const int rc = check(f);
        if (rc != 0) return rc;
    }
    return 0;
}

}  // namespace ufi::runtime::wait
