// A lock taken only when the application's threading model needs it: the domain's
// ThreadingPolicy (runtime/threading.h) says, per kind of object, whether it is needed.
// Data-path code uses this; control-path code (open, close, insert, register) may use a
// plain std::mutex, since setup calls are rare and their callers may be any thread.
#pragma once

#include "base/spin_lock.h"

#include <atomic>
#include <mutex>

namespace ufi::runtime {

using base::spin_wait;
using base::SpinLock;

// A SpinLock that the threading policy may switch off when the object is made: for objects
// whose hot calls are not chosen through an ops table (CQ rings, counters' sources, the
// endpoint's control calls).
class OptionalMutex {
public:
    explicit OptionalMutex(bool needed = true) : needed_(needed) {}
    OptionalMutex(const OptionalMutex &) = delete;
    OptionalMutex &operator=(const OptionalMutex &) = delete;
    void lock() noexcept {
        if (needed_) lock_.lock();
    }
    void unlock() noexcept {
        if (needed_) lock_.unlock();
    }
    bool needed() const { return needed_; }
    // The lock itself, for code that decided at setup that it is needed (the locked ops
    // tables): no test of needed() per call.
    SpinLock &spin() noexcept { return lock_; }

private:
    SpinLock lock_;
    bool needed_;
};

// Holds `m` for a scope when kLocked, nothing otherwise: the two instances of a templated
// ops table (locked and lock-free, chosen at setup) share one body.
template <bool kLocked>
class ScopedLockIf {
public:
    explicit ScopedLockIf(OptionalMutex &m) noexcept : m_(m) {
        if constexpr (kLocked) m_.spin().lock();
    }
    ~ScopedLockIf() {
        if constexpr (kLocked) m_.spin().unlock();
    }
    ScopedLockIf(const ScopedLockIf &) = delete;
    ScopedLockIf &operator=(const ScopedLockIf &) = delete;

private:
    OptionalMutex &m_;
};

}  // namespace ufi::runtime
