// The data path's per-operation records: a send on its way, a posted receive, a message that
// arrived before its receive. They come from per-endpoint pools and go back to them, so the
// eager path allocates nothing per message once the pools are warm (a pool grows, never
// shrinks, until the endpoint closes).
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace ufi::runtime::proto {

// The most buffers one operation may name (fi_info's iov_limit never exceeds it).
inline constexpr size_t kMaxIov = 16;
// A peer index that names no peer (any source, unknown sender).
inline constexpr uint32_t kNoPeer = UINT32_MAX;

struct Buffer {
    uint8_t *base;
    size_t len;
};

// A scatter/gather list as an operation posted it.
struct IovList {
    Buffer v[kMaxIov];
    size_t count = 0;
    size_t total = 0;

    // Copies another list's entries (only those in use: the array is large).
    void assign(const IovList &o) {
        count = o.count;
        total = o.total;
        for (size_t i = 0; i < o.count; ++i) v[i] = o.v[i];
    }
    void set(const void *buf, size_t len) {
        v[0] = {static_cast<uint8_t *>(const_cast<void *>(buf)), len};
        count = len != 0 ? 1 : 0;
        total = len;
    }
    // Copies `len` bytes from `src` to offset `at` of the list; returns the bytes that fit.
    size_t copy_in(size_t at, const void *src, size_t len) const {
        if (count == 1 && at == 0) {  // the common case: one buffer, a whole message
            const size_t n = std::min(len, v[0].len);
            std::memcpy(v[0].base, src, n);
            return n;
        }
        const auto *from = static_cast<const uint8_t *>(src);
        size_t done = 0;
        for (size_t i = 0; i < count && done < len; ++i) {
            if (at >= v[i].len) {
                at -= v[i].len;
                continue;
            }
            const size_t n = std::min(v[i].len - at, len - done);
            std::memcpy(v[i].base + at, from + done, n);
            done += n;
            at = 0;
        }
        return done;
    }
    // Copies `len` bytes starting at offset `at` of the list into `dst`.
    void copy_out(size_t at, void *dst, size_t len) const {
        auto *to = static_cast<uint8_t *>(dst);
        size_t done = 0;
        for (size_t i = 0; i < count && done < len; ++i) {
            if (at >= v[i].len) {
                at -= v[i].len;
                continue;
            }
            const size_t n = std::min(v[i].len - at, len - done);
            std::memcpy(to + done, v[i].base + at, n);
            done += n;
            at = 0;
        }
    }
};

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

// A send (fi_send*, fi_tsend*, fi_inject*) not yet handed to the transport in full.
struct SendReq {
    Hook<SendReq> hook;
    uint32_t peer = kNoPeer;
    uint32_t wire_flags = 0;   // wire::EagerFlags
    uint64_t tag = 0;
    uint64_t data = 0;
    void *context = nullptr;
    uint64_t cq_flags = 0;     // what its completion reports: FI_SEND | FI_MSG / FI_TAGGED
    bool completion = false;   // write a CQ entry (not inject, FI_COMPLETION rules)
    IovList iov;
    size_t offset = 0;         // bytes handed to the transport so far
    bool started = false;      // its first (or only) active message went
    uint64_t msg_id = 0;       // multi-fragment messages
    std::vector<uint8_t> copy; // FI_INJECT: the data, copied at the call
};

// A posted receive (fi_recv*, fi_trecv*).
struct RecvReq {
    Hook<RecvReq> hook;
    bool tagged = false;
    uint32_t src = kNoPeer;  // kNoPeer: any source
    uint64_t tag = 0;
    uint64_t ignore = 0;
    void *context = nullptr;
    bool completion = true;
    IovList iov;
};

// A message that arrived with no matching receive (its bytes copied here), or one whose
// fragments are still arriving.
struct UnexpMsg {
    Hook<UnexpMsg> hook;
    bool tagged = false;
    uint32_t src = kNoPeer;
    uint32_t wire_flags = 0;
    uint64_t tag = 0;
    uint64_t data = 0;
    size_t total = 0;     // the message's length
    size_t received = 0;  // bytes arrived so far
    std::vector<uint8_t> bytes;
    RecvReq *claimed = nullptr;  // a receive that matched it before all fragments arrived
};

// A free list of T; get() reuses before it allocates.
template <typename T>
class Pool {
  public:
    T *get() {
        if (!free_.empty()) {
            T *x = free_.back();
            free_.pop_back();
            return x;
        }
        all_.push_back(std::make_unique<T>());
        return all_.back().get();
    }
    void put(T *x) noexcept {
        try {
            free_.push_back(x);
        } catch (...) {
            // free_ holds at most all_.size() pointers and reserved them: cannot happen
        }
    }
    void reserve(size_t n) {
        all_.reserve(n);
        free_.reserve(n);
    }
    size_t allocated() const noexcept { return all_.size(); }

  private:
    std::vector<std::unique_ptr<T>> all_;
    std::vector<T *> free_;
};

}  // namespace ufi::runtime::proto
