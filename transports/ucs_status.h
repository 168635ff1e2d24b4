// UCX's ucs_status_t meeting ufi's Status, inside transports/ only (the layers above never
// include UCX's headers): a UCT call's result becomes a Status by a cast, because base::Status
// keeps UCS's one-byte values (checked below, value by value).
#pragma once

#include "transports/status.h"

#include <ucs/type/status.h>

#include <string>

namespace ufi::transports {

static_assert(sizeof(Status) == sizeof(ucs_status_t));
static_assert(static_cast<int>(Status::kOk) == UCS_OK);
static_assert(static_cast<int>(Status::kInProgress) == UCS_INPROGRESS);
static_assert(static_cast<int>(Status::kNoMessage) == UCS_ERR_NO_MESSAGE);
static_assert(static_cast<int>(Status::kNoResource) == UCS_ERR_NO_RESOURCE);
static_assert(static_cast<int>(Status::kIoError) == UCS_ERR_IO_ERROR);
static_assert(static_cast<int>(Status::kNoMemory) == UCS_ERR_NO_MEMORY);
static_assert(static_cast<int>(Status::kInvalidParam) == UCS_ERR_INVALID_PARAM);
static_assert(static_cast<int>(Status::kUnreachable) == UCS_ERR_UNREACHABLE);
static_assert(static_cast<int>(Status::kInvalidAddr) == UCS_ERR_INVALID_ADDR);
static_assert(static_cast<int>(Status::kNotImplemented) == UCS_ERR_NOT_IMPLEMENTED);
static_assert(static_cast<int>(Status::kMessageTruncated) == UCS_ERR_MESSAGE_TRUNCATED);
static_assert(static_cast<int>(Status::kNoProgress) == UCS_ERR_NO_PROGRESS);
static_assert(static_cast<int>(Status::kBufferTooSmall) == UCS_ERR_BUFFER_TOO_SMALL);
static_assert(static_cast<int>(Status::kNoElem) == UCS_ERR_NO_ELEM);
static_assert(static_cast<int>(Status::kSomeConnectsFailed) == UCS_ERR_SOME_CONNECTS_FAILED);
static_assert(static_cast<int>(Status::kNoDevice) == UCS_ERR_NO_DEVICE);
static_assert(static_cast<int>(Status::kBusy) == UCS_ERR_BUSY);
static_assert(static_cast<int>(Status::kCanceled) == UCS_ERR_CANCELED);
static_assert(static_cast<int>(Status::kShmemSegment) == UCS_ERR_SHMEM_SEGMENT);
static_assert(static_cast<int>(Status::kAlreadyExists) == UCS_ERR_ALREADY_EXISTS);
static_assert(static_cast<int>(Status::kOutOfRange) == UCS_ERR_OUT_OF_RANGE);
static_assert(static_cast<int>(Status::kTimedOut) == UCS_ERR_TIMED_OUT);
static_assert(static_cast<int>(Status::kExceedsLimit) == UCS_ERR_EXCEEDS_LIMIT);
static_assert(static_cast<int>(Status::kUnsupported) == UCS_ERR_UNSUPPORTED);
static_assert(static_cast<int>(Status::kRejected) == UCS_ERR_REJECTED);
static_assert(static_cast<int>(Status::kNotConnected) == UCS_ERR_NOT_CONNECTED);
static_assert(static_cast<int>(Status::kConnectionReset) == UCS_ERR_CONNECTION_RESET);
static_assert(static_cast<int>(Status::kEndpointTimeout) == UCS_ERR_ENDPOINT_TIMEOUT);

constexpr Status status_of(ucs_status_t s) noexcept { return static_cast<Status>(s); }
constexpr ucs_status_t ucs_status_of(Status s) noexcept { return static_cast<ucs_status_t>(s); }

inline std::string to_string(ucs_status_t s) { return to_string(status_of(s)); }
inline int fi_errno_of(ucs_status_t s) noexcept { return fi_errno_of(status_of(s)); }
inline int fi_errno_of(FailureCause cause, ucs_status_t s) noexcept {
    return fi_errno_of(cause, status_of(s));
}

}  // namespace ufi::transports

namespace ufi::base {
// transports/ (and its tests) compare the Status of its own calls with UCS's codes as before.
// (Here, beside Status, so that argument-dependent lookup finds it from any namespace.)
constexpr bool operator==(Status a, ucs_status_t b) noexcept {
    return a == transports::status_of(b);
}
}  // namespace ufi::base
