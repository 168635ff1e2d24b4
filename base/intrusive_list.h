// An intrusive doubly linked list: the element holds its own hook, so linking, unlinking from
// the middle and moving between lists never allocate (the data path's queues of records).
#pragma once

namespace ufi::base {

// Intrusive doubly linked list hooks (posted receives and unexpected messages are removed from
// the middle: matching, fi_cancel).
template <typename T>
struct Hook {
    T *prev = nullptr;
    T *next = nullptr;
};

template <typename T>
class List {
  public:
    bool empty() const noexcept { return head_ == nullptr; }
    T *front() const noexcept { return head_; }
    void push_back(T *x) noexcept {
        x->hook.prev = tail_;
        x->hook.next = nullptr;
        if (tail_) tail_->hook.next = x;
        else head_ = x;
        tail_ = x;
    }
    // Puts x before pos (pos nullptr: at the back).
    void insert_before(T *pos, T *x) noexcept {
        if (pos == nullptr) return push_back(x);
        x->hook.prev = pos->hook.prev;
        x->hook.next = pos;
        if (pos->hook.prev) pos->hook.prev->hook.next = x;
        else head_ = x;
        pos->hook.prev = x;
    }
    void remove(T *x) noexcept {
        if (x->hook.prev) x->hook.prev->hook.next = x->hook.next;
        else head_ = x->hook.next;
        if (x->hook.next) x->hook.next->hook.prev = x->hook.prev;
        else tail_ = x->hook.prev;
        x->hook.prev = x->hook.next = nullptr;
    }
    T *pop_front() noexcept {
        T *x = head_;
        if (x) remove(x);
        return x;
    }

  private:
    T *head_ = nullptr;
    T *tail_ = nullptr;
};

}  // namespace ufi::base
