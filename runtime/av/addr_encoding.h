// ufi's fi_addr_t layout for address vectors: which bits name an AV entry, which an
// authorization-key handle, and which belong to the application (fi_rx_addr's receive-context
// index and fi_group_addr's peer group). One place, so the AV, the data path and the tests agree.
//
//   bits 63..32  the application's: fi_group_addr puts a group id here, fi_rx_addr an rx
//                context index in the top rx_ctx_bits bits (so rx_ctx_bits is at most 32)
//   bit  31      0: an address entry, 1: an authorization-key handle (fi_av_insert_auth_key)
//   bits 30..0   the entry's table index (FI_AV_TABLE order: 0, 1, 2, ...) or the key's slot
//
// FI_ADDR_NOTAVAIL (all ones) never names anything: it is a key handle of slot 0x7fffffff,
// beyond every key table. An address entry index is therefore at most 2^31 - 2.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>

namespace ufi::runtime::av::encoding {

inline constexpr uint64_t kLowMask = 0xffffffffULL;
inline constexpr uint64_t kKeyTag = 1ULL << 31;
inline constexpr uint64_t kIndexMask = kKeyTag - 1;
inline constexpr uint64_t kMaxEntryIndex = kIndexMask - 1;  // 2^31 - 2
inline constexpr int kMaxRxCtxBits = 32;

// The part of an fi_addr_t that names an AV object (the low 32 bits).
constexpr uint64_t low(fi_addr_t a) {
    return a & kLowMask;
}
// The application's bits (rx context index, group id) are all zero.
constexpr bool is_canonical(fi_addr_t a) {
    return (a & ~kLowMask) == 0;
}
constexpr bool is_key_handle(fi_addr_t a) {
    return (a & kKeyTag) != 0;
}
// The high bits an AV with `rx_ctx_bits` gives a meaning: fi_rx_addr's receive-context index in
// the top rx_ctx_bits bits. ufi offers no peer groups (max_group_id 0), so no other high bit
// means anything.
constexpr uint64_t rx_ctx_mask(int rx_ctx_bits) {
    return rx_ctx_bits <= 0 ? 0 : ~0ULL << (64 - rx_ctx_bits);
}
// The bits of `a` that mean nothing to such an AV (0 when `a` is well formed).
constexpr uint64_t meaningless_bits(fi_addr_t a, int rx_ctx_bits) {
    return a & ~kLowMask & ~rx_ctx_mask(rx_ctx_bits);
}
constexpr uint64_t slot_of(fi_addr_t a) {
    return a & kIndexMask;
}

constexpr fi_addr_t entry_addr(uint64_t index) {
    return index;
}
constexpr fi_addr_t key_handle(uint64_t slot) {
    return kKeyTag | slot;
}

static_assert(is_key_handle(FI_ADDR_NOTAVAIL));
static_assert(meaningless_bits(1ULL << 32, 0) == 1ULL << 32);
static_assert(meaningless_bits(1ULL << 63 | 5, 1) == 0);
static_assert(meaningless_bits(~0ULL, 32) == 0);
static_assert(slot_of(FI_ADDR_NOTAVAIL) == kIndexMask);

}  // namespace ufi::runtime::av::encoding
