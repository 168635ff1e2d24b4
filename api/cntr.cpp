// PLACEHOLDER (issue 3 in progress): counters.
#include "api/objects.h"
#include <rdma/fi_errno.h>
namespace ufi::api {
int cntr_open(fid_domain *, fi_cntr_attr *, fid_cntr **, void *) { return -FI_ENOSYS; }
}
