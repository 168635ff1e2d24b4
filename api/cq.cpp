// PLACEHOLDER (issue 3 in progress): completion queues.
#include "api/objects.h"
#include <rdma/fi_errno.h>
namespace ufi::api {
int cq_open(fid_domain *, fi_cq_attr *, fid_cq **, void *) { return -FI_ENOSYS; }
}
