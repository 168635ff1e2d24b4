// libfabric's logging entry points (fi_log, fi_log_enabled, fi_log_ready) over ufi's log
// facade, so that messages from anyone using them share ufi's format, level and filters.
#include "api/export.h"
#include "api/provider_abi.h"
#include "runtime/c_enum.h"
#include "base/log/log.h"

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <string>

namespace {

using ufi::log::Level;
using ufi::log::Subsys;

std::string_view prov_name(const fi_provider *prov) {
    return prov != nullptr && prov->name != nullptr ? std::string_view(prov->name) : std::string_view("core");
}

bool valid_subsys(int subsys) { return subsys >= 0 && subsys < FI_LOG_SUBSYS_MAX; }

uint64_t now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

}  // namespace

UFI_EXPORT int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level,
                              enum fi_log_subsys subsys) {
    // Read as int: C callers may pass any value (runtime/c_enum.h).
    const int sub = ufi::runtime::raw_enum(subsys);
    if (!valid_subsys(sub)) return 0;
    return ufi::log::enabled(ufi::log::from_fi_log_level(ufi::runtime::raw_enum(level)),
                             static_cast<Subsys>(sub), prov_name(prov))
               ? 1
               : 0;
}

// Rate-limited variant behind libfabric's FI_LOG_SPARSE: at most one message per second
// per call site (the caller keeps *showtime).
UFI_EXPORT int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level,
                            enum fi_log_subsys subsys, uint64_t *showtime) {
    if (!fi_log_enabled(prov, level, subsys)) return 0;
    if (showtime == nullptr) return 1;
    const uint64_t now = now_ms();
    if (now < *showtime) return 0;
    *showtime = now + 1000;
    return 1;
}

UFI_EXPORT void fi_log(const struct fi_provider *prov, enum fi_log_level level,
                       enum fi_log_subsys subsys, const char *func, int line, const char *fmt, ...) {
    const int sub = ufi::runtime::raw_enum(subsys);
    if (fmt == nullptr || !valid_subsys(sub)) return;
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    const int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    std::string big;
    std::string_view message;
    if (n < 0) {
        message = "(unformattable log message)";
    } else if (static_cast<size_t>(n) < sizeof(small)) {
        message = std::string_view(small, static_cast<size_t>(n));
    } else {
        try {
            big.resize(static_cast<size_t>(n) + 1);
            vsnprintf(big.data(), big.size(), fmt, ap2);
            big.resize(static_cast<size_t>(n));
            message = big;
        } catch (...) {
            message = std::string_view(small, sizeof(small) - 1);
        }
    }
    va_end(ap2);
    ufi::log::write(ufi::log::from_fi_log_level(ufi::runtime::raw_enum(level)), static_cast<Subsys>(sub),
                    prov_name(prov), func != nullptr ? func : "?", line, message);
}
