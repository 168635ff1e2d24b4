// User IDs (FI_AV_USER_ID): the fi_addr_t a completion reports for a peer instead of its AV
// index. They are this process's own (they name the application's data structures), so even a
// named AV keeps them in process memory, beside the shared table. Each ID is stored with the
// entry version (Table::View::seq) it was set for, so a removed and re-inserted address never
// reports the ID of the address that held its slot before. Chunks double and never move, as the
// table's: reads are lock-free; writes happen under the table lock. 16 bytes per entry, only
// for chunks where some ID was set.
#pragma once

#include <rdma/fabric.h>

#include <atomic>
#include <cstdint>

namespace ufi::runtime::av {

class UserIds {
  public:
    // Chunk k holds (1 << (base_shift + k)) IDs.
    explicit UserIds(uint32_t base_shift) noexcept : shift_(base_shift) {}
    ~UserIds();
    UserIds(const UserIds &) = delete;
    UserIds &operator=(const UserIds &) = delete;

    // Records `id` for slot `index` at version `seq`. 0 or -FI_ENOMEM / -FI_EINVAL (index too big).
    int set(uint64_t index, uint32_t seq, fi_addr_t id) noexcept;
    // The ID recorded for (index, seq); false if none.
    bool get(uint64_t index, uint32_t seq, fi_addr_t &id) const noexcept;

    // Bytes mapped (for the benchmark's memory report).
    size_t bytes_reserved() const noexcept;

  private:
    struct Slot {
        uint32_t seq;  // 0: never set (a live version is odd)
        uint32_t reserved;
        uint64_t id;
    };
    static constexpr uint32_t kMaxChunks = 32;
    size_t chunk_bytes(uint32_t k) const { return (size_t{1} << (shift_ + k)) * sizeof(Slot); }

    uint32_t shift_;
    std::atomic<Slot *> dir_[kMaxChunks] = {};
};

}  // namespace ufi::runtime::av
