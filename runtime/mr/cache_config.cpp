#include "runtime/mr/cache_config.h"

#include "runtime/config/config.h"

namespace ufi::runtime::mr {

CacheSettings read_cache_settings(const config::Registry &registry, bool thread_safe) {
    CacheSettings s;
    s.config.thread_safe = thread_safe;
    s.config.max_size = registry.get_size("FI_MR_CACHE_MAX_SIZE");
    const int64_t count = registry.get_int("FI_MR_CACHE_MAX_COUNT");
    s.config.max_count = count < 0 ? 0 : static_cast<std::size_t>(count);
    s.monitor = registry.get_string("FI_MR_CACHE_MONITOR");
    if (s.monitor == "disabled") {
        s.config.enabled = false;
        s.note = "FI_MR_CACHE_MONITOR=disabled: registration cache off";
    } else if (s.config.max_count == 0) {
        s.config.enabled = false;
        s.note = "FI_MR_CACHE_MAX_COUNT=0: registration cache off";
    } else if (!s.monitor.empty() && s.monitor != "ucm") {
        s.note = "FI_MR_CACHE_MONITOR=" + s.monitor + ": ufi monitors memory with UCX's ucm events";
    }
    return s;
}

}  // namespace ufi::runtime::mr
