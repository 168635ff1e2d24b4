// The registration cache's settings, from libfabric's variables (FI_MR_CACHE_MAX_SIZE,
// FI_MR_CACHE_MAX_COUNT, FI_MR_CACHE_MONITOR; see docs/configuration.md). ufi always watches
// memory through UCX's ucm events: every FI_MR_CACHE_MONITOR value but `disabled` means ucm.
#pragma once

#include "transports/memory/reg_cache.h"

#include <string>

namespace ufi::config {
class Registry;
}

namespace ufi::runtime::mr {

struct CacheSettings {
    transports::CacheConfig config;
    std::string monitor;  // as set (empty: unset)
    std::string note;     // why the cache is off, or how the monitor value was read
};

CacheSettings read_cache_settings(const config::Registry &registry, bool thread_safe);

}  // namespace ufi::runtime::mr
