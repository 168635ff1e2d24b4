// PLACEHOLDER (issue 3 in progress): endpoints.
#include "api/objects.h"
#include <rdma/fi_errno.h>
namespace ufi::api {
int endpoint(fid_domain *, fi_info *, fid_ep **, void *) { return -FI_ENOSYS; }
int endpoint2(fid_domain *, fi_info *, fid_ep **, uint64_t, void *) { return -FI_ENOSYS; }
}
