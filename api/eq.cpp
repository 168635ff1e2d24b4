// PLACEHOLDER (issue 3 in progress): event queues.
#include "api/objects.h"
#include <rdma/fi_errno.h>
namespace ufi::api {
int eq_open(fid_fabric *, fi_eq_attr *, fid_eq **, void *) { return -FI_ENOSYS; }
}
