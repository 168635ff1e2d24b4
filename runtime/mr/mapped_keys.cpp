#include "runtime/mr/mapped_keys.h"

#include <rdma/fi_errno.h>

#include <random>

namespace ufi::runtime::mr {

MappedKeys::MappedKeys(bool thread_safe) : lock_(thread_safe) {
    std::random_device rd;
    salt_ = ((std::uint64_t{rd()} << 32) ^ rd()) & kGenerationMask;
}

std::uint64_t MappedKeys::insert(std::unique_ptr<MappedKey> key, int *error) {
    std::unique_lock<TableLock> lock(lock_);
    std::uint32_t index;
    if (!free_.empty()) {
        index = free_.back();
        free_.pop_back();
    } else {
        if (slots_.size() >= kMaxSlots) {
            *error = -FI_ENOSPC;
            return 0;
        }
        slots_.emplace_back();
        slots_.back().generation = salt_;
        index = static_cast<std::uint32_t>(slots_.size() - 1);
    }
    Slot &s = slots_[index];
    s.key = std::move(key);
    ++used_;
    live_.fetch_add(1, std::memory_order_release);
    *error = 0;
    return kMappedKeyBit | (s.generation << kIndexBits) | index;
}

bool MappedKeys::erase(std::uint64_t handle) {
    std::unique_ptr<MappedKey> doomed;
    {
        std::unique_lock<TableLock> lock(lock_);
        if (!is_mapped_handle(handle)) return false;
        const std::uint64_t index = handle & (kMaxSlots - 1);
        const std::uint64_t generation = (handle & ~kMappedKeyBit) >> kIndexBits;
        if (index >= slots_.size()) return false;
        Slot &s = slots_[index];
        if (!s.key || s.generation != generation) return false;
        doomed = std::move(s.key);
        s.generation = (s.generation + 1) & kGenerationMask;
        --used_;
        live_.fetch_sub(1, std::memory_order_release);
        try {
            free_.push_back(static_cast<std::uint32_t>(index));
        } catch (...) {
        }
    }
    return true;  // `doomed` releases the rkeys outside the lock
}

const MappedKey *MappedKeys::find_locked(std::uint64_t handle) const {
    if (!is_mapped_handle(handle)) return nullptr;
    const std::uint64_t index = handle & (kMaxSlots - 1);
    const std::uint64_t generation = (handle & ~kMappedKeyBit) >> kIndexBits;
    if (index >= slots_.size()) return nullptr;
    const Slot &s = slots_[index];
    return (s.key && s.generation == generation) ? s.key.get() : nullptr;
}

std::size_t MappedKeys::size() {
    std::shared_lock<TableLock> lock(lock_);
    return used_;
}

}  // namespace ufi::runtime::mr
