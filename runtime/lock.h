// A lock taken only when the application's threading model needs it: FI_THREAD_SAFE (and
// FI_PROGRESS_AUTO) take it, FI_THREAD_DOMAIN/COMPLETION/ENDPOINT (the application
// serializes) skip it.
// Data-path code uses this; control-path code (open, close, insert, register) may use a
// plain std::mutex, since setup calls are rare and their callers may be any thread.
#pragma once

#include <rdma/fi_domain.h>

#include <sched.h>

#include <atomic>
#include <mutex>

namespace ufi::runtime {

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

class OptionalMutex {
public:
    explicit OptionalMutex(bool needed = true) : needed_(needed) {}
    OptionalMutex(const OptionalMutex &) = delete;
    OptionalMutex &operator=(const OptionalMutex &) = delete;
    void lock() noexcept {
        if (needed_ && locked_.exchange(true, std::memory_order_acquire)) wait();
    }
    void unlock() noexcept {
        if (needed_) locked_.store(false, std::memory_order_release);
    }
    bool needed() const { return needed_; }

private:
    // A spinlock: these locks guard short data-path sections, where a pthread mutex's
    // lock/unlock pair costs about as much as an empty fi_cq_read itself. A waiter spins a
    // little, then yields (a holder may be descheduled, or in a long zero-copy call).
    void wait() noexcept {
        for (unsigned spins = 0;;) {
            while (locked_.load(std::memory_order_relaxed)) spin_wait(spins);
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
        }
    }

    std::atomic<bool> locked_{false};
    bool needed_;
};

inline bool threading_needs_locks(int threading) {
    return threading == FI_THREAD_SAFE || threading == FI_THREAD_UNSPEC;
}

}  // namespace ufi::runtime
