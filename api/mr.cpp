// PLACEHOLDER (issue 3 in progress): memory registration.
#include "api/objects.h"
#include <rdma/fi_errno.h>
namespace ufi::api {
namespace {
int reg(fid *, const void *, size_t, uint64_t, uint64_t, uint64_t, uint64_t, fid_mr **, void *) { return -FI_ENOSYS; }
int regv(fid *, const iovec *, size_t, uint64_t, uint64_t, uint64_t, uint64_t, fid_mr **, void *) { return -FI_ENOSYS; }
int regattr(fid *, const fi_mr_attr *, uint64_t, fid_mr **) { return -FI_ENOSYS; }
}
fi_ops_mr g_mr_ops = {sizeof(fi_ops_mr), reg, regv, regattr};
}
