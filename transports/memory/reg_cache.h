// The registration cache: UCT registrations of address ranges, kept after their last user
// releases them so that registering the same buffer again costs a tree lookup instead of a
// uct_md_mem_reg per memory domain. It serves the registrations ufi makes for buffers the
// application passes without a descriptor, and the ones underneath fi_mr_reg.
//
// Regions are page-aligned and never overlap: a miss that overlaps cached regions registers
// their union and retires them (in-use ones live on, outside the tree, until released).
// Unused regions sit on an LRU list and are evicted beyond max_count regions or max_size
// bytes; when in-use regions alone exceed a limit, a new registration is handed out uncached.
// Correctness: a MemoryMonitor (ucm events) reports every unmapped range, and acquire()
// drops the regions it touches before looking up, so a range that was unmapped and mapped
// again is registered anew, never served stale. Without a working monitor nothing is cached.
#pragma once

#include "transports/memory/memory_monitor.h"
#include "transports/memory/registration.h"
#include "base/spin_lock.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace ufi::transports {

struct CacheConfig {
    bool enabled = true;              // false: every acquire registers, every release deregisters
    std::size_t max_count = 1024;     // cached regions (unused ones are evicted beyond it)
    std::size_t max_size = SIZE_MAX;  // cached bytes
    bool thread_safe = true;          // false: the caller serializes every call
};

class RegCache;

// A cached (or uncached) registration, shared by reference count.
class Region {
  public:
    std::uintptr_t start() const { return start_; }
    std::uintptr_t end() const { return end_; }
    const Registration &registration() const { return reg_; }
    bool cached() const { return in_tree_; }

  private:
    friend class RegCache;
    std::uintptr_t start_ = 0;
    std::uintptr_t end_ = 0;
    Registration reg_;
    std::size_t refs_ = 0;
    bool in_tree_ = false;
    bool on_lru_ = false;
    // The LRU list's links (intrusive: a release puts a region on it without allocating).
    Region *lru_prev_ = nullptr;
    Region *lru_next_ = nullptr;
};

// Holds one reference to a Region; copying takes another.
class RegionRef {
  public:
    RegionRef() = default;
    ~RegionRef() { reset(); }
    RegionRef(const RegionRef &other);
    RegionRef &operator=(const RegionRef &other);
    RegionRef(RegionRef &&other) noexcept;
    RegionRef &operator=(RegionRef &&other) noexcept;

    explicit operator bool() const { return region_ != nullptr; }
    const Region *operator->() const { return region_; }
    const Region &operator*() const { return *region_; }
    const Region *get() const { return region_; }
    void reset() noexcept;

  private:
    friend class RegCache;
    RegionRef(RegCache *cache, Region *region) : cache_(cache), region_(region) {}
    RegCache *cache_ = nullptr;
    Region *region_ = nullptr;
};

class RegCache {
  public:
    struct Stats {
        std::uint64_t hits = 0;
        std::uint64_t misses = 0;         // registrations made (cached or not)
        std::uint64_t evictions = 0;      // LRU evictions
        std::uint64_t invalidations = 0;  // regions dropped for unmapped memory or refresh
        std::uint64_t uncached = 0;       // registrations handed out uncached
        std::size_t count = 0;            // regions in the cache now
        std::size_t bytes = 0;            // their bytes
    };

    // `mds` must outlive the cache; `reg_flags` go to uct_md_mem_reg. Starts the memory
    // monitor when `config.enabled` (if it cannot start, the cache does not cache).
    RegCache(const MemoryDomains &mds, CacheConfig config, unsigned reg_flags);
    // Every RegionRef must be gone.
    ~RegCache();
    RegCache(const RegCache &) = delete;
    RegCache &operator=(const RegCache &) = delete;

    // A registration covering [address, address + length) (length > 0); `out` lets go of what
    // it held first. On failure the UCT status, and `failed_md` names the MD that refused.
    // May throw std::bad_alloc.
    Status acquire(void *address, std::size_t length, RegionRef &out,
                         std::string *failed_md = nullptr);

    // A hit only: a reference to the cached region covering [address, address + length), or
    // false (nothing is registered then; not caching: always false). A hit also says the
    // range is mapped (the monitor drops a region when any of it is unmapped), which spares
    // FI_MR_ALLOCATED's check a system call; fi_mr_reg asks this first, and acquire() only on
    // a miss, so a hit takes the cache's lock once.
    bool acquire_cached(const void *address, std::size_t length, RegionRef &out);

    // Drops the cached regions that overlap the range (fi_mr_refresh; in-use regions stay
    // valid for their holders but are not handed out again).
    void invalidate(void *address, std::size_t length);

    // Deregisters every unused cached region.
    void flush();

    // Caching is on (enabled and the monitor runs).
    bool caching() const { return caching_; }
    Stats stats() const;
    MemoryMonitor &monitor() { return monitor_; }

  private:
    friend class RegionRef;
    void lock() const;
    void unlock() const;
    void add_ref(Region *r);
    void release(Region *r) noexcept;
    void process_events();                                      // locked
    void drop_range(std::uintptr_t start, std::uintptr_t end);  // locked
    void detach(Region *r);            // locked: out of tree and LRU; frees if unused
    void destroy(Region *r) noexcept;  // locked
    void enforce_limits();             // locked
    bool over_limits() const;          // locked
    bool take_hit(std::uintptr_t a, std::uintptr_t b, RegionRef &out);  // locked
    void lru_push_front(Region *r) noexcept;                             // locked
    void lru_remove(Region *r) noexcept;                                 // locked

    const MemoryDomains &mds_;
    CacheConfig config_;
    unsigned reg_flags_;
    bool caching_ = false;
    std::size_t page_size_;
    mutable base::SpinLock mutex_;  // short sections (a hit is a tree lookup); misses register under it
    MemoryMonitor monitor_;
    std::map<std::uintptr_t, Region *> tree_;  // by start; non-overlapping
    Region *lru_head_ = nullptr;  // unused cached regions, most recent first
    Region *lru_tail_ = nullptr;
    Stats stats_;
};

}  // namespace ufi::transports
