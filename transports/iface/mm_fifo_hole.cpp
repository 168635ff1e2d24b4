#include "transports/iface/mm_fifo_hole.h"

#include "base/log/log.h"

#include <malloc.h>
#include <unistd.h>

#include <cstring>

namespace ufi::transports {

using log::Subsys;

namespace {

// UCT's element header: flags (owner bit 0, inline bit 1), am id, length (uct_mm_fifo_element_t).
constexpr uint8_t kElemOwner = 1;
constexpr uint8_t kElemInline = 2;
constexpr uint64_t kHeadCountMask = ~(uint64_t{1} << 63);  // (bit 63: "event armed")
// The control block: head in its first cache lines, then a cache line of tail and owner pid.
constexpr size_t kCacheLine = 64;

uint64_t word_at(const uint8_t *base, size_t off) {
    uint64_t w;
    std::memcpy(&w, base + off, sizeof w);
    return w;
}

}  // namespace

bool locate_recv_fifo(uct_iface_h iface, size_t elem_size, size_t elem_count, MmRecvFifo &out) noexcept {
    out = MmRecvFifo{};
    if (iface == nullptr || elem_size == 0 || elem_count < 2 || (elem_count & (elem_count - 1)) != 0) return false;
    const auto *base = reinterpret_cast<const uint8_t *>(iface);
    // The iface is one heap block (UCS_CLASS_NEW): the scan stays inside it.
    const size_t size = ::malloc_usable_size(const_cast<void *>(static_cast<const void *>(iface)));
    const uint64_t mask = elem_count - 1;
    unsigned shift = 0;
    while ((size_t{1} << shift) < elem_count) ++shift;
    // recv_fifo_ctl, recv_fifo_elems, read_index_elem, read_index, then fifo_shift (a byte)
    // and fifo_mask (a 32-bit word at the next 4-byte boundary).
    constexpr size_t kSpan = 5 * 8;
    for (size_t off = 0; off + kSpan <= size; off += 8) {
        const uint64_t ctl = word_at(base, off);
        const uint64_t elems = word_at(base, off + 8);
        if (ctl == 0 || ctl % kCacheLine != 0 || elems <= ctl || elems - ctl > 4 * kCacheLine ||
            (elems - ctl) % kCacheLine != 0) {
            continue;
        }
        const uint64_t reading = word_at(base, off + 16);
        const uint64_t index = word_at(base, off + 24);
        if (reading != elems + (index & mask) * elem_size || base[off + 32] != shift) continue;
        uint32_t fifo_mask;
        std::memcpy(&fifo_mask, base + off + 36, sizeof fifo_mask);
        if (fifo_mask != mask) continue;
        // The control block's last cache line: tail, then the owner's pid.
        const auto *tail_line = reinterpret_cast<const uint8_t *>(elems - kCacheLine);
        pid_t owner;
        std::memcpy(&owner, tail_line + 8, sizeof owner);
        if (owner != ::getpid()) continue;
        out.head = reinterpret_cast<const volatile uint64_t *>(ctl);
        out.elems = reinterpret_cast<uint8_t *>(elems);
        out.read_index = reinterpret_cast<const uint64_t *>(base + off + 24);
        out.mask = mask;
        out.shift = shift;
        out.elem_size = elem_size;
        return true;
    }
    UFI_LOG_DEBUG(Subsys::EpData, "the shared-memory iface's receive FIFO was not located (another UCX layout): "
                  "holes left by killed writers are not skipped");
    return false;
}

bool MmHoleWatch::check(const MmRecvFifo &f, std::chrono::steady_clock::time_point now,
                        std::chrono::milliseconds after) noexcept {
    if (f.head == nullptr) return false;
    const uint64_t r = *f.read_index;
    const uint64_t claimed = *f.head & kHeadCountMask;
    uint8_t *elem = f.elems + (r & f.mask) * f.elem_size;
    const uint8_t lap = static_cast<uint8_t>((r >> f.shift) & 1);
    const uint8_t flags = __atomic_load_n(elem, __ATOMIC_ACQUIRE);
    if (claimed <= r || (flags & kElemOwner) == lap) {
        index_ = UINT64_MAX;  // nothing claimed beyond what was read, or published: UCT reads it
        return false;
    }
    if (index_ != r) {
        index_ = r;
        since_ = now;
        return false;
    }
    if (now - since_ < after) return false;
    // An empty inline message under an id nobody sends; the owner bit goes last, as a
    // writer's does.
    elem[1] = kMmHoleAmId;
    const uint16_t length = 0;
    std::memcpy(elem + 2, &length, sizeof length);
    __atomic_store_n(elem, static_cast<uint8_t>(kElemInline | lap), __ATOMIC_RELEASE);
    UFI_LOG_WARN(Subsys::EpData,
                 "shared-memory FIFO element {} was claimed by a writer and not written for {} ms "
                 "(a writer killed in the middle of a send): skipped, the message it was to hold is lost",
                 r, std::chrono::duration_cast<std::chrono::milliseconds>(now - since_).count());
    index_ = UINT64_MAX;
    return true;
}

}  // namespace ufi::transports
