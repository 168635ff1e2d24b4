#include "runtime/proto/atomic_ops.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

namespace ufi::runtime::proto::atomics {

namespace {

__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> || std::is_same_v<T, int128> ||
                               std::is_same_v<T, uint128>;
template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

// Integer arithmetic that wraps: computed unsigned, at least as wide as unsigned int (a
// uint16_t product promoted to int could overflow).
template <typename T>
struct Wide {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
};
template <>
struct Wide<int128> {
    using U = uint128;
};
template <>
struct Wide<uint128> {
    using U = uint128;
};

// Storage codecs: how an element is read into the type it is computed in, and written back.
template <typename T>
struct Plain {
    using V = T;
    static V load(const uint8_t *p) {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    static void store(uint8_t *p, V v) { std::memcpy(p, &v, sizeof v); }
};

struct Float16 {
    using V = float;
    static V load(const uint8_t *p) {
        uint16_t v;
        std::memcpy(&v, p, sizeof v);
        return from_half(v);
    }
    static void store(uint8_t *p, V v) {
        const uint16_t h = to_half(v);
        std::memcpy(p, &h, sizeof h);
    }
};

struct BFloat16 {
    using V = float;
    static V load(const uint8_t *p) {
        uint16_t v;
        std::memcpy(&v, p, sizeof v);
        return from_bfloat16(v);
    }
    static void store(uint8_t *p, V v) {
        const uint16_t b = to_bfloat16(v);
        std::memcpy(p, &b, sizeof b);
    }
};

struct Float8E4M3 {
    using V = float;
    static V load(const uint8_t *p) { return from_float8_e4m3(*p); }
    static void store(uint8_t *p, V v) { *p = to_float8_e4m3(v); }
};

struct Float8E5M2 {
    using V = float;
    static V load(const uint8_t *p) { return from_float8_e5m2(*p); }
    static void store(uint8_t *p, V v) { *p = to_float8_e5m2(v); }
};

template <typename V>
bool truth(const V &v) {
    return v != V(0);
}

template <typename V>
V logical(bool b) {
    return b ? V(1) : V(0);
}

template <typename V>
V add(const V &a, const V &b) {
    if constexpr (kIsInt<V>) {
        using U = typename Wide<V>::U;
        return static_cast<V>(static_cast<U>(a) + static_cast<U>(b));
    } else {
        return a + b;
    }
}

template <typename V>
V sub(const V &a, const V &b) {
    if constexpr (kIsInt<V>) {
        using U = typename Wide<V>::U;
        return static_cast<V>(static_cast<U>(a) - static_cast<U>(b));
    } else {
        return a - b;
    }
}

template <typename V>
V mul(const V &a, const V &b) {
    if constexpr (kIsInt<V>) {
        using U = typename Wide<V>::U;
        return static_cast<V>(static_cast<U>(a) * static_cast<U>(b));
    } else {
        return a * b;
    }
}

// One element: the new value, or false when the op leaves the target as it is.
template <typename V>
bool compute(int op, const V &old, const V &b, const V &cmp, V &out) {
    constexpr bool ordered = !IsComplex<V>::value;
    switch (op) {
        case FI_SUM: out = add(old, b); return true;
        case FI_PROD: out = mul(old, b); return true;
        case FI_DIFF: out = sub(old, b); return true;
        case FI_LOR: out = logical<V>(truth(old) || truth(b)); return true;
        case FI_LAND: out = logical<V>(truth(old) && truth(b)); return true;
        case FI_LXOR: out = logical<V>(truth(old) != truth(b)); return true;
        case FI_ATOMIC_WRITE: out = b; return true;
        case FI_ATOMIC_READ: return false;
        case FI_CSWAP: out = b; return cmp == old;
        case FI_CSWAP_NE: out = b; return cmp != old;
        default: break;
    }
    if constexpr (ordered) {
        switch (op) {
            case FI_MIN: out = b; return b < old;
            case FI_MAX: out = b; return b > old;
            case FI_CSWAP_LE: out = b; return cmp <= old;
            case FI_CSWAP_LT: out = b; return cmp < old;
            case FI_CSWAP_GE: out = b; return cmp >= old;
            case FI_CSWAP_GT: out = b; return cmp > old;
            default: break;
        }
    }
    if constexpr (kIsInt<V>) {
        switch (op) {
            case FI_BOR: out = static_cast<V>(old | b); return true;
            case FI_BAND: out = static_cast<V>(old & b); return true;
            case FI_BXOR: out = static_cast<V>(old ^ b); return true;
            case FI_MSWAP: out = static_cast<V>((b & cmp) | (old & ~cmp)); return true;
            default: break;
        }
    }
    return false;  // valid() refused it
}

template <typename C, size_t Size>
void apply_as(int op, size_t count, uint8_t *target, const uint8_t *operand,
              const uint8_t *compare, uint8_t *result) {
    using V = typename C::V;
    for (size_t i = 0; i < count; ++i) {
        uint8_t *t = target + i * Size;
        if (result != nullptr) std::memcpy(result + i * Size, t, Size);  // the bytes, exactly
        const V old = C::load(t);
        const V b = operand != nullptr ? C::load(operand + i * Size) : V(0);
        const V cmp = compare != nullptr ? C::load(compare + i * Size) : V(0);
        V out{};
        if (compute<V>(op, old, b, cmp, out)) C::store(t, out);
    }
}

enum class Class { kNone, kInt, kReal, kComplex };

constexpr Class class_of(int datatype) {
    switch (datatype) {
        case FI_INT8:
        case FI_UINT8:
        case FI_INT16:
        case FI_UINT16:
        case FI_INT32:
        case FI_UINT32:
        case FI_INT64:
        case FI_UINT64:
        case FI_INT128:
        case FI_UINT128: return Class::kInt;
        case FI_FLOAT:
        case FI_DOUBLE:
        case FI_LONG_DOUBLE:
        case FI_FLOAT16:
        case FI_BFLOAT16:
        case FI_FLOAT8_E4M3:
        case FI_FLOAT8_E5M2: return Class::kReal;
        case FI_FLOAT_COMPLEX:
        case FI_DOUBLE_COMPLEX:
        case FI_LONG_DOUBLE_COMPLEX: return Class::kComplex;
        default: return Class::kNone;
    }
}

// float's bits, and back.
uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

}  // namespace

namespace {

constexpr uint8_t size_rule(int datatype) {
    switch (datatype) {
        case FI_INT8:
        case FI_UINT8:
        case FI_FLOAT8_E4M3:
        case FI_FLOAT8_E5M2: return 1;
        case FI_INT16:
        case FI_UINT16:
        case FI_FLOAT16:
        case FI_BFLOAT16: return 2;
        case FI_INT32:
        case FI_UINT32:
        case FI_FLOAT: return 4;
        case FI_INT64:
        case FI_UINT64:
        case FI_DOUBLE:
        case FI_FLOAT_COMPLEX: return 8;
        case FI_DOUBLE_COMPLEX:
        case FI_INT128:
        case FI_UINT128: return 16;
        case FI_LONG_DOUBLE: return uint8_t{sizeof(long double)};
        case FI_LONG_DOUBLE_COMPLEX: return uint8_t{sizeof(std::complex<long double>)};
        default: return 0;
    }
}

constexpr bool valid_rule(int op, int datatype, Kind kind) {
    const Class c = class_of(datatype);
    if (c == Class::kNone) return false;
    switch (kind) {
        case Kind::kWrite:
            if (op == FI_ATOMIC_READ || (op >= FI_CSWAP && op <= FI_MSWAP)) return false;
            break;
        case Kind::kFetch:
            if (op >= FI_CSWAP && op <= FI_MSWAP) return false;
            break;
        case Kind::kCompare:
            if (op < FI_CSWAP || op > FI_MSWAP) return false;
            break;
    }
    switch (op) {
        case FI_SUM:
        case FI_PROD:
        case FI_DIFF:
        case FI_LOR:
        case FI_LAND:
        case FI_LXOR:
        case FI_ATOMIC_READ:
        case FI_ATOMIC_WRITE:
        case FI_CSWAP:
        case FI_CSWAP_NE: return true;
        case FI_MIN:
        case FI_MAX:
        case FI_CSWAP_LE:
        case FI_CSWAP_LT:
        case FI_CSWAP_GE:
        case FI_CSWAP_GT: return c != Class::kComplex;
        case FI_BOR:
        case FI_BAND:
        case FI_BXOR:
        case FI_MSWAP: return c == Class::kInt;
        default: return false;
    }
}

}  // namespace

// The tables element_size() and valid() read (atomic_ops.h): the rules above, evaluated at
// compile time, so that the data path's checks are a load each instead of two switches.
static_assert(FI_FLOAT8_E5M2 < kDatatypeSlots && FI_DIFF < kOpSlots);

constexpr ValidityTables make_tables() {
    ValidityTables t{};
    for (int d = 0; d < int{kDatatypeSlots}; ++d) {
        t.size[d] = size_rule(d);
        for (int k = 0; k < 3; ++k) {
            for (int op = 0; op < int{kOpSlots}; ++op) {
                if (valid_rule(op, d, static_cast<Kind>(k))) t.ops[k][op] |= uint32_t{1} << d;
            }
        }
    }
    return t;
}
constinit const ValidityTables kTables = make_tables();

void apply(int op, int datatype, size_t count, uint8_t *target, const uint8_t *operand,
           const uint8_t *compare, uint8_t *result) noexcept {
    switch (datatype) {
#define UFI_PLAIN(DT, T)                                                                          \
    case DT: return apply_as<Plain<T>, sizeof(T)>(op, count, target, operand, compare, result);
        UFI_PLAIN(FI_INT8, int8_t)
        UFI_PLAIN(FI_UINT8, uint8_t)
        UFI_PLAIN(FI_INT16, int16_t)
        UFI_PLAIN(FI_UINT16, uint16_t)
        UFI_PLAIN(FI_INT32, int32_t)
        UFI_PLAIN(FI_UINT32, uint32_t)
        UFI_PLAIN(FI_INT64, int64_t)
        UFI_PLAIN(FI_UINT64, uint64_t)
        UFI_PLAIN(FI_INT128, int128)
        UFI_PLAIN(FI_UINT128, uint128)
        UFI_PLAIN(FI_FLOAT, float)
        UFI_PLAIN(FI_DOUBLE, double)
        UFI_PLAIN(FI_LONG_DOUBLE, long double)
        UFI_PLAIN(FI_FLOAT_COMPLEX, std::complex<float>)
        UFI_PLAIN(FI_DOUBLE_COMPLEX, std::complex<double>)
        UFI_PLAIN(FI_LONG_DOUBLE_COMPLEX, std::complex<long double>)
#undef UFI_PLAIN
        case FI_FLOAT16: return apply_as<Float16, 2>(op, count, target, operand, compare, result);
        case FI_BFLOAT16: return apply_as<BFloat16, 2>(op, count, target, operand, compare, result);
        case FI_FLOAT8_E4M3:
            return apply_as<Float8E4M3, 1>(op, count, target, operand, compare, result);
        case FI_FLOAT8_E5M2:
            return apply_as<Float8E5M2, 1>(op, count, target, operand, compare, result);
        default: return;
    }
}

std::mutex &atomic_lock() noexcept {
    static std::mutex lock;
    return lock;
}

float from_bfloat16(uint16_t v) noexcept {
    return float_of(uint32_t{v} << 16);
}

uint16_t to_bfloat16(float f) noexcept {
    const uint32_t u = bits_of(f);
    if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);  // stays a (quiet) NaN
    const uint32_t rounded = u + 0x7FFF + ((u >> 16) & 1);           // to nearest even
    return static_cast<uint16_t>(rounded >> 16);
}

float from_half(uint16_t h) noexcept {
    const uint32_t sign = uint32_t{h & 0x8000u} << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    const uint32_t mant = h & 0x3FFu;
    if (exp == 0x1F) return float_of(sign | 0x7F800000u | (mant << 13));  // inf, NaN
    if (exp == 0) {  // zero, or subnormal: mant * 2^-24, exact in float
        const float v = std::ldexp(static_cast<float>(mant), -24);
        return sign != 0 ? -v : v;
    }
    return float_of(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

uint16_t to_half(float f) noexcept {
    const uint32_t x = bits_of(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t exp = (x >> 23) & 0xFFu;
    uint32_t mant = x & 0x7FFFFFu;
    if (exp == 0xFF) {  // inf stays inf; NaN stays a quiet NaN with its top payload bits
        return static_cast<uint16_t>(sign | 0x7C00u | (mant != 0 ? 0x200u | (mant >> 13) : 0));
    }
    const int e = static_cast<int>(exp) - 127 + 15;  // the half's biased exponent
    if (e >= 0x1F) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow: inf
    // Keeps `keep` (the result's bits) and rounds what `shift` drops to nearest even; a carry
    // into the exponent (or to inf) is the right result.
    const auto round = [](uint32_t keep, uint32_t dropped, uint32_t halfway) {
        return keep + (dropped > halfway || (dropped == halfway && (keep & 1u)) ? 1u : 0u);
    };
    if (e <= 0) {  // a half subnormal (or zero): mant * 2^-24 of the implicit-1 mantissa
        if (e < -10) return static_cast<uint16_t>(sign);  // below half the smallest: zero
        mant |= 0x800000u;
        const unsigned shift = static_cast<unsigned>(14 - e);  // 14..24
        return static_cast<uint16_t>(
            sign | round(mant >> shift, mant & ((1u << shift) - 1), 1u << (shift - 1)));
    }
    return static_cast<uint16_t>(
        sign | round((static_cast<uint32_t>(e) << 10) | (mant >> 13), mant & 0x1FFFu, 0x1000u));
}

float from_float8_e5m2(uint8_t v) noexcept {
    // The top byte of an IEEE half: exact.
    return from_half(static_cast<uint16_t>(v << 8));
}

uint8_t to_float8_e5m2(float f) noexcept {
    const uint16_t h = to_half(f);
    if ((h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0) return static_cast<uint8_t>((h >> 8) | 0x02);
    // To nearest even on the low byte; a carry into the exponent is the right result (up to
    // infinity, as IEEE rounding overflows).
    const uint32_t rounded = h + 0x7Fu + ((h >> 8) & 1u);
    return static_cast<uint8_t>(rounded >> 8);
}

float from_float8_e4m3(uint8_t v) noexcept {
    const bool negative = (v & 0x80) != 0;
    const int exp = (v >> 3) & 0xF;
    const int man = v & 0x7;
    float magnitude;
    if (exp == 0xF && man == 0x7) return std::nanf("");
    if (exp == 0) magnitude = std::ldexp(static_cast<float>(man), -9);  // subnormal: man x 2^-9
    else magnitude = std::ldexp(1.0f + static_cast<float>(man) / 8.0f, exp - 7);
    return negative ? -magnitude : magnitude;
}

uint8_t to_float8_e4m3(float f) noexcept {
    if (std::isnan(f)) return 0x7F;
    const uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
    const float a = std::fabs(f);
    if (a >= 448.0f) return sign | 0x7E;  // saturates at the largest finite value
    if (a < std::ldexp(1.0f, -6)) {
        // Subnormal (or zero): steps of 2^-9, to nearest even; 8 steps is the smallest normal.
        const auto q = static_cast<int>(std::nearbyint(a * 512.0f));
        return static_cast<uint8_t>(sign | q);
    }
    int e = 0;
    const float m = std::frexp(a, &e);  // a = m x 2^e, m in [0.5, 1)
    int exponent = e - 1;
    auto q = static_cast<int>(std::nearbyint((m * 2.0f - 1.0f) * 8.0f));
    if (q == 8) {
        q = 0;
        ++exponent;
    }
    const int biased = exponent + 7;
    if (biased > 15 || (biased == 15 && q == 7)) return sign | 0x7E;
    return static_cast<uint8_t>(sign | (biased << 3) | q);
}

}  // namespace ufi::runtime::proto::atomics
