// fi_open: libfabric's entry for named services outside the fabric hierarchy (e.g. its
// "mr_cache" monitor service). ufi offers none yet: -FI_ENOSYS, with a note in the log.
#include "api/export.h"
#include "base/log/log.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

UFI_EXPORT int fi_open(uint32_t version, const char *name, void *attr, size_t attr_len,
                       uint64_t flags, struct fid **fid, void *context) {
    (void)version;
    (void)attr;
    (void)attr_len;
    (void)flags;
    (void)context;
    if (name == nullptr || fid == nullptr) {
        UFI_LOG_WARN(ufi::log::Subsys::Core, "fi_open: {} is NULL", name == nullptr ? "name" : "fid");
        return -FI_EINVAL;
    }
    UFI_LOG_INFO(ufi::log::Subsys::Core, "fi_open(\"{}\"): ufi offers no such service", name);
    return -FI_ENOSYS;
}
