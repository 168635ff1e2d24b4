// Marks the C entry points that form libfabric's link-time ABI (see libfabric.map) and
// converts C++ failures into fi errno codes at the boundary: no exception crosses api/.
#pragma once

#include <rdma/fi_errno.h>

#include <new>

#define UFI_EXPORT extern "C" __attribute__((visibility("default")))

// Binds an implementation to an older symbol version (fi_getinfo@FABRIC_1.3, ...).
#define UFI_SYMVER(impl, versioned) __asm__(".symver " #impl "," #versioned)

namespace ufi::api {

// Runs fn(); a C++ exception becomes -FI_ENOMEM (bad_alloc) or -FI_EOTHER.
template <typename Fn>
int guarded(Fn &&fn) noexcept {
    try {
        return fn();
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

}  // namespace ufi::api
