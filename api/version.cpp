// fi_version: the API version these headers and this library implement.
#include "api/export.h"

#include <rdma/fabric.h>

UFI_EXPORT uint32_t fi_version(void) { return FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION); }
