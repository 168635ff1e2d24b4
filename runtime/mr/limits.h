// ufi's memory-registration limits and key ranges, in one place: fi_getinfo reports
// kMrIovLimit as domain_attr->mr_iov_limit, and the key layout below is what lets an RMA
// call tell a mapped raw key from a peer's plain key.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::mr {

// Buffers one fi_mr_regv / fi_mr_regattr may register as one region.
inline constexpr std::size_t kMrIovLimit = 8;

// Keys fi_mr_map_raw returns have the top bit set, and so may requested keys (MPICH's window
// keys are `context_id | 1 << 63`): an RMA call's key is a mapped handle only while the domain
// has it mapped (api/ep_rma.cpp target_key). Provider-chosen keys never have the top bit.
inline constexpr std::uint64_t kMappedKeyBit = std::uint64_t{1} << 63;

// Provider keys and mapped-key handles: (generation << kIndexBits) | slot index. The
// generation changes every time a slot is reused, so a stale key never reaches a new MR.
inline constexpr unsigned kIndexBits = 24;
inline constexpr std::size_t kMaxSlots = std::size_t{1} << kIndexBits;  // = domain mr_cnt
inline constexpr std::uint64_t kGenerationMask = (std::uint64_t{1} << (63 - kIndexBits)) - 1;

}  // namespace ufi::runtime::mr
