// Readable text for a completion's or event's prov_errno (fi_cq_strerror, fi_eq_strerror).
// ufi's provider errors are UCS status codes (negative); positive values are fi errno codes.
#pragma once

#include <cstddef>

namespace ufi::runtime::errtext {

// With buf and len > 0: writes the text there (truncated, NUL-terminated) and returns buf.
// Otherwise returns a static string. `fi_text` gives the text of a positive fi errno (the api
// layer passes fi_strerror).
const char *describe(int prov_errno, const char *(*fi_text)(int), char *buf, size_t len) noexcept;

}  // namespace ufi::runtime::errtext
