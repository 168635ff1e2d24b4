// PLACEHOLDER (issue 3 in progress): address vectors.
#include "api/objects.h"
#include <rdma/fi_errno.h>
namespace ufi::api {
int av_open(fid_domain *, fi_av_attr *, fid_av **, void *) { return -FI_ENOSYS; }
}
