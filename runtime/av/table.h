// The address table behind an AV: entries in FI_AV_TABLE order (each address at the lowest free
// index), address blobs packed in an arena, and the authorization keys. Sized for millions of
// entries: 24 bytes per entry plus the blob's own bytes, chunks that double and never move, so
// published entries can be read without a lock (the data path), and one lock (robust,
// process-shared: the same code serves named AVs in shared memory) for every change.
#pragma once

#include "runtime/av/backing.h"
#include "runtime/av/table_layout.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace ufi::runtime::av {

// Bytes of an entry that a writer may be rewriting while they are read without the lock (a
// seqlock's data, checked afterwards with Table::unchanged): copied with relaxed atomic
// accesses, word by word where aligned, so that the race the version check resolves is not a
// data race in C++'s sense (ThreadSanitizer checks it). Writers of reused slots store the
// same way.
inline void copy_in_racing(uint8_t *dst, const uint8_t *src, size_t n) noexcept {
    size_t i = 0;
    for (; i < n && (reinterpret_cast<uintptr_t>(src + i) & 7) != 0; ++i)
        dst[i] = __atomic_load_n(src + i, __ATOMIC_RELAXED);
    for (; i + 8 <= n; i += 8) {
        const uint64_t w = __atomic_load_n(reinterpret_cast<const uint64_t *>(src + i), __ATOMIC_RELAXED);
        __builtin_memcpy(dst + i, &w, 8);
    }
    for (; i < n; ++i) dst[i] = __atomic_load_n(src + i, __ATOMIC_RELAXED);
}
inline void copy_out_racing(uint8_t *dst, const uint8_t *src, size_t n) noexcept {
    size_t i = 0;
    for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 7) != 0; ++i)
        __atomic_store_n(dst + i, src[i], __ATOMIC_RELAXED);
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        __builtin_memcpy(&w, src + i, 8);
        __atomic_store_n(reinterpret_cast<uint64_t *>(dst + i), w, __ATOMIC_RELAXED);
    }
    for (; i < n; ++i) __atomic_store_n(dst + i, src[i], __ATOMIC_RELAXED);
}

class Table {
  public:
    // Takes over a backing whose header is initialised.
    explicit Table(std::unique_ptr<Backing> backing) noexcept;
    ~Table();
    Table(const Table &) = delete;
    Table &operator=(const Table &) = delete;

    // Geometry for a table expecting about `count` entries (fi_av_attr::count; 0: unknown).
    // Shared tables keep their first chunks small: they are reserved in /dev/shm up front.
    static layout::Geometry geometry_for(size_t count, bool shared, uint32_t key_capacity) noexcept;

    // The table lock. lock() returns false only if the lock is unusable (a process died holding
    // it and recovery failed), which callers report as -FI_EOTHER. A lock left by a dead process
    // is recovered: the counters are rebuilt from the published entries.
    class Guard {
      public:
        explicit Guard(Table &t) noexcept : t_(t), ok_(t.lock()) {}
        ~Guard() {
            if (ok_) t_.unlock();
        }
        bool ok() const { return ok_; }
        Guard(const Guard &) = delete;
        Guard &operator=(const Guard &) = delete;

      private:
        Table &t_;
        bool ok_;
    };

    // --- Changes: the caller holds a Guard. ---
    // Stores a blob at the lowest free index. key: key slot + 1 (0: none). 0 or -FI_ENOSPC /
    // -FI_ENOMEM.
    int insert_locked(const uint8_t *blob, uint32_t len, uint16_t key, uint16_t flags,
                      uint64_t &index) noexcept;
    // -FI_EINVAL when index holds no address.
    int remove_locked(uint64_t index) noexcept;
    // A key of 1..64 bytes at the lowest free key slot. -FI_ENOSPC when the key table is full.
    int insert_key_locked(const uint8_t *bytes, uint32_t len, uint64_t &slot) noexcept;
    // -FI_EINVAL when the slot holds no key, -FI_EBUSY while addresses are bound to it.
    int remove_key_locked(uint64_t slot) noexcept;
    // Live addresses bound to a live key slot.
    uint32_t key_bound_locked(uint64_t slot) const noexcept;

    // --- Reads of published entries: lock-free (a named table may map a chunk first). ---
    struct View {
        const uint8_t *blob = nullptr;
        uint32_t len = 0;
        uint32_t seq = 0;  // changes with every insert/remove of the slot
        uint16_t key = 0;  // key slot + 1
        uint16_t flags = 0;
        const layout::Entry *entry = nullptr;  // where `seq` was read (Table::unchanged)
    };
    bool view(uint64_t index, View &out) const noexcept;
    // After reading a view's bytes without the lock: whether entry `index` still holds the
    // version the view saw (a seqlock's second check: a false answer means the bytes read may
    // be torn, so read again under the lock).
    static bool unchanged(const View &v) noexcept {
        std::atomic_thread_fence(std::memory_order_acquire);  // the bytes' loads before this one
        return __atomic_load_n(&v.entry->seq, __ATOMIC_RELAXED) == v.seq;
    }
    // Only the version of a published entry (odd), or 0 when the slot holds no address: what a
    // connection cache keyed by (index, version) checks per operation.
    uint32_t version(uint64_t index) const noexcept;
    // Where the version of entry `index` lives, for caches that check it with one load
    // (load_version): entry chunks never move, so the pointer stays valid as long as the
    // table. nullptr when the slot does not exist (yet).
    const uint32_t *version_ptr(uint64_t index) const noexcept;
    static uint32_t load_version(const uint32_t *p) noexcept {
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    }
    struct KeyView {
        const uint8_t *bytes = nullptr;
        uint32_t len = 0;
        uint32_t seq = 0;
    };
    bool key_view(uint64_t slot, KeyView &out) const noexcept;

    uint32_t key_capacity() const noexcept { return h_->key_capacity; }
    uint32_t keys_high() const noexcept;
    // Entry slots ever used: every entry's index is below it (lock-free; may lag a writer).
    uint64_t high() const noexcept;
    uint64_t live() const noexcept { return h_->live; }  // under the lock
    uint32_t entry_shift() const noexcept { return h_->entry_shift; }
    bool shared() const noexcept { return backing_->shared(); }
    void *map_addr() const noexcept { return h_; }

    // Memory the table holds (entry chunks, arena chunks, header), for the benchmark's report.
    size_t bytes_reserved() const noexcept;
    uint64_t arena_used() const noexcept { return h_->arena_used; }

  private:
    bool lock() noexcept;
    void unlock() noexcept;
    void recover() noexcept;

    layout::Entry *entry_ptr(uint64_t index) const noexcept;  // nullptr: not mapped / beyond
    uint8_t *arena_ptr(uint64_t offset, uint32_t len) const noexcept;
    uint8_t *chunk(std::atomic<uint8_t *> *dir, ChunkKind kind, uint32_t k) const noexcept;
    // chunk()'s way for a chunk this process has not mapped yet (another process's, in a
    // named AV): out of line, so lookups inline the common case.
    uint8_t *map_published_chunk(std::atomic<uint8_t *> *dir, ChunkKind kind, uint32_t k) const noexcept;
    int ensure_entry_chunk_locked(uint32_t k) noexcept;
    int ensure_arena_chunk_locked(uint32_t k) noexcept;
    int arena_alloc_locked(uint32_t len, uint64_t &offset) noexcept;

    std::unique_ptr<Backing> backing_;
    layout::TableHeader *h_;
    layout::KeySlot *keys_;
    // This process's mappings of the chunks (published with release).
    mutable std::atomic<uint8_t *> entry_dir_[layout::kMaxChunks] = {};
    mutable std::atomic<uint8_t *> arena_dir_[layout::kMaxChunks] = {};
    mutable std::mutex map_mutex_;  // mapping chunks another process created
};

}  // namespace ufi::runtime::av
