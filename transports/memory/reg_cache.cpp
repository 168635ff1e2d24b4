#include "transports/memory/reg_cache.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <new>
#include <utility>

namespace ufi::transports {

// ---- RegionRef ---------------------------------------------------------------------------

RegionRef::RegionRef(const RegionRef &other) : cache_(other.cache_), region_(other.region_) {
    if (region_ != nullptr) cache_->add_ref(region_);
}

RegionRef &RegionRef::operator=(const RegionRef &other) {
    if (this != &other) {
        if (other.region_ != nullptr) other.cache_->add_ref(other.region_);
        reset();
        cache_ = other.cache_;
        region_ = other.region_;
    }
    return *this;
}

RegionRef::RegionRef(RegionRef &&other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)),
      region_(std::exchange(other.region_, nullptr)) {}

RegionRef &RegionRef::operator=(RegionRef &&other) noexcept {
    if (this != &other) {
        reset();
        cache_ = std::exchange(other.cache_, nullptr);
        region_ = std::exchange(other.region_, nullptr);
    }
    return *this;
}

void RegionRef::reset() noexcept {
    if (region_ != nullptr) cache_->release(std::exchange(region_, nullptr));
    cache_ = nullptr;
}

// ---- RegCache ----------------------------------------------------------------------------

RegCache::RegCache(const MemoryDomains &mds, CacheConfig config, unsigned reg_flags)
    : mds_(mds), config_(config), reg_flags_(reg_flags) {
    const long page = sysconf(_SC_PAGESIZE);
    page_size_ = page > 0 ? static_cast<std::size_t>(page) : 4096;
    if (config_.enabled && config_.max_count > 0) caching_ = monitor_.start();
}

RegCache::~RegCache() {
    monitor_.stop();  // no callback runs after this
    std::lock_guard<base::SpinLock> lock(mutex_);
    while (!tree_.empty()) detach(tree_.begin()->second);
    // Regions still referenced here would be a caller bug (every RegionRef must be gone).
}

void RegCache::lock() const {
    if (config_.thread_safe) mutex_.lock();
}

void RegCache::unlock() const {
    if (config_.thread_safe) mutex_.unlock();
}

bool RegCache::take_hit(std::uintptr_t a, std::uintptr_t b, RegionRef &out) {
    process_events();  // an unmap reported since drops its regions first
    auto it = tree_.upper_bound(a);
    if (it == tree_.begin()) return false;
    Region *r = std::prev(it)->second;
    if (r->start_ > a || r->end_ < b) return false;
    ++stats_.hits;
    if (r->refs_++ == 0 && r->on_lru_) lru_remove(r);
    out = RegionRef(this, r);
    return true;
}

bool RegCache::acquire_cached(const void *address, std::size_t length, RegionRef &out) {
    out.reset();  // before the lock: dropping a reference takes it
    if (!caching_) return false;
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    lock();
    const bool hit = take_hit(a, a + length, out);
    unlock();
    return hit;
}

Status RegCache::acquire(void *address, std::size_t length, RegionRef &out,
                               std::string *failed_md) {
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    const std::uintptr_t b = a + length;
    out.reset();  // before the lock: dropping a reference takes it
    lock();
    struct Unlock {
        const RegCache *c;
        ~Unlock() { c->unlock(); }
    } unlock_guard{this};

    if (caching_ && take_hit(a, b, out)) return kOk;

    // Miss: register a page-aligned range (cached) or exactly the range (uncached).
    std::uintptr_t start = a, end = b;
    if (caching_) {
        start = a & ~(page_size_ - 1);
        end = (b + page_size_ - 1) & ~(page_size_ - 1);
        if (end < b) end = b;  // the last page of the address space
        // Absorb the regions this one overlaps: their union becomes one region.
        auto it = tree_.upper_bound(start);
        if (it != tree_.begin()) --it;
        std::vector<Region *> absorbed;
        for (; it != tree_.end() && it->second->start_ < end; ++it) {
            Region *r = it->second;
            if (r->end_ <= start) continue;
            start = std::min(start, r->start_);
            end = std::max(end, r->end_);
            absorbed.push_back(r);
        }
        for (Region *r : absorbed) detach(r);
    }
    auto *r = new Region;
    const Status status = Registration::create(mds_, reinterpret_cast<void *>(start),
                                                     end - start, reg_flags_, r->reg_, failed_md);
    if (status != kOk) {
        delete r;
        return status;
    }
    r->start_ = start;
    r->end_ = end;
    r->refs_ = 1;
    ++stats_.misses;
    if (caching_) {
        try {
            tree_.emplace(start, r);
        } catch (...) {
            delete r;
            throw;
        }
        r->in_tree_ = true;
        stats_.count++;
        stats_.bytes += end - start;
        enforce_limits();
        if (over_limits()) {
            // Full of regions in use: hand this one out uncached.
            tree_.erase(start);
            r->in_tree_ = false;
            stats_.count--;
            stats_.bytes -= end - start;
            ++stats_.uncached;
        }
    } else {
        ++stats_.uncached;
    }
    out = RegionRef(this, r);
    return kOk;
}

void RegCache::add_ref(Region *r) {
    lock();
    if (r->refs_++ == 0 && r->on_lru_) lru_remove(r);
    unlock();
}

void RegCache::release(Region *r) noexcept {
    lock();
    if (--r->refs_ == 0) {
        if (r->in_tree_) {
            lru_push_front(r);
            enforce_limits();
        } else {
            destroy(r);
        }
    }
    unlock();
}

void RegCache::invalidate(void *address, std::size_t length) {
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    lock();
    drop_range(a, a + length < a ? UINTPTR_MAX : a + length);
    unlock();
}

void RegCache::flush() {
    lock();
    while (lru_tail_ != nullptr) {
        ++stats_.evictions;
        detach(lru_tail_);
    }
    unlock();
}

RegCache::Stats RegCache::stats() const {
    lock();
    Stats s = stats_;
    unlock();
    return s;
}

void RegCache::process_events() {
    if (!monitor_.pending()) return;  // the common case: nothing unmapped since last time
    std::array<AddressRange, 64> ranges;
    for (;;) {
        bool everything = false;
        const std::size_t n = monitor_.drain(ranges, everything);
        if (everything) {
            while (!tree_.empty()) {
                ++stats_.invalidations;
                detach(tree_.begin()->second);
            }
        }
        for (std::size_t i = 0; i < n; ++i) drop_range(ranges[i].start, ranges[i].end);
        if (n < ranges.size() && !everything) break;
    }
}

void RegCache::drop_range(std::uintptr_t start, std::uintptr_t end) {
    auto it = tree_.upper_bound(start);
    if (it != tree_.begin()) --it;
    while (it != tree_.end() && it->second->start_ < end) {
        Region *r = it->second;
        ++it;
        if (r->end_ <= start) continue;
        ++stats_.invalidations;
        detach(r);
    }
}

void RegCache::detach(Region *r) {
    if (r->in_tree_) {
        tree_.erase(r->start_);
        r->in_tree_ = false;
        stats_.count--;
        stats_.bytes -= r->end_ - r->start_;
    }
    if (r->on_lru_) lru_remove(r);
    if (r->refs_ == 0) destroy(r);
}

void RegCache::destroy(Region *r) noexcept {
    // Deregistering may unmap memory and re-enter the monitor's callback, which only queues.
    delete r;
}

bool RegCache::over_limits() const {
    return stats_.count > config_.max_count || stats_.bytes > config_.max_size;
}

void RegCache::enforce_limits() {
    while (over_limits() && lru_tail_ != nullptr) {
        ++stats_.evictions;
        detach(lru_tail_);
    }
}

void RegCache::lru_push_front(Region *r) noexcept {
    r->lru_prev_ = nullptr;
    r->lru_next_ = lru_head_;
    if (lru_head_ != nullptr) lru_head_->lru_prev_ = r;
    lru_head_ = r;
    if (lru_tail_ == nullptr) lru_tail_ = r;
    r->on_lru_ = true;
}

void RegCache::lru_remove(Region *r) noexcept {
    (r->lru_prev_ != nullptr ? r->lru_prev_->lru_next_ : lru_head_) = r->lru_next_;
    (r->lru_next_ != nullptr ? r->lru_next_->lru_prev_ : lru_tail_) = r->lru_prev_;
    r->lru_prev_ = r->lru_next_ = nullptr;
    r->on_lru_ = false;
}

}  // namespace ufi::transports
