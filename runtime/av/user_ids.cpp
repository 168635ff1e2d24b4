#include "runtime/av/user_ids.h"

#include <rdma/fi_errno.h>

#include <sys/mman.h>

namespace ufi::runtime::av {

namespace {
uint32_t chunk_of(uint64_t i, uint32_t shift, uint64_t &offset) {
    const uint64_t q = (i >> shift) + 1;
    const auto k = static_cast<uint32_t>(63 - __builtin_clzll(q));
    offset = i - (((uint64_t{1} << k) - 1) << shift);
    return k;
}
}  // namespace

UserIds::~UserIds() {
    for (uint32_t k = 0; k < kMaxChunks; ++k) {
        if (Slot *p = dir_[k].load()) munmap(p, chunk_bytes(k));
    }
}

int UserIds::set(uint64_t index, uint32_t seq, fi_addr_t id) noexcept {
    uint64_t off = 0;
    const uint32_t k = chunk_of(index, shift_, off);
    if (k >= kMaxChunks) return -FI_EINVAL;
    Slot *chunk = dir_[k].load(std::memory_order_acquire);
    if (chunk == nullptr) {
        void *p = mmap(nullptr, chunk_bytes(k), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return -FI_ENOMEM;
        chunk = static_cast<Slot *>(p);
        dir_[k].store(chunk, std::memory_order_release);
    }
    Slot &s = chunk[off];
    std::atomic_ref<uint64_t>(s.id).store(id, std::memory_order_relaxed);
    std::atomic_ref<uint32_t>(s.seq).store(seq, std::memory_order_release);
    return 0;
}

bool UserIds::get(uint64_t index, uint32_t seq, fi_addr_t &id) const noexcept {
    uint64_t off = 0;
    const uint32_t k = chunk_of(index, shift_, off);
    if (k >= kMaxChunks) return false;
    Slot *chunk = dir_[k].load(std::memory_order_acquire);
    if (chunk == nullptr) return false;
    Slot &s = chunk[off];
    if (std::atomic_ref<uint32_t>(s.seq).load(std::memory_order_acquire) != seq) return false;
    id = std::atomic_ref<uint64_t>(s.id).load(std::memory_order_relaxed);
    return true;
}

size_t UserIds::bytes_reserved() const noexcept {
    size_t total = 0;
    for (uint32_t k = 0; k < kMaxChunks; ++k) {
        if (dir_[k].load()) total += chunk_bytes(k);
    }
    return total;
}

}  // namespace ufi::runtime::av
