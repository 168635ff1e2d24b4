#include "runtime/mr/cache_config.h"

#include "base/config/config.h"

namespace ufi::runtime::mr {

CacheSettings read_cache_settings(const config::Registry &registry, bool thread_safe) {
    CacheSettings s;
    s.config.thread_safe = thread_safe;
    s.config.max_size = registry.get_size("FI_MR_CACHE_MAX_SIZE");
    // A size_t, as libfabric defines it: a negative value is refused by the registry (with a
    // warning naming it) and the default used, as for FI_MR_CACHE_MAX_SIZE.
    s.config.max_count = registry.get_size("FI_MR_CACHE_MAX_COUNT");
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
