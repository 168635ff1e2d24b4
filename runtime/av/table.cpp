#include "runtime/av/table.h"

#include "runtime/av/addr_encoding.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace ufi::runtime::av {

using layout::Entry;
using layout::KeySlot;
using layout::TableHeader;

namespace {

template <typename T>
T load(const T &field, std::memory_order order = std::memory_order_relaxed) {
    return std::atomic_ref<T>(const_cast<T &>(field)).load(order);
}
template <typename T>
void store(T &field, T value, std::memory_order order = std::memory_order_relaxed) {
    std::atomic_ref<T>(field).store(value, order);
}

// Chunk k of a doubling sequence with base 2^shift starts at ((2^k) - 1) << shift.
uint32_t chunk_of(uint64_t i, uint32_t shift, uint64_t &offset) {
    const uint64_t q = (i >> shift) + 1;
    const auto k = static_cast<uint32_t>(63 - __builtin_clzll(q));
    offset = i - (((uint64_t{1} << k) - 1) << shift);
    return k;
}
// The arena bytes a blob of `len` takes: blobs start at 8-byte boundaries, so lock-free
// readers copy them a word at a time (copy_in_racing) and no word holds two blobs' bytes.
uint32_t arena_bytes(uint32_t len) { return (len + 7u) & ~7u; }

uint64_t chunk_start(uint32_t k, uint32_t shift) {
    return ((uint64_t{1} << k) - 1) << shift;
}

uint32_t ceil_log2(uint64_t v) {
    if (v <= 1) return 0;
    return static_cast<uint32_t>(64 - __builtin_clzll(v - 1));
}

}  // namespace

int layout::init_header(TableHeader *h, const Geometry &g) noexcept {
    pthread_mutexattr_t attr;
    if (int rc = pthread_mutexattr_init(&attr); rc != 0) return -rc;
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    const int rc = pthread_mutex_init(&h->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0) return -rc;
    h->layout_version = kLayoutVersion;
    h->key_capacity = g.key_capacity;
    h->entry_shift = g.entry_shift;
    h->arena_shift = g.arena_shift;
    store(h->magic, kMagic, std::memory_order_release);
    return 0;
}

Table::Table(std::unique_ptr<Backing> backing) noexcept
    : backing_(std::move(backing)), h_(backing_->header()), keys_(layout::key_slots(h_)) {}

Table::~Table() {
    for (uint32_t k = 0; k < layout::kMaxChunks; ++k) {
        if (uint8_t *p = entry_dir_[k].load())
            backing_->unmap_chunk(p, layout::entry_chunk_bytes(h_, k));
        if (uint8_t *p = arena_dir_[k].load())
            backing_->unmap_chunk(p, layout::arena_chunk_bytes(h_, k));
    }
    backing_.reset();
}

layout::Geometry Table::geometry_for(size_t count, bool shared, uint32_t key_capacity) noexcept {
    layout::Geometry g;
    const uint32_t want = ceil_log2(count == 0 ? 1024 : count);
    g.entry_shift = std::clamp<uint32_t>(want, 10, shared ? 16 : 20);
    // About 64 blob bytes per entry (a shm + tcp + self address is ~70).
    g.arena_shift = std::clamp<uint32_t>(g.entry_shift + 6, 16, shared ? 22 : 26);
    g.key_capacity = key_capacity;
    return g;
}

bool Table::lock() noexcept {
    const int rc = pthread_mutex_lock(&h_->mutex);
    if (rc == 0) return true;
    if (rc == EOWNERDEAD) {
        UFI_LOG_WARN(log::Subsys::Av,
                     "AV: a process died while changing the shared AV; recovering its table");
        recover();
        pthread_mutex_consistent(&h_->mutex);
        return true;
    }
    UFI_LOG_ERROR(log::Subsys::Av, "AV: the table lock is unusable ({})", rc);
    return false;
}

void Table::unlock() noexcept {
    pthread_mutex_unlock(&h_->mutex);
}

void Table::recover() noexcept {
    uint64_t live = 0;
    uint64_t first_free = UINT64_MAX;
    std::vector<uint32_t> bound;
    try {
        bound.assign(h_->key_capacity, 0);
    } catch (...) {
    }
    for (uint64_t i = 0; i < h_->high; ++i) {
        Entry *e = entry_ptr(i);
        if (e == nullptr) {  // a chunk that was never published: the slots beyond it are unused
            store(h_->high, i, std::memory_order_release);
            break;
        }
        if (load(e->seq) & 1) {
            ++live;
            const uint16_t key = load(e->key);
            if (key != 0 && key - 1u < bound.size()) ++bound[key - 1u];
        } else if (first_free == UINT64_MAX) {
            first_free = i;
        }
    }
    h_->live = live;
    h_->holes = h_->high - live;
    h_->first_free = first_free == UINT64_MAX ? h_->high : first_free;
    uint32_t keys_live = 0;
    for (uint32_t s = 0; s < h_->keys_high && s < h_->key_capacity; ++s) {
        if (load(keys_[s].seq) & 1) ++keys_live;
        if (s < bound.size()) keys_[s].bound = bound[s];
    }
    h_->keys_live = keys_live;
}

inline uint8_t *Table::chunk(std::atomic<uint8_t *> *dir, ChunkKind kind, uint32_t k) const noexcept {
    if (k >= layout::kMaxChunks) return nullptr;
    if (uint8_t *p = dir[k].load(std::memory_order_acquire)) return p;
    return map_published_chunk(dir, kind, k);
}

__attribute__((noinline)) uint8_t *Table::map_published_chunk(std::atomic<uint8_t *> *dir,
                                                              ChunkKind kind, uint32_t k) const noexcept {
    if (!backing_->shared()) return nullptr;
    const uint32_t published =
        load(kind == ChunkKind::Entries ? h_->entry_chunks : h_->arena_chunks,
             std::memory_order_acquire);
    if (k >= published) return nullptr;
    std::lock_guard<std::mutex> guard(map_mutex_);
    if (uint8_t *p = dir[k].load(std::memory_order_acquire)) return p;
    const size_t bytes = kind == ChunkKind::Entries ? layout::entry_chunk_bytes(h_, k)
                                                    : layout::arena_chunk_bytes(h_, k);
    void *p = nullptr;
    if (backing_->map_chunk(kind, k, bytes, p) != 0) return nullptr;
    dir[k].store(static_cast<uint8_t *>(p), std::memory_order_release);
    return static_cast<uint8_t *>(p);
}

inline Entry *Table::entry_ptr(uint64_t index) const noexcept {
    uint64_t off = 0;
    const uint32_t k = chunk_of(index, h_->entry_shift, off);
    uint8_t *p = chunk(entry_dir_, ChunkKind::Entries, k);
    return p == nullptr ? nullptr : reinterpret_cast<Entry *>(p) + off;
}

inline uint8_t *Table::arena_ptr(uint64_t offset, uint32_t len) const noexcept {
    uint64_t off = 0;
    const uint32_t k = chunk_of(offset, h_->arena_shift, off);
    uint8_t *p = chunk(arena_dir_, ChunkKind::Arena, k);
    if (p == nullptr || off + len > layout::arena_chunk_bytes(h_, k)) return nullptr;
    return p + off;
}

int Table::ensure_entry_chunk_locked(uint32_t k) noexcept {
    if (k >= layout::kMaxChunks) return -FI_ENOSPC;
    for (uint32_t n = load(h_->entry_chunks); n <= k; ++n) {
        void *p = nullptr;
        if (int rc =
                backing_->create_chunk(ChunkKind::Entries, n, layout::entry_chunk_bytes(h_, n), p);
            rc != 0) {
            return rc;
        }
        entry_dir_[n].store(static_cast<uint8_t *>(p), std::memory_order_release);
        store(h_->entry_chunks, n + 1, std::memory_order_release);
    }
    return 0;
}

int Table::ensure_arena_chunk_locked(uint32_t k) noexcept {
    if (k >= layout::kMaxChunks) return -FI_ENOSPC;
    for (uint32_t n = load(h_->arena_chunks); n <= k; ++n) {
        void *p = nullptr;
        if (int rc =
                backing_->create_chunk(ChunkKind::Arena, n, layout::arena_chunk_bytes(h_, n), p);
            rc != 0) {
            return rc;
        }
        arena_dir_[n].store(static_cast<uint8_t *>(p), std::memory_order_release);
        store(h_->arena_chunks, n + 1, std::memory_order_release);
    }
    return 0;
}

int Table::arena_alloc_locked(uint32_t len, uint64_t &offset) noexcept {
    len = arena_bytes(len);
    uint64_t used = h_->arena_used;
    uint64_t off = 0;
    uint32_t k = chunk_of(used, h_->arena_shift, off);
    if (off + len > layout::arena_chunk_bytes(h_, k)) {  // a blob never straddles two chunks
        h_->arena_wasted += layout::arena_chunk_bytes(h_, k) - off;
        ++k;
        used = chunk_start(k, h_->arena_shift);
    }
    if (int rc = ensure_arena_chunk_locked(k); rc != 0) return rc;
    offset = used;
    h_->arena_used = used + len;
    return 0;
}

int Table::insert_locked(const uint8_t *blob, uint32_t len, uint16_t key, uint16_t flags,
                         uint64_t &index) noexcept {
    uint64_t slot = h_->high;
    bool from_hole = false;
    if (h_->holes > 0) {
        for (uint64_t i = h_->first_free; i < h_->high; ++i) {
            Entry *e = entry_ptr(i);
            if (e == nullptr) return -FI_EOTHER;
            if ((load(e->seq) & 1) == 0) {
                slot = i;
                from_hole = true;
                break;
            }
        }
        if (!from_hole) h_->holes = 0;  // the count was stale: there is no hole
    }
    if (!from_hole) {
        if (slot > encoding::kMaxEntryIndex) return -FI_ENOSPC;
        uint64_t off = 0;
        if (int rc = ensure_entry_chunk_locked(chunk_of(slot, h_->entry_shift, off)); rc != 0)
            return rc;
    }
    Entry *e = entry_ptr(slot);
    if (e == nullptr) return -FI_EOTHER;
    uint64_t at = e->blob;
    if (e->cap < len || e->cap == 0) {
        if (int rc = arena_alloc_locked(len, at); rc != 0) return rc;
        h_->arena_wasted += e->cap;
        store(e->blob, at);
        e->cap = arena_bytes(len);  // what arena_alloc_locked reserved
    }
    uint8_t *dst = arena_ptr(at, len);
    if (dst == nullptr) return -FI_EOTHER;
    // A reused slot's bytes change under lock-free readers (fi_av_lookup): the even version
    // the remove stored must be visible no later than the new bytes, so a reader that read
    // them sees its version changed (Table::unchanged).
    std::atomic_thread_fence(std::memory_order_release);
    copy_out_racing(dst, blob, len);
    store(e->len, len);
    store(e->key, key);
    store(e->flags, flags);
    store(e->seq, e->seq + 1, std::memory_order_release);  // even -> odd: published
    if (from_hole) {
        --h_->holes;
        h_->first_free = slot + 1;
    } else {
        // Lock-free readers (high(): the data path's lookups of peers' entries) load it with
        // acquire; a plain store here was a data race (ThreadSanitizer found it).
        store(h_->high, slot + 1, std::memory_order_release);
        if (h_->holes == 0) h_->first_free = slot + 1;
    }
    ++h_->live;
    if (key != 0) ++keys_[key - 1].bound;
    index = slot;
    return 0;
}

int Table::remove_locked(uint64_t index) noexcept {
    if (index >= h_->high) return -FI_EINVAL;
    Entry *e = entry_ptr(index);
    if (e == nullptr || (load(e->seq) & 1) == 0) return -FI_EINVAL;
    const uint16_t key = e->key;
    if (key != 0 && key <= h_->key_capacity && keys_[key - 1].bound > 0) --keys_[key - 1].bound;
    store(e->seq, e->seq + 1, std::memory_order_release);  // odd -> even
    --h_->live;
    ++h_->holes;
    h_->first_free = std::min(h_->first_free, index);
    return 0;
}

int Table::insert_key_locked(const uint8_t *bytes, uint32_t len, uint64_t &slot) noexcept {
    if (len == 0 || len > layout::kMaxKeySize) return -FI_EINVAL;
    uint32_t s = 0;
    while (s < h_->keys_high && (load(keys_[s].seq) & 1)) ++s;
    if (s >= h_->key_capacity) return -FI_ENOSPC;
    KeySlot &k = keys_[s];
    std::memcpy(k.bytes, bytes, len);
    store(k.len, len);
    k.bound = 0;
    store(k.seq, k.seq + 1, std::memory_order_release);
    if (s == h_->keys_high) store(h_->keys_high, s + 1, std::memory_order_release);
    ++h_->keys_live;
    slot = s;
    return 0;
}

int Table::remove_key_locked(uint64_t slot) noexcept {
    if (slot >= h_->keys_high) return -FI_EINVAL;
    KeySlot &k = keys_[slot];
    if ((load(k.seq) & 1) == 0) return -FI_EINVAL;
    if (k.bound > 0) return -FI_EBUSY;
    store(k.seq, k.seq + 1, std::memory_order_release);
    --h_->keys_live;
    return 0;
}

uint32_t Table::key_bound_locked(uint64_t slot) const noexcept {
    return slot < h_->keys_high ? keys_[slot].bound : 0;
}

uint64_t Table::high() const noexcept {
    return load(h_->high, std::memory_order_acquire);
}

uint32_t Table::keys_high() const noexcept {
    return load(h_->keys_high, std::memory_order_acquire);
}

uint32_t Table::version(uint64_t index) const noexcept {
    if (index > encoding::kMaxEntryIndex) return 0;
    const Entry *e = entry_ptr(index);
    if (e == nullptr) return 0;
    const uint32_t seq = load(e->seq, std::memory_order_acquire);
    return (seq & 1) ? seq : 0;
}

const uint32_t *Table::version_ptr(uint64_t index) const noexcept {
    if (index > encoding::kMaxEntryIndex) return nullptr;
    const Entry *e = entry_ptr(index);
    return e == nullptr ? nullptr : &e->seq;
}

bool Table::view(uint64_t index, View &out) const noexcept {
    if (index > encoding::kMaxEntryIndex) return false;
    const Entry *e = entry_ptr(index);
    if (e == nullptr) return false;
    const uint32_t seq = load(e->seq, std::memory_order_acquire);
    if ((seq & 1) == 0) return false;
    const uint32_t len = load(e->len);
    const uint8_t *blob = arena_ptr(load(e->blob), len);
    if (blob == nullptr) return false;
    out.blob = blob;
    out.len = len;
    out.seq = seq;
    out.key = load(e->key);
    out.flags = load(e->flags);
    out.entry = e;
    return true;
}

bool Table::key_view(uint64_t slot, KeyView &out) const noexcept {
    if (slot >= h_->key_capacity || slot >= keys_high()) return false;
    const KeySlot &k = keys_[slot];
    const uint32_t seq = load(k.seq, std::memory_order_acquire);
    if ((seq & 1) == 0) return false;
    out.bytes = k.bytes;
    out.len = std::min<uint32_t>(load(k.len), layout::kMaxKeySize);
    out.seq = seq;
    return true;
}

size_t Table::bytes_reserved() const noexcept {
    size_t total = layout::header_bytes(h_->key_capacity);
    for (uint32_t k = 0; k < layout::kMaxChunks; ++k) {
        if (entry_dir_[k].load()) total += layout::entry_chunk_bytes(h_, k);
        if (arena_dir_[k].load()) total += layout::arena_chunk_bytes(h_, k);
    }
    return total;
}

}  // namespace ufi::runtime::av
