#include "transports/status.h"

#include "transports/ucs_status.h"

#include <rdma/fi_errno.h>

namespace ufi::transports {

std::string to_string(Status status) {
    const char *s = ucs_status_string(ucs_status_of(status));
    return s != nullptr ? std::string(s) : "unknown status " + std::to_string(int(status));
}

const char *status_text(int status) noexcept {
    if (status > UCS_OK || status <= UCS_ERR_LAST) return nullptr;
    const char *s = ucs_status_string(static_cast<ucs_status_t>(status));
    return s != nullptr ? s : "Unknown error";
}

int fi_errno_of(Status status) noexcept {
    switch (ucs_status_of(status)) {
        case UCS_OK: return 0;
        case UCS_INPROGRESS: return -FI_EINPROGRESS;
        case UCS_ERR_NO_MESSAGE: return -FI_ENOMSG;
        case UCS_ERR_NO_RESOURCE: return -FI_EAGAIN;
        case UCS_ERR_IO_ERROR: return -FI_EIO;
        case UCS_ERR_NO_MEMORY: return -FI_ENOMEM;
        case UCS_ERR_INVALID_PARAM: return -FI_EINVAL;
        case UCS_ERR_UNREACHABLE: return -FI_EHOSTUNREACH;
        case UCS_ERR_INVALID_ADDR: return -FI_EINVAL;
        case UCS_ERR_NOT_IMPLEMENTED: return -FI_ENOSYS;
        case UCS_ERR_MESSAGE_TRUNCATED: return -FI_ETRUNC;
        case UCS_ERR_NO_PROGRESS: return -FI_EAGAIN;
        case UCS_ERR_BUFFER_TOO_SMALL: return -FI_ETOOSMALL;
        case UCS_ERR_NO_ELEM: return -FI_ENOENT;
        case UCS_ERR_SOME_CONNECTS_FAILED: return -FI_EIO;
        case UCS_ERR_NO_DEVICE: return -FI_ENODEV;
        case UCS_ERR_BUSY: return -FI_EBUSY;
        case UCS_ERR_CANCELED: return -FI_ECANCELED;
        case UCS_ERR_SHMEM_SEGMENT: return -FI_EIO;
        case UCS_ERR_ALREADY_EXISTS: return -FI_EALREADY;
        case UCS_ERR_OUT_OF_RANGE: return -FI_EINVAL;
        case UCS_ERR_TIMED_OUT: return -FI_ETIMEDOUT;
        case UCS_ERR_EXCEEDS_LIMIT: return -FI_ENOSPC;
        case UCS_ERR_UNSUPPORTED: return -FI_ENOSYS;
        case UCS_ERR_REJECTED: return -FI_ECONNREFUSED;
        case UCS_ERR_NOT_CONNECTED: return -FI_ENOTCONN;
        case UCS_ERR_CONNECTION_RESET: return -FI_ECONNRESET;
        case UCS_ERR_ENDPOINT_TIMEOUT: return -FI_ETIMEDOUT;
        default: return -FI_EOTHER;
    }
}

int fi_errno_of(FailureCause cause, Status status) noexcept {
    switch (cause) {
        case FailureCause::kReset: return -FI_ECONNRESET;
        case FailureCause::kRefused: return -FI_ECONNREFUSED;
        case FailureCause::kTimedOut: return -FI_ETIMEDOUT;
        case FailureCause::kUnreachable: return -FI_EHOSTUNREACH;
        case FailureCause::kAsReported: break;
    }
    return fi_errno_of(status);
}

}  // namespace ufi::transports
