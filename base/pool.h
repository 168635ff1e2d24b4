// A free list of records that grows and never shrinks until it goes: the data path's
// per-operation records come from here, so that a warm path allocates nothing.
#pragma once

#include <memory>
#include <vector>

namespace ufi::base {

// A free list of T; get() reuses before it allocates.
template <typename T>
class Pool {
  public:
    // A record (a free one, else a new one: throws std::bad_alloc). The free records form a
    // list through their own hooks (a record on it is in no other list), so taking and
    // returning one is a couple of pointer moves, inline.
    T *get() {
        if (T *x = get_pooled()) return x;
        all_.push_back(std::make_unique<T>());
        return all_.back().get();
    }
    // A free record; nullptr when none is (get() would allocate).
    T *get_pooled() noexcept {
        T *x = free_;
        if (x != nullptr) {
            free_ = x->hook.next;
            x->hook.next = nullptr;
        }
        return x;
    }
    void put(T *x) noexcept {
        x->hook.prev = nullptr;
        x->hook.next = free_;
        free_ = x;
    }

  private:
    std::vector<std::unique_ptr<T>> all_;
    T *free_ = nullptr;
};

}  // namespace ufi::base
