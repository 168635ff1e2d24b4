// What gets logged: the level and filters read from the config registry, and the mask that
// enabled() tests.
#include <string>
#include <vector>

#include "base/config/config.h"
#include "base/config/parse.h"
#include "base/log/state.h"

namespace ufi::log {

namespace detail {

constinit std::atomic<uint64_t> enabled_mask{~uint64_t{0}};

bool enabled_after_init(Level level, Subsys subsys) noexcept {
    init();
    // init() published a mask without the uninitialised bit, so this does not recurse.
    return enabled(level, subsys);
}

}  // namespace detail

namespace {

std::atomic<bool> is_ready{false};
std::once_flag init_once;

// config::registry() initialises the log (printing the registry's diagnostics at once), through
// the hook the configuration layer offers: it includes nothing of the log.
[[maybe_unused]] const bool registry_hook_installed = [] {
    config::detail::set_first_use_hook(&init);
    return true;
}();

// Recomputes the mask from the settings; the caller holds the state's mutex.
void publish_mask(const detail::State &st) noexcept {
    uint64_t mask = 0;
    if (st.prov_filter.allows(provider_name)) {
        for (int s = 0; s < subsys_count; ++s) {
            if (!((st.subsys_allowed >> s) & 1u)) continue;
            for (int l = 1; l <= static_cast<int>(st.level); ++l) {
                mask |= uint64_t{1} << (s * level_count + l);
            }
        }
    }
    detail::enabled_mask.store(mask, std::memory_order_relaxed);
}

// UFI_LOG_LEVEL, else FI_LOG_LEVEL (its names are ufi level names), else warn. The
// registry has already rejected values outside each variable's choices.
Level select_level(const config::Registry &registry) noexcept {
    if (auto level = parse_level(registry.get_string("UFI_LOG_LEVEL"))) return *level;
    if (auto level = parse_level(registry.get_string("FI_LOG_LEVEL"))) return *level;
    return Level::Warn;
}

// Applies `registry`'s settings; returns the warnings to print. Must not log: init() runs it
// inside its call_once.
std::vector<std::string> apply(const config::Registry &registry) noexcept {
    std::vector<std::string> warnings;
    try {
        const Level level = select_level(registry);
        config::NameFilter prov_filter = config::parse_filter(registry.get_string("FI_LOG_PROV"));
        const config::NameFilter subsys_filter =
            config::parse_filter(registry.get_string("FI_LOG_SUBSYS"));
        uint32_t subsys_allowed = 0;
        for (int s = 0; s < subsys_count; ++s) {
            if (subsys_filter.allows(subsys_name(static_cast<Subsys>(s)))) {
                subsys_allowed |= 1u << s;
            }
        }
        for (const std::string &name : subsys_filter.names) {
            bool known = false;
            for (int s = 0; s < subsys_count; ++s) {
                known = known || config::iequals(name, subsys_name(static_cast<Subsys>(s)));
            }
            if (!known) {
                warnings.push_back("FI_LOG_SUBSYS: unknown subsystem '" + name +
                                   "' (known: core, fabric, domain, ep_ctrl, ep_data, av, cq, "
                                   "eq, mr, cntr)");
            }
        }
        auto logger =
            detail::make_logger(detail::make_sink(registry.get_string("UFI_LOG_FILE"), warnings));

        detail::State &st = detail::state();
        std::lock_guard lock(st.mutex);
        st.logger = std::move(logger);
        st.level = level;
        st.subsys_allowed = subsys_allowed;
        st.prov_filter = std::move(prov_filter);
        publish_mask(st);
    } catch (...) {
        // Out of memory (or spdlog failing): keep what was there, but stop the slow path.
        detail::State &st = detail::state();
        std::lock_guard lock(st.mutex);
        publish_mask(st);
    }
    is_ready.store(true, std::memory_order_release);
    return warnings;
}

// Configuration warnings pass the level and FI_LOG_PROV but not FI_LOG_SUBSYS: a mistyped
// subsystem filter must not hide the warning about it.
void print_warnings(const std::vector<std::string> &warnings) noexcept {
    if (warnings.empty()) return;
    {
        detail::State &st = detail::state();
        std::lock_guard lock(st.mutex);
        if (st.level < Level::Warn || !st.prov_filter.allows(provider_name)) return;
    }
    for (const std::string &warning : warnings) {
        write(Level::Warn, Subsys::Core, provider_name, __func__, __LINE__, warning);
    }
}

}  // namespace

void init() noexcept {
    if (is_ready.load(std::memory_order_acquire)) return;
    bool ran = false;
    std::vector<std::string> warnings;
    std::call_once(init_once, [&] {
        ran = true;
        warnings = apply(config::detail::raw_registry());
    });
    if (!ran) return;
    print_warnings(config::detail::raw_registry().diagnostics());
    print_warnings(warnings);
}

bool ready() noexcept {
    return is_ready.load(std::memory_order_acquire);
}

void configure(const config::Registry &registry) noexcept {
    print_warnings(apply(registry));
}

void set_level(Level level) noexcept {
    init();
    detail::State &st = detail::state();
    std::lock_guard lock(st.mutex);
    st.level = level;
    publish_mask(st);
}

Level level() noexcept {
    init();
    detail::State &st = detail::state();
    std::lock_guard lock(st.mutex);
    return st.level;
}

bool enabled(Level level, Subsys subsys, std::string_view prov_name) noexcept {
    init();
    if (config::iequals(prov_name, provider_name)) return enabled(level, subsys);  // no lock
    const auto l = static_cast<int>(level);
    const auto s = static_cast<unsigned>(subsys);
    if (l <= 0 || l >= level_count || s >= subsys_count) return false;
    detail::State &st = detail::state();
    std::lock_guard lock(st.mutex);
    return l <= static_cast<int>(st.level) && ((st.subsys_allowed >> s) & 1u) &&
           st.prov_filter.allows(prov_name);
}

}  // namespace ufi::log
