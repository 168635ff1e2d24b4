// UCS status codes as the layers above meet them: the type and its text. Only transports/
// includes UCX headers (scripts/check-layers.sh); runtime/ reaches ucs_status_t through here.
#pragma once

#include <ucs/type/status.h>

#include <string>

namespace ufi::transports {

// The readable name of a UCS status ("Success", "Input/output error", ...).
std::string to_string(ucs_status_t status);

// The same for a status kept as a plain int (a CQ error entry's prov_errno, say); NULL for a
// value that is no UCS status (below UCS_ERR_LAST or above UCS_OK): ucs_status_t is one byte,
// so passing such a value on would name whatever status its low byte happens to be.
const char *status_text(int status) noexcept;

}  // namespace ufi::transports
