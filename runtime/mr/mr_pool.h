// Storage for memory regions, recycled: a closed MR's storage and its segment list's
// capacity are kept (one, per domain) for the next registration, so that registering and
// closing a buffer again and again (an application's per-message fi_mr_reg, a cache hit)
// allocates nothing. One slot exchanged atomically: thread-safe without a lock, and a burst
// of closes frees all but one.
#pragma once

#include <atomic>

namespace ufi::runtime::mr {

struct Mr;

class MrPool {
  public:
    MrPool() = default;
    ~MrPool();
    MrPool(const MrPool &) = delete;
    MrPool &operator=(const MrPool &) = delete;

    // A default-constructed Mr (its segments empty). May throw std::bad_alloc.
    Mr *make();
    // Destroys `mr` (made by make()) and keeps its storage.
    void recycle(Mr *mr) noexcept;

    // For a std::unique_ptr<Mr, MrPool::Recycler> while a registration is being built.
    struct Recycler {
        MrPool *pool;
        void operator()(Mr *mr) const noexcept { pool->recycle(mr); }
    };

  private:
    struct Block;
    std::atomic<Block *> spare_{nullptr};
};

}  // namespace ufi::runtime::mr
