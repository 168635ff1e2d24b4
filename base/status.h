// ufi's status codes inside proto and transports (DESIGN: one error convention per layer:
// -FI_E* at object boundaries, Status below them). One byte, like UCS's, and with UCS's
// values, so that transports/ turns a UCT call's result into a Status by a cast (checked
// there, transports/ucs_status.h) and the data path pays nothing for the translation; the
// layers above never see UCX's type. transports::fi_errno_of turns one into -FI_E*.
#pragma once

#include <cstdint>

namespace ufi::base {

enum class Status : int8_t {
    kOk = 0,
    kInProgress = 1,  // accepted; a completion follows (or: a handler kept the data)
    kNoMessage = -1,
    kNoResource = -2,  // retry after progress
    kIoError = -3,
    kNoMemory = -4,
    kInvalidParam = -5,
    kUnreachable = -6,
    kInvalidAddr = -7,
    kNotImplemented = -8,
    kMessageTruncated = -9,
    kNoProgress = -10,
    kBufferTooSmall = -11,
    kNoElem = -12,
    kSomeConnectsFailed = -13,
    kNoDevice = -14,
    kBusy = -15,
    kCanceled = -16,
    kShmemSegment = -17,
    kAlreadyExists = -18,
    kOutOfRange = -19,
    kTimedOut = -20,
    kExceedsLimit = -21,
    kUnsupported = -22,
    kRejected = -23,
    kNotConnected = -24,
    kConnectionReset = -25,
    kEndpointTimeout = -80,
    // (A transport may report other negative values: UCS's link and endpoint failure
    // ranges. Every negative value is an error; fi_errno_of maps the unknown ones to
    // -FI_EOTHER.)
};

constexpr bool is_error(Status s) noexcept { return static_cast<int8_t>(s) < 0; }

}  // namespace ufi::base
