// Status codes as the layers above transports/ meet them: base::Status (UCS's values, ufi's
// type), its text, and the one table from a Status to negative fi errno values (DESIGN: "one
// table from UCS status codes to -FI_E*"), used wherever a transport call's status becomes an
// fi return code. Free of UCX's headers, as every header runtime/ reaches is
// (scripts/check-layers.sh); transports' own files convert UCX's ucs_status_t with
// transports/ucs_status.h.
#pragma once

#include "base/status.h"
#include "transports/failure_cause.h"

#include <string>

namespace ufi::transports {

using Status = base::Status;
inline constexpr Status kOk = Status::kOk;
inline constexpr Status kInProgress = Status::kInProgress;
inline constexpr Status kNoResource = Status::kNoResource;

// The readable name of a status ("Success", "Input/output error", ...).
std::string to_string(Status status);

// The same for a status kept as a plain int (a CQ error entry's prov_errno, say); NULL for a
// value that is no status (below UCS's last error or above kInProgress): a Status is one byte,
// so passing such a value on would name whatever status its low byte happens to be.
const char *status_text(int status) noexcept;

// kOk -> 0; every error to the closest -FI_E* (kNoResource -> -FI_EAGAIN: retry later);
// anything unknown -> -FI_EOTHER.
int fi_errno_of(Status status) noexcept;

// A failed peer's error, by the cause found for it (failure_cause.h): reset -FI_ECONNRESET,
// refused -FI_ECONNREFUSED, timed out -FI_ETIMEDOUT, unreachable -FI_EHOSTUNREACH; else
// fi_errno_of(status). The log line and the completions use this one value, so that they
// agree (docs/completions.md).
int fi_errno_of(FailureCause cause, Status status) noexcept;

}  // namespace ufi::transports
