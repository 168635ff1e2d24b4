// The memory layout of an address table, shared by the table (runtime/av/table.h) and its
// backings (heap or shared-memory files). Everything is plain data addressed by offsets and
// chunk numbers, never pointers, so that processes mapping a named AV at different addresses
// read the same table. Fields written concurrently with lock-free readers are accessed with
// std::atomic_ref.
//
//   header   TableHeader, then key_capacity KeySlots (authorization keys)
//   entries  chunk k holds entry_base << k Entries (k = 0, 1, ...): index i lives in chunk
//            floor(log2(i / entry_base + 1)); chunks never move once created
//   arena    chunk k holds arena_base << k bytes of address blobs, packed at 8-byte
//            boundaries; a blob never straddles two chunks
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::av::layout {

inline constexpr uint64_t kMagic = 0x3176612d696675ULL;  // "ufi-av1\0", written last
inline constexpr uint32_t kLayoutVersion = 1;
inline constexpr uint32_t kMaxChunks = 32;
inline constexpr size_t kMaxKeySize = 64;
inline constexpr uint32_t kSharedKeyCapacity = 256;  // named AVs always carry a key table

// One address entry (24 bytes). seq is even while the slot is free (0: never used) and odd
// while it holds an address; every insert and remove adds one, and it is written last
// (release), so a reader that sees an odd seq (acquire) sees the rest of the entry.
struct Entry {
    uint32_t seq;
    uint32_t len;    // blob bytes
    uint64_t blob;   // arena offset of the blob
    uint32_t cap;    // arena bytes reserved at `blob` (reused when the slot is reused)
    uint16_t key;    // authorization-key slot + 1; 0: none
    uint16_t flags;  // kEntryFirewall, ...
};
static_assert(sizeof(Entry) == 24);

inline constexpr uint16_t kEntryFirewall = 1;  // inserted with FI_FIREWALL_ADDR

// One authorization key (80 bytes); seq as Entry::seq.
struct KeySlot {
    uint32_t seq;
    uint32_t len;
    uint32_t bound;  // live address entries bound to this key
    uint32_t reserved;
    uint8_t bytes[kMaxKeySize];
};
static_assert(sizeof(KeySlot) == 80);

struct TableHeader {
    uint64_t magic;           // kMagic once initialised
    uint32_t layout_version;  // kLayoutVersion
    uint32_t key_capacity;    // KeySlots after the header
    uint64_t generation;      // random: names this table's chunk files
    uint32_t entry_shift;     // log2(entry_base)
    uint32_t arena_shift;     // log2(arena_base)
    pthread_mutex_t mutex;    // robust, process-shared: every change holds it
    uint32_t entry_chunks;    // entry chunks created (atomic_ref; release after creation)
    uint32_t arena_chunks;    // arena chunks created (atomic_ref)
    uint32_t dead;            // shared AVs: the last process closed it (atomic_ref)
    uint32_t keys_high;       // key slots ever used
    uint64_t high;            // entry slots ever used: indices [0, high)
    uint64_t first_free;      // every slot below it is live
    uint64_t holes;           // free slots below high
    uint64_t live;            // live entries
    uint64_t arena_used;      // next free arena byte (global offset)
    uint64_t arena_wasted;    // bytes abandoned (chunk tails, blobs of removed entries)
    uint32_t keys_live;
    uint32_t reserved;
};

inline KeySlot *key_slots(TableHeader *h) {
    return reinterpret_cast<KeySlot *>(reinterpret_cast<uint8_t *>(h) + sizeof(TableHeader));
}

// Bytes of the header region for `key_capacity` keys.
inline size_t header_bytes(uint32_t key_capacity) {
    return sizeof(TableHeader) + size_t{key_capacity} * sizeof(KeySlot);
}

// Geometry of a new table.
struct Geometry {
    uint32_t entry_shift = 10;
    uint32_t arena_shift = 16;
    uint32_t key_capacity = 0;
};

// Initialises a zeroed header region (the mutex, counters, magic last). 0 or -errno.
int init_header(TableHeader *h, const Geometry &g) noexcept;

// Bytes of entry chunk k / arena chunk k.
inline size_t entry_chunk_bytes(const TableHeader *h, uint32_t k) {
    return (size_t{1} << (h->entry_shift + k)) * sizeof(Entry);
}
inline size_t arena_chunk_bytes(const TableHeader *h, uint32_t k) {
    return size_t{1} << (h->arena_shift + k);
}

}  // namespace ufi::runtime::av::layout
