// Watches the process's address space through UCX's ucm memory events (UCM_EVENT_VM_UNMAPPED:
// munmap, mremap, shmdt, brk shrink, madvise(DONTNEED); UCM_EVENT_MEM_TYPE_FREE: device
// memory freed) and queues the affected ranges for a registration cache, which drains the
// queue before every lookup. The callback runs inside the application's munmap, on any
// thread, possibly while the cache itself is deregistering: it only appends to a fixed-size
// queue under a small lock (no allocation, no call back into the cache); when the queue
// overflows it asks the cache to drop everything instead.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>

namespace ufi::transports {

struct AddressRange {
    std::uintptr_t start = 0;
    std::uintptr_t end = 0;  // exclusive
};

class MemoryMonitor {
  public:
    static constexpr std::size_t kQueueSize = 256;

    MemoryMonitor() = default;
    ~MemoryMonitor() { stop(); }
    MemoryMonitor(const MemoryMonitor &) = delete;
    MemoryMonitor &operator=(const MemoryMonitor &) = delete;

    // Installs the ucm handler. False when ucm cannot deliver the events (UCX_MEM_EVENTS=no,
    // hooks that fail their self-test): a cache must then not cache.
    bool start();
    // Removes the handler; after it returns the callback no longer runs.
    void stop() noexcept;
    bool running() const { return running_; }

    // Moves the queued ranges into `out` (up to its size) and returns how many; sets
    // `everything` when the queue overflowed since the last drain (every range is suspect).
    // Ranges left over (out too small) stay queued.
    std::size_t drain(std::span<AddressRange> out, bool &everything);

    // Queues a range as the event callback does (tests; and explicit invalidation).
    void notify(std::uintptr_t start, std::size_t length) noexcept;

    // Whether ranges (or an overflow) wait to be drained: one load, so that the cache's hit
    // path takes no lock when nothing was unmapped.
    bool pending() const noexcept { return pending_.load(std::memory_order_acquire); }

    // Events seen since start() (for statistics and tests).
    std::uint64_t events() const;

  private:
    mutable std::mutex mutex_;
    std::array<AddressRange, kQueueSize> queue_{};
    std::size_t count_ = 0;
    bool overflow_ = false;
    std::atomic<bool> pending_{false};  // count_ > 0 || overflow_, set under mutex_
    std::uint64_t events_ = 0;
    bool running_ = false;
};

}  // namespace ufi::transports
