#include "transports/status.h"

namespace ufi::transports {

std::string to_string(ucs_status_t status) {
    const char *s = ucs_status_string(status);
    return s != nullptr ? std::string(s) : "unknown status " + std::to_string(int(status));
}

const char *status_text(int status) noexcept {
    if (status > UCS_OK || status <= UCS_ERR_LAST) return nullptr;
    const char *s = ucs_status_string(static_cast<ucs_status_t>(status));
    return s != nullptr ? s : "Unknown error";
}

}  // namespace ufi::transports
