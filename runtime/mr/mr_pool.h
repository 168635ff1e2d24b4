// Storage for memory regions, recycled: a closed MR's storage and its segment list's
// capacity are kept for the next registration, so that registering and closing a buffer again
// and again (an application's per-message fi_mr_reg, a cache hit) allocates nothing. Each
// thread keeps one block (the common reg/close pair on one thread takes no atomic at all;
// blocks are the same for every domain, freed at thread exit), and each pool one more in a
// slot exchanged atomically (a close on another thread than the registration); a burst of
// closes frees the rest.
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

    struct Block;  // one MR's storage (mr_pool.cpp)

  private:
    std::atomic<Block *> spare_{nullptr};
};

}  // namespace ufi::runtime::mr
