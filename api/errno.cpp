// fi_strerror: errno values below FI_ERRNO_OFFSET read as the C library's text; ufi's
// own text for libfabric's codes above it.
#include "api/export.h"

#include <rdma/fi_errno.h>

#include <cstring>

namespace {

const char *const kOwnCodes[] = {
    /* FI_EOTHER */ "Unspecified error",
    /* FI_ETOOSMALL */ "Provided buffer is too small",
    /* FI_EOPBADSTATE */ "Operation not permitted in current state",
    /* FI_EAVAIL */ "Error available",
    /* FI_EBADFLAGS */ "Flags not supported",
    /* FI_ENOEQ */ "Missing or unavailable event queue",
    /* FI_EDOMAIN */ "Invalid resource domain",
    /* FI_ENOCQ */ "Missing or unavailable completion queue",
    /* FI_ECRC */ "CRC error",
    /* FI_ETRUNC */ "Truncation error",
    /* FI_ENOKEY */ "Required key not available",
    /* FI_ENOAV */ "Missing or unavailable address vector",
    /* FI_EOVERRUN */ "Queue has been overrun",
    /* FI_ENORX */ "Receiver not ready, no receive buffers available",
    /* FI_ENOMR */ "Memory registration limit exceeded",
    /* FI_EFIREWALLADDR */ "Host unreachable due to firewall",
};
static_assert(sizeof(kOwnCodes) / sizeof(kOwnCodes[0]) == FI_ERRNO_MAX - FI_ERRNO_OFFSET,
              "one text per libfabric error code");

}  // namespace

UFI_EXPORT const char *fi_strerror(int errnum) {
    // Callers pass either sign (fi_strerror(-ret) and fi_strerror(ret) both occur).
    const long code = errnum < 0 ? -static_cast<long>(errnum) : errnum;
    if (code < FI_ERRNO_OFFSET) return strerror(static_cast<int>(code));
    if (code < FI_ERRNO_MAX) return kOwnCodes[code - FI_ERRNO_OFFSET];
    return kOwnCodes[0];
}
