// The process-wide registry: built once from the real environment, never destroyed (so that
// code running during exit can still read it).
#include <unistd.h>  // environ

#include "runtime/config/config.h"
#include "runtime/log/log.h"

namespace ufi::config {

namespace detail {

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
    log::init();  // idempotent; prints the diagnostics once
    return instance;
}

}  // namespace ufi::config
