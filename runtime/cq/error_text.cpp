#include "runtime/cq/error_text.h"

#include "transports/status.h"

#include <cstdio>
#include <cstring>

namespace ufi::runtime::errtext {

const char *describe(int prov_errno, const char *(*fi_text)(int), char *buf, size_t len) noexcept {
    const bool into_buf = buf != nullptr && len > 0;
    if (prov_errno < 0) {
        const char *ucs = transports::status_text(prov_errno);
        if (ucs == nullptr) {  // no UCS status: say so rather than name another one
            if (!into_buf) return "Unknown provider error";
            snprintf(buf, len, "Unknown provider error %d (no UCS status)", prov_errno);
            return buf;
        }
        if (!into_buf) return ucs;
        snprintf(buf, len, "%s (UCS status %d)", ucs, prov_errno);
        return buf;
    }
    const char *text =
        prov_errno == 0 ? "No provider error" : (fi_text != nullptr ? fi_text(prov_errno) : "");
    if (!into_buf) return text;
    snprintf(buf, len, "%s", text);
    return buf;
}

}  // namespace ufi::runtime::errtext
