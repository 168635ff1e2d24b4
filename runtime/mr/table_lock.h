// The lock of the MR family's per-domain tables (keys, mapped raw keys). They are shared by
// every endpoint of the domain, so they need a lock whenever different threads may use the
// domain at once: ThreadingPolicy::tables (runtime/threading.h), every model but
// FI_THREAD_DOMAIN. Readers (the data path: key lookups) share it; registration and close
// take it exclusively.
#pragma once

#include "runtime/lock.h"

#include <rdma/fi_domain.h>

#include <atomic>

namespace ufi::runtime::mr {

// A spinning reader-writer lock (registration hits cost ~100 ns, and a pthread rwlock's
// lock/unlock pair was a fifth of that): state_ counts readers, -1 while a writer holds it.
// A waiting writer turns new readers away, so lookups cannot starve registrations.
class TableLock {
  public:
    explicit TableLock(bool needed) : needed_(needed) {}
    TableLock(const TableLock &) = delete;
    TableLock &operator=(const TableLock &) = delete;
    void lock() noexcept {
        if (!needed_) return;
        int free = 0;  // the common case, uncontended: one exchange
        if (state_.compare_exchange_strong(free, -1, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
            return;
        }
        writers_waiting_.fetch_add(1, std::memory_order_relaxed);
        for (unsigned spins = 0;;) {
            int free = 0;
            if (state_.compare_exchange_weak(free, -1, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
                break;
            }
            spin_wait(spins);
        }
        writers_waiting_.fetch_sub(1, std::memory_order_relaxed);
    }
    void unlock() noexcept {
        if (needed_) state_.store(0, std::memory_order_release);
    }
    void lock_shared() noexcept {
        if (!needed_) return;
        for (unsigned spins = 0;;) {
            int readers = state_.load(std::memory_order_relaxed);
            if (readers >= 0 && writers_waiting_.load(std::memory_order_relaxed) == 0 &&
                state_.compare_exchange_weak(readers, readers + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
                return;
            }
            spin_wait(spins);
        }
    }
    void unlock_shared() noexcept {
        if (needed_) state_.fetch_sub(1, std::memory_order_release);
    }

  private:
    std::atomic<int> state_{0};
    std::atomic<int> writers_waiting_{0};
    bool needed_;
};

}  // namespace ufi::runtime::mr
