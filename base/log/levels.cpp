// Names of levels and subsystems, as libfabric prints them.
#include "base/config/parse.h"
#include "base/log/log.h"

namespace ufi::log {

namespace {

constexpr std::string_view level_names[level_count] = {"off",  "error", "warn",
                                                       "info", "debug", "trace"};
constexpr std::string_view subsys_names[subsys_count] = {
    "core", "fabric", "domain", "ep_ctrl", "ep_data", "av", "cq", "eq", "mr", "cntr"};

}  // namespace

std::string_view level_name(Level level) noexcept {
    const auto index = static_cast<unsigned>(level);
    return index < level_count ? level_names[index] : "unknown";
}

std::string_view subsys_name(Subsys subsys) noexcept {
    const auto index = static_cast<unsigned>(subsys);
    return index < subsys_count ? subsys_names[index] : "unknown";
}

std::optional<Level> parse_level(std::string_view name) noexcept {
    name = config::trim(name);
    for (int i = 0; i < level_count; ++i) {
        if (config::iequals(name, level_names[i])) return static_cast<Level>(i);
    }
    return std::nullopt;
}

Level from_fi_log_level(int fi_level) noexcept {
    switch (fi_level) {
        case 1:
            return Level::Trace;  // FI_LOG_TRACE
        case 2:
            return Level::Info;  // FI_LOG_INFO
        case 3:
            return Level::Debug;  // FI_LOG_DEBUG
        default:
            return Level::Warn;  // FI_LOG_WARN, and anything unknown
    }
}

}  // namespace ufi::log
