// The target side's key table: key -> MR, per domain. With FI_MR_PROV_KEY ufi hands out keys
// that index a dense slot array (no hashing on lookup, a generation so stale keys miss);
// otherwise the application's requested keys go into a hash map (-FI_ENOKEY when taken,
// -FI_EKEYREJECTED when out of range, see limits.h).
#pragma once

#include "runtime/mr/limits.h"
#include "runtime/mr/table_lock.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace ufi::runtime::mr {

struct Mr;

class KeyTable {
  public:
    KeyTable(bool provider_keys, bool thread_safe)
        : provider_keys_(provider_keys), lock_(thread_safe) {}

    bool provider_keys() const { return provider_keys_; }

    // Enters `mr`: a provider key, or `requested`. 0, -FI_ENOKEY (requested key in use),
    // -FI_EKEYREJECTED (out of range), -FI_ENOSPC (no slot left), -FI_ENOMEM.
    int insert(Mr *mr, std::uint64_t requested, std::uint64_t *key);
    // Removes `key` (no-op when absent).
    void erase(std::uint64_t key) noexcept;

    // Runs fn(Mr*) under the shared lock (Mr* is nullptr for an unknown key) and returns its
    // result: the MR cannot be closed while fn runs.
    template <typename Fn>
    auto visit(std::uint64_t key, Fn &&fn) {
        std::shared_lock<TableLock> lock(lock_);
        return fn(find_locked(key));
    }

    std::size_t size();

  private:
    Mr *find_locked(std::uint64_t key) const;

    struct Slot {
        Mr *mr = nullptr;
        std::uint64_t generation = 0;
    };
    bool provider_keys_;
    TableLock lock_;
    std::vector<Slot> slots_;          // provider keys
    std::vector<std::uint32_t> free_;  // free slot indexes
    std::size_t used_ = 0;
    std::unordered_map<std::uint64_t, Mr *> by_key_;  // requested keys
};

}  // namespace ufi::runtime::mr
