// UCS status codes as the layers above meet them: the type, its text, and the one table from
// UCS status codes to negative fi errno values (DESIGN: "one table from UCS status codes to
// -FI_E*"), used wherever a UCT call's status becomes an fi return code. Only transports/
// includes UCX headers (scripts/check-layers.sh); runtime/ reaches ucs_status_t through here.
#pragma once

#include "transports/failure_cause.h"

#include <ucs/type/status.h>

#include <string>

namespace ufi::transports {

// The readable name of a UCS status ("Success", "Input/output error", ...).
std::string to_string(ucs_status_t status);

// The same for a status kept as a plain int (a CQ error entry's prov_errno, say); NULL for a
// value that is no UCS status (below UCS_ERR_LAST or above UCS_OK): ucs_status_t is one byte,
// so passing such a value on would name whatever status its low byte happens to be.
const char *status_text(int status) noexcept;

// UCS_OK -> 0; every error to the closest -FI_E* (UCS_ERR_NO_RESOURCE -> -FI_EAGAIN: retry
// later); anything unknown -> -FI_EOTHER.
int fi_errno_of(ucs_status_t status) noexcept;

// A failed peer's error, by the cause found for it (failure_cause.h): reset -FI_ECONNRESET,
// refused -FI_ECONNREFUSED, timed out -FI_ETIMEDOUT, unreachable -FI_EHOSTUNREACH; else
// fi_errno_of(status). The log line and the completions use this one value, so that they
// agree (docs/completions.md).
int fi_errno_of(FailureCause cause, ucs_status_t status) noexcept;

}  // namespace ufi::transports
