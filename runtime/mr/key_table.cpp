#include "runtime/mr/key_table.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <new>

namespace ufi::runtime::mr {

int KeyTable::insert(Mr *mr, std::uint64_t requested, std::uint64_t *key) {
    std::unique_lock<TableLock> lock(lock_);
    if (provider_keys_) {
        std::uint32_t index;
        if (!free_.empty()) {
            index = free_.back();
            free_.pop_back();
        } else {
            if (slots_.size() >= kMaxSlots) return -FI_ENOSPC;
            slots_.emplace_back();
            index = static_cast<std::uint32_t>(slots_.size() - 1);
        }
        Slot &s = slots_[index];
        s.mr = mr;
        ++used_;
        *key = (s.generation << kIndexBits) | index;
        return 0;
    }
    if (requested == FI_KEY_NOTAVAIL) return -FI_EKEYREJECTED;
    if (!by_key_.emplace(requested, mr).second) return -FI_ENOKEY;
    *key = requested;
    return 0;
}

void KeyTable::erase(std::uint64_t key) noexcept {
    std::unique_lock<TableLock> lock(lock_);
    if (provider_keys_) {
        const std::uint64_t index = key & (kMaxSlots - 1);
        const std::uint64_t generation = key >> kIndexBits;
        if (index >= slots_.size()) return;
        Slot &s = slots_[index];
        if (s.mr == nullptr || s.generation != generation) return;
        s.mr = nullptr;
        s.generation = (s.generation + 1) & kGenerationMask;
        --used_;
        try {
            free_.push_back(static_cast<std::uint32_t>(index));
        } catch (...) {
            // The slot stays unused; nothing else is lost.
        }
        return;
    }
    by_key_.erase(key);
}

Mr *KeyTable::find_locked(std::uint64_t key) const {
    if (provider_keys_) {
        if ((key & kMappedKeyBit) != 0) return nullptr;
        const std::uint64_t index = key & (kMaxSlots - 1);
        if (index >= slots_.size()) return nullptr;
        const Slot &s = slots_[index];
        return s.generation == (key >> kIndexBits) ? s.mr : nullptr;
    }
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : it->second;
}

std::size_t KeyTable::size() {
    std::shared_lock<TableLock> lock(lock_);
    return provider_keys_ ? used_ : by_key_.size();
}

}  // namespace ufi::runtime::mr
