// The process-wide registry: built once from the real environment, never destroyed (so that
// code running during exit can still read it).
#include <unistd.h>  // environ

#include <atomic>

#include "base/config/config.h"

namespace ufi::config {

namespace detail {

namespace {
constinit std::atomic<FirstUseHook> first_use_hook{nullptr};
}  // namespace

void set_first_use_hook(FirstUseHook hook) noexcept {
    first_use_hook.store(hook, std::memory_order_release);
}

Registry &raw_registry() noexcept {
    static Registry *const instance = []() noexcept {
        try {
            return new Registry(Registry::from_environ(environ));
        } catch (...) {
            // Out of memory: the defaults, or terminate if even that fails.
            return new Registry(Registry::from_environment({}));
        }
    }();
    return *instance;
}

}  // namespace detail

const Registry &registry() noexcept {
    return registry_mutable();
}

Registry &registry_mutable() noexcept {
    Registry &instance = detail::raw_registry();
    if (const auto hook = detail::first_use_hook.load(std::memory_order_acquire)) hook();
    return instance;
}

}  // namespace ufi::config
