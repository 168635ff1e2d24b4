// ufi's log: spdlog behind a small facade, with libfabric's line format, levels and filters
// (FI_LOG_LEVEL, FI_LOG_PROV, FI_LOG_SUBSYS) plus UFI_LOG_LEVEL and UFI_LOG_FILE. On hot
// paths a disabled message costs one relaxed atomic load: nothing is formatted or evaluated.
//
//   UFI_LOG_WARN(ufi::log::Subsys::Cq, "overrun: {} entries lost", lost);
//
// Level in effect: UFI_LOG_LEVEL (off|error|warn|info|debug|trace) if set and valid, else
// FI_LOG_LEVEL, else warn (libfabric itself prints nothing when FI_LOG_LEVEL is unset; ufi
// prints warnings). FI_LOG_LEVEL's names map to the ufi level of the same name: warn, info,
// debug, trace. Unlike libfabric, whose order is warn < trace < info < debug, ufi's trace is
// the most verbose level (function and operation tracing), so FI_LOG_LEVEL=trace shows
// everything, as users reaching for "trace" expect. Messages that libfabric's fi_log()
// receives map the same way (from_fi_log_level()).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace ufi::config {
class Registry;
}

namespace ufi::log {

enum class Level : int { Off, Error, Warn, Info, Debug, Trace };
inline constexpr int level_count = 6;

// libfabric's enum fi_log_subsys, same numbering.
enum class Subsys : int { Core, Fabric, Domain, EpCtrl, EpData, Av, Cq, Eq, Mr, Cntr };
inline constexpr int subsys_count = 10;

// "off", "error", "warn", "info", "debug", "trace"; "unknown" out of range.
std::string_view level_name(Level level) noexcept;
// "core", "fabric", "domain", "ep_ctrl", "ep_data", "av", "cq", "eq", "mr", "cntr";
// "unknown" out of range.
std::string_view subsys_name(Subsys subsys) noexcept;
// A ufi level name, any case.
std::optional<Level> parse_level(std::string_view name) noexcept;
// libfabric's enum fi_log_level (FI_LOG_WARN 0, FI_LOG_TRACE 1, FI_LOG_INFO 2, FI_LOG_DEBUG 3)
// to the ufi level of the same name; anything else is Warn.
Level from_fi_log_level(int fi_level) noexcept;

namespace detail {
// Bit subsys * level_count + level is set when that level is enabled for that subsystem
// (for provider "ufi"). All ones until init(): bit 0 (level Off) is never set after it.
extern std::atomic<uint64_t> enabled_mask;
inline constexpr uint64_t uninitialised_bit = 1;

// init(), then enabled() again.
bool enabled_after_init(Level level, Subsys subsys) noexcept;

void vemit(Level level, Subsys subsys, const char *func, int line, fmt::string_view format,
           fmt::format_args args) noexcept;

template <typename... Args>
void emit(Level level, Subsys subsys, const char *func, int line,
          fmt::format_string<Args...> format, Args &&...args) noexcept {
    vemit(level, subsys, func, line, format, fmt::make_format_args(args...));
}
}  // namespace detail

// Would a message from ufi at `level` about `subsys` be printed? Inline: a disabled message
// costs one relaxed load and a bit test. The first enabled-looking answer initialises the log.
inline bool enabled(Level level, Subsys subsys) noexcept {
    const auto l = static_cast<unsigned>(level);
    const auto s = static_cast<unsigned>(subsys);
    if (l == 0 || l >= level_count || s >= subsys_count) return false;
    const uint64_t mask = detail::enabled_mask.load(std::memory_order_relaxed);
    if (!((mask >> (s * level_count + l)) & 1u)) return false;
    if (mask & detail::uninitialised_bit) [[unlikely]] {
        return detail::enabled_after_init(level, subsys);
    }
    return true;
}

// The same for a message from another provider (libfabric's fi_log_enabled): FI_LOG_PROV
// applies to `prov_name`. Initialises the log if needed.
bool enabled(Level level, Subsys subsys, std::string_view prov_name) noexcept;

// Reads the settings from config::registry() once; idempotent and thread-safe. Called by
// the first message, by set_level() and by config::registry(). Then prints the registry's
// diagnostics as WARN lines.
void init() noexcept;
// init() has completed (or configure() was called).
bool ready() noexcept;

// (Re)applies the settings of `registry` (level, filters, output), as init() does from the
// process-wide registry; for tests and tools. Its warnings (a log file that cannot be opened,
// an unknown subsystem name) are printed; the registry's diagnostics are not.
void configure(const config::Registry &registry) noexcept;

// Overrides the level in effect (filters stay).
void set_level(Level level) noexcept;
Level level() noexcept;

// Prints one line, unconditionally (callers check enabled() first), for the macros and for
// libfabric's fi_log(). Format, as libfabric 1.x with an empty log prefix:
//   libfabric:<pid>:<unix seconds>::<prov>:<subsys>:<func>():<line><<level>> <message>
// One trailing newline of `message` is dropped (fi_log callers end theirs with "\n").
void write(Level level, Subsys subsys, std::string_view prov_name, const char *func, int line,
           std::string_view message) noexcept;

// The provider name of ufi's own messages.
inline constexpr std::string_view provider_name = "ufi";

}  // namespace ufi::log

// Log a message formatted with fmt ("{}" placeholders, checked at compile time). The
// arguments are evaluated only when the level is enabled.
#define UFI_LOG(level_, subsys_, ...)                                                   \
    do {                                                                                \
        if (::ufi::log::enabled(level_, subsys_)) {                                     \
            ::ufi::log::detail::emit(level_, subsys_, __func__, __LINE__, __VA_ARGS__); \
        }                                                                               \
    } while (0)

// The same, printed whatever the level in effect when `asked_` is true: what a variable asks
// for by name (UFI_PROTO_INFO, as UCX_PROTO_INFO prints without a log level of its own).
#define UFI_LOG_IF_ASKED(asked_, level_, subsys_, ...)                                   \
    do {                                                                                 \
        if (::ufi::log::enabled(level_, subsys_) || (asked_)) {                          \
            ::ufi::log::detail::emit(level_, subsys_, __func__, __LINE__, __VA_ARGS__);  \
        }                                                                                \
    } while (0)

#define UFI_LOG_ERROR(subsys_, ...) UFI_LOG(::ufi::log::Level::Error, subsys_, __VA_ARGS__)
#define UFI_LOG_WARN(subsys_, ...) UFI_LOG(::ufi::log::Level::Warn, subsys_, __VA_ARGS__)
#define UFI_LOG_INFO(subsys_, ...) UFI_LOG(::ufi::log::Level::Info, subsys_, __VA_ARGS__)
#define UFI_LOG_DEBUG(subsys_, ...) UFI_LOG(::ufi::log::Level::Debug, subsys_, __VA_ARGS__)
#define UFI_LOG_TRACE(subsys_, ...) UFI_LOG(::ufi::log::Level::Trace, subsys_, __VA_ARGS__)
