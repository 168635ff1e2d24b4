// A spinlock for short critical sections on hot paths (the data path's locks, the
// registration cache), where a pthread mutex's lock/unlock pair costs as much as the work it
// guards. A waiter spins a little, then yields the core (a holder may be descheduled, or in a
// long call such as a zero-copy transfer or a registration miss).
#pragma once

#include <sched.h>

#include <atomic>

namespace ufi::base {

// One step of a spinning wait: a pause for the first spins, then yielding the core (the holder
// may be descheduled, or in a long call).
inline void spin_wait(unsigned &spins) noexcept {
    constexpr unsigned kSpinsBeforeYield = 256;
    if (++spins < kSpinsBeforeYield) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield" ::: "memory");
#endif
    } else {
        sched_yield();
    }
}

class SpinLock {
public:
    SpinLock() = default;
    SpinLock(const SpinLock &) = delete;
    SpinLock &operator=(const SpinLock &) = delete;
    void lock() noexcept {
        if (locked_.exchange(true, std::memory_order_acquire)) wait();
    }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }
    // Takes the lock if it is free now; never waits.
    bool try_lock() noexcept {
        return !locked_.load(std::memory_order_relaxed) &&
               !locked_.exchange(true, std::memory_order_acquire);
    }

private:
    void wait() noexcept {
        for (unsigned spins = 0;;) {
            while (locked_.load(std::memory_order_relaxed)) spin_wait(spins);
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
        }
    }

    std::atomic<bool> locked_{false};
};

}  // namespace ufi::base
