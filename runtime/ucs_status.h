// The one table from UCS status codes to negative fi errno values (DESIGN: "one table from
// UCS status codes to -FI_E*"), used wherever a UCT call's status becomes an fi return code.
#pragma once

#include "transports/failure_cause.h"
#include "transports/status.h"  // ucs_status_t (only transports/ includes UCX)

namespace ufi::runtime {

// UCS_OK -> 0; every error to the closest -FI_E* (UCS_ERR_NO_RESOURCE -> -FI_EAGAIN: retry
// later); anything unknown -> -FI_EOTHER.
int fi_errno_of(ucs_status_t status) noexcept;

// A failed peer's error, by the cause found for it (transports/failure_cause.h): reset
// -FI_ECONNRESET, refused -FI_ECONNREFUSED, timed out -FI_ETIMEDOUT, unreachable
// -FI_EHOSTUNREACH; else fi_errno_of(status). The log line and the completions use this one
// value, so that they agree (docs/completions.md).
int fi_errno_of(transports::FailureCause cause, ucs_status_t status) noexcept;

}  // namespace ufi::runtime
