// Raw keys this domain has mapped (fi_mr_map_raw): the decoded bundle and its UCT rkeys
// unpacked, behind a 64-bit handle with the top bit set (limits.h) that RMA calls accept in
// place of a key. fi_mr_unmap_key releases one; closing the domain releases the rest.
#pragma once

#include "runtime/mr/limits.h"
#include "runtime/mr/table_lock.h"
#include "transports/memory/rkey_bundle.h"
#include "transports/memory/unpacked_rkeys.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace ufi::runtime::mr {

struct MappedKey {
    transports::RkeyBundle bundle;
    transports::UnpackedRkeys rkeys;
};

class MappedKeys {
  public:
    explicit MappedKeys(bool thread_safe);

    // The handle of the new entry, or 0 with -FI_ENOSPC / -FI_ENOMEM in *error.
    std::uint64_t insert(std::unique_ptr<MappedKey> key, int *error);
    // Releases the entry; false when `handle` names none.
    bool erase(std::uint64_t handle);

    static bool is_mapped_handle(std::uint64_t key) { return (key & kMappedKeyBit) != 0; }

    // Runs fn(const MappedKey*) under the shared lock (nullptr for an unknown handle).
    template <typename Fn>
    auto visit(std::uint64_t handle, Fn &&fn) {
        std::shared_lock<TableLock> lock(lock_);
        return fn(find_locked(handle));
    }

    // The entry, or nullptr; valid until fi_mr_unmap_key (which the application must not
    // race with operations that use the key).
    const MappedKey *find(std::uint64_t handle) {
        std::shared_lock<TableLock> lock(lock_);
        return find_locked(handle);
    }

    std::size_t size();
    // No key mapped: an RMA call's key is the peer's own, with no lookup (the common case,
    // also for requested keys with the top bit set).
    bool empty() const { return live_.load(std::memory_order_acquire) == 0; }

  private:
    const MappedKey *find_locked(std::uint64_t handle) const;

    struct Slot {
        std::unique_ptr<MappedKey> key;
        std::uint64_t generation = 0;
    };
    TableLock lock_;
    // Where a slot's generations start: a per-domain value, so that handles are unlikely to
    // equal the small requested keys with the top bit set that applications choose.
    std::uint64_t salt_;
    std::atomic<std::size_t> live_{0};
    std::vector<Slot> slots_;
    std::vector<std::uint32_t> free_;
    std::size_t used_ = 0;
};

}  // namespace ufi::runtime::mr
