// The atomic operations (fi_atomic(3)) as the target executes them: every op on every
// datatype libfabric defines it for, applied to elements in memory. ufi executes all atomics
// at the target, under one process-wide lock (atomic_lock()), so that every atomic a process
// serves is atomic with respect to every other (whatever the op, datatype or peer); UCT's
// native atomics are not mixed in (docs/rma.md says why).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace ufi::runtime::proto::atomics {

// Which call family: fi_atomic (the target is updated), fi_fetch_atomic (the old values come
// back too), fi_compare_atomic (the update depends on a compare buffer; old values back).
enum class Kind : uint8_t { kWrite = 0, kFetch = 1, kCompare = 2 };

// Every fi_datatype and fi_op value is below these (1.x and 2.x: 20 datatypes, 20 ops).
inline constexpr unsigned kDatatypeSlots = 32;
inline constexpr unsigned kOpSlots = 32;

// element_size() and valid() as tables (computed at compile time from the rules in
// atomic_ops.cpp): each call checks one of them, on the initiator and at the target.
struct ValidityTables {
    uint8_t size[kDatatypeSlots];
    uint32_t ops[3][kOpSlots];  // [Kind][op]: a bit per datatype
};
extern const ValidityTables kTables;

// Bytes per element of `datatype` (long double: its storage, 16 on x86-64); 0 for a value
// that is no datatype.
inline size_t element_size(int datatype) noexcept {
    return static_cast<unsigned>(datatype) < kDatatypeSlots ? kTables.size[datatype] : 0;
}

// Whether `op` is defined on `datatype` for `kind` (fi_atomicvalid and friends): the integers
// take every op; the real floating-point types (float16, bfloat16 and the float8 types
// included) all but the bitwise ones and FI_MSWAP; the complex types the arithmetic, logical,
// equality-compare and read/write ones only (no order, no bits).
inline bool valid(int op, int datatype, Kind kind) noexcept {
    const auto k = static_cast<unsigned>(kind);
    return k < 3 && static_cast<unsigned>(op) < kOpSlots &&
           static_cast<unsigned>(datatype) < kDatatypeSlots &&
           ((kTables.ops[k][op] >> datatype) & 1u) != 0;
}

// Applies `op` to `count` elements at `target`: `operand` is the call's buffer (unused by
// FI_ATOMIC_READ), `compare` its compare buffer (kCompare), `result` (may be null) receives the
// old values. Operations on integers wrap (two's complement); float16, bfloat16 and the float8
// types are computed in float and rounded to nearest even (float8 E4M3 saturates at +-448, its
// largest finite value). The caller checked valid() and holds atomic_lock().
void apply(int op, int datatype, size_t count, uint8_t *target, const uint8_t *operand,
           const uint8_t *compare, uint8_t *result) noexcept;

// The lock every atomic a process serves is applied under.
std::mutex &atomic_lock() noexcept;

// The most bytes of operand (and as many of compare) one atomic carries; fi_query_atomic's
// count is this over the element size.
inline constexpr size_t kMaxAtomicBytes = 1024;

// The small floating-point formats' conversions (exposed for the tests).
// IEEE binary16 (FI_FLOAT16) in software, round to nearest even: the same results as the
// compilers' _Float16, which clang 14 does not offer on x86-64.
float from_half(uint16_t v) noexcept;
uint16_t to_half(float f) noexcept;
float from_bfloat16(uint16_t v) noexcept;
uint16_t to_bfloat16(float f) noexcept;
float from_float8_e4m3(uint8_t v) noexcept;
uint8_t to_float8_e4m3(float f) noexcept;
float from_float8_e5m2(uint8_t v) noexcept;
uint8_t to_float8_e5m2(float f) noexcept;

}  // namespace ufi::runtime::proto::atomics
