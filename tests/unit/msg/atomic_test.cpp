// Atomics between two endpoints of one process (fi_atomic(3)), over every transport set of the
// suite: the whole op x datatype matrix for fi_atomic, fi_fetch_atomic and fi_compare_atomic,
// checked against a reference computed here (small integer values, exact in every datatype, so
// the reference needs no rounding); fi_query_atomic and fi_atomicvalid; vectors; two
// endpoints hammering one counter with fetch-add; refused accesses.
#include "msg_fixture.h"

#include "runtime/proto/atomic_ops.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include <sys/mman.h>
#include <unistd.h>

#include <complex>
#include <memory>
#include <set>

namespace ufi::msg_test {
namespace {

namespace atomics = runtime::proto::atomics;

__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

constexpr int kDatatypes[] = {FI_INT8,       FI_UINT8,       FI_INT16,          FI_UINT16,
                              FI_INT32,      FI_UINT32,      FI_INT64,          FI_UINT64,
                              FI_FLOAT,      FI_DOUBLE,      FI_FLOAT_COMPLEX,  FI_DOUBLE_COMPLEX,
                              FI_LONG_DOUBLE, FI_LONG_DOUBLE_COMPLEX, FI_INT128, FI_UINT128,
                              FI_FLOAT16,    FI_BFLOAT16,    FI_FLOAT8_E4M3,    FI_FLOAT8_E5M2};
constexpr int kOps[] = {FI_MIN,        FI_MAX,   FI_SUM,     FI_PROD,    FI_LOR,     FI_LAND,
                        FI_BOR,        FI_BAND,  FI_LXOR,    FI_BXOR,    FI_ATOMIC_READ,
                        FI_ATOMIC_WRITE, FI_CSWAP, FI_CSWAP_NE, FI_CSWAP_LE, FI_CSWAP_LT,
                        FI_CSWAP_GE,   FI_CSWAP_GT, FI_MSWAP, FI_DIFF};

constexpr size_t kCount = 4;
// Target, operand and compare values: small integers, exact in every datatype, and so are the
// results (sums up to 5, products up to 6, differences down to -1).
constexpr int kTarget[kCount] = {1, 2, 3, 4};
constexpr int kOperand[kCount] = {2, 1, 2, 1};
constexpr int kCompare[kCount] = {1, 3, 3, 2};

bool is_int(int dt) {
    return dt <= FI_UINT64 || dt == FI_INT128 || dt == FI_UINT128;
}
bool is_complex(int dt) {
    return dt == FI_FLOAT_COMPLEX || dt == FI_DOUBLE_COMPLEX || dt == FI_LONG_DOUBLE_COMPLEX;
}

// A value in the reference's terms: an integer (ints, computed in int64 then wrapped into the
// type) or a complex double (reals and complexes; imaginary parts 0 for reals).
struct Val {
    int64_t i = 0;
    std::complex<double> c;
};

// Encodes v as `dt` at p.
void encode(int dt, const Val &v, uint8_t *p) {
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
    switch (dt) {
        case FI_INT8: return put(static_cast<int8_t>(v.i));
        case FI_UINT8: return put(static_cast<uint8_t>(v.i));
        case FI_INT16: return put(static_cast<int16_t>(v.i));
        case FI_UINT16: return put(static_cast<uint16_t>(v.i));
        case FI_INT32: return put(static_cast<int32_t>(v.i));
        case FI_UINT32: return put(static_cast<uint32_t>(v.i));
        case FI_INT64: return put(static_cast<int64_t>(v.i));
        case FI_UINT64: return put(static_cast<uint64_t>(v.i));
        case FI_INT128: return put(static_cast<int128>(v.i));
        case FI_UINT128: return put(static_cast<uint128>(v.i));
        case FI_FLOAT: return put(static_cast<float>(v.c.real()));
        case FI_DOUBLE: return put(v.c.real());
        case FI_LONG_DOUBLE: {
            std::memset(p, 0, sizeof(long double));
            return put(static_cast<long double>(v.c.real()));
        }
        case FI_FLOAT_COMPLEX: return put(std::complex<float>(v.c));
        case FI_DOUBLE_COMPLEX: return put(v.c);
        case FI_LONG_DOUBLE_COMPLEX: {
            std::memset(p, 0, sizeof(std::complex<long double>));
            return put(std::complex<long double>(v.c.real(), v.c.imag()));
        }
        case FI_FLOAT16: return put(static_cast<_Float16>(static_cast<float>(v.c.real())));
        case FI_BFLOAT16: return put(atomics::to_bfloat16(static_cast<float>(v.c.real())));
        case FI_FLOAT8_E4M3: return put(atomics::to_float8_e4m3(static_cast<float>(v.c.real())));
        case FI_FLOAT8_E5M2: return put(atomics::to_float8_e5m2(static_cast<float>(v.c.real())));
        default: return;
    }
}

// The value at p (long double's padding ignored).
std::complex<double> decode(int dt, const uint8_t *p) {
    auto get = [&](auto x) {
        std::memcpy(&x, p, sizeof x);
        return x;
    };
    switch (dt) {
        case FI_LONG_DOUBLE: return double(get((long double)0));
        case FI_LONG_DOUBLE_COMPLEX: {
            const auto v = get(std::complex<long double>());
            return {double(v.real()), double(v.imag())};
        }
        default: return {};
    }
}

Val reference_value(int dt, int x) {
    Val v;
    v.i = x;
    v.c = is_complex(dt) ? std::complex<double>(x, 1) : std::complex<double>(x, 0);
    return v;
}

// What op does to one element (libfabric's definitions, fi_atomic(3)); false: no update.
bool reference(int dt, int op, const Val &t, const Val &o, const Val &c, Val &out) {
    const bool integer = is_int(dt);
    auto truth = [&](const Val &v) { return integer ? v.i != 0 : v.c != 0.0; };
    auto logical = [&](bool b) {  // 1 or 0 (a complex one: real part only)
        Val v;
        v.i = b ? 1 : 0;
        v.c = b ? 1.0 : 0.0;
        return v;
    };
    auto less = [&](const Val &a, const Val &b) { return integer ? a.i < b.i : a.c.real() < b.c.real(); };
    auto equal = [&](const Val &a, const Val &b) { return integer ? a.i == b.i : a.c == b.c; };
    out = o;
    switch (op) {
        case FI_MIN: return less(o, t);
        case FI_MAX: return less(t, o);
        case FI_SUM: out.i = t.i + o.i; out.c = t.c + o.c; return true;
        case FI_PROD: out.i = t.i * o.i; out.c = t.c * o.c; return true;
        case FI_DIFF: out.i = t.i - o.i; out.c = t.c - o.c; return true;
        case FI_LOR: out = logical(truth(t) || truth(o)); return true;
        case FI_LAND: out = logical(truth(t) && truth(o)); return true;
        case FI_LXOR: out = logical(truth(t) != truth(o)); return true;
        case FI_BOR: out.i = t.i | o.i; return true;
        case FI_BAND: out.i = t.i & o.i; return true;
        case FI_BXOR: out.i = t.i ^ o.i; return true;
        case FI_MSWAP: out.i = (o.i & c.i) | (t.i & ~c.i); return true;
        case FI_ATOMIC_READ: return false;
        case FI_ATOMIC_WRITE: return true;
        case FI_CSWAP: return equal(c, t);
        case FI_CSWAP_NE: return !equal(c, t);
        case FI_CSWAP_LE: return !less(t, c);
        case FI_CSWAP_LT: return less(c, t);
        case FI_CSWAP_GE: return !less(c, t);
        case FI_CSWAP_GT: return less(t, c);
        default: return false;
    }
}

// Whether the bytes at a and b hold the same value of dt.
bool same_value(int dt, const uint8_t *a, const uint8_t *b) {
    if (dt == FI_LONG_DOUBLE || dt == FI_LONG_DOUBLE_COMPLEX) return decode(dt, a) == decode(dt, b);
    return std::memcmp(a, b, atomics::element_size(dt)) == 0;
}

class AtomicTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *h) override { h->caps |= FI_ATOMIC | FI_RMA; }
    void TearDown() override {
        for (fid_mr *mr : mrs_) EXPECT_EQ(fi_close(&mr->fid), 0);
        mrs_.clear();
        MsgTest::TearDown();
    }
    fid_mr *reg(void *buf, size_t len, uint64_t access) {
        fid_mr *mr = nullptr;
        EXPECT_EQ(fi_mr_reg(domain_, buf, len, access, 0, next_key_++, 0, &mr, nullptr), 0);
        if (mr != nullptr) mrs_.push_back(mr);
        return mr;
    }
    uint64_t addr(const void *base, const void *at) const {
        const bool virt = (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
        return virt ? reinterpret_cast<uint64_t>(at)
                    : static_cast<uint64_t>(static_cast<const uint8_t *>(at) -
                                            static_cast<const uint8_t *>(base));
    }
    // A's completion: success with `flags`, or the error number (0 for success).
    int done(uint64_t flags) {
        fi_cq_tagged_entry e{};
        const ssize_t rc = wait(a_.cq, e);
        if (rc == -FI_EAVAIL) return error(a_.cq).err;
        EXPECT_EQ(rc, 1);
        EXPECT_EQ(e.flags, flags);
        return 0;
    }
    std::vector<fid_mr *> mrs_;
    uint64_t next_key_ = 0x7000;
};

TEST_F(AtomicTest, OffersAtomicsAndAnswersQueries) {
    EXPECT_NE(info_->caps & FI_ATOMIC, 0u);
    for (int dt : kDatatypes) {
        for (int op : kOps) {
            for (uint64_t flags : {uint64_t{0}, uint64_t{FI_FETCH_ATOMIC}, uint64_t{FI_COMPARE_ATOMIC}}) {
                fi_atomic_attr attr{};
                const auto kind = flags == 0                 ? atomics::Kind::kWrite
                                  : flags == FI_FETCH_ATOMIC ? atomics::Kind::kFetch
                                                             : atomics::Kind::kCompare;
                const int rc = fi_query_atomic(domain_, static_cast<fi_datatype>(dt),
                                               static_cast<fi_op>(op), &attr, flags);
                if (atomics::valid(op, dt, kind)) {
                    ASSERT_EQ(rc, 0) << dt << " " << op;
                    EXPECT_EQ(attr.size, atomics::element_size(dt));
                    EXPECT_GE(attr.count, 1u);
                } else {
                    EXPECT_EQ(rc, -FI_EOPNOTSUPP) << dt << " " << op << " " << flags;
                }
            }
        }
    }
    // Spot checks of the rules: bits only on integers, order not on complex numbers.
    size_t count = 0;
    EXPECT_EQ(fi_atomicvalid(a_.ep, FI_UINT64, FI_BXOR, &count), 0);
    EXPECT_EQ(fi_atomicvalid(a_.ep, FI_DOUBLE, FI_BXOR, &count), -FI_EOPNOTSUPP);
    EXPECT_EQ(fi_atomicvalid(a_.ep, FI_DOUBLE_COMPLEX, FI_MAX, &count), -FI_EOPNOTSUPP);
    EXPECT_EQ(fi_atomicvalid(a_.ep, FI_FLOAT16, FI_SUM, &count), 0);
    EXPECT_EQ(fi_fetch_atomicvalid(a_.ep, FI_INT32, FI_ATOMIC_READ, &count), 0);
    EXPECT_EQ(fi_atomicvalid(a_.ep, FI_INT32, FI_ATOMIC_READ, &count), -FI_EOPNOTSUPP);
    EXPECT_EQ(fi_compare_atomicvalid(a_.ep, FI_UINT128, FI_MSWAP, &count), 0);
    EXPECT_EQ(fi_compare_atomicvalid(a_.ep, FI_UINT128, FI_SUM, &count), -FI_EOPNOTSUPP);
    fi_atomic_attr attr{};
    EXPECT_EQ(fi_query_atomic(domain_, FI_INT8, FI_SUM, &attr, FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC),
              -FI_EINVAL);
}

TEST_F(AtomicTest, EveryOpOnEveryDatatypeMatchesTheReference) {
    alignas(16) uint8_t target[kCount * 32];
    fid_mr *mr = reg(target, sizeof target, FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    size_t checked = 0;
    for (int dt : kDatatypes) {
        const size_t size = atomics::element_size(dt);
        ASSERT_GT(size, 0u);
        for (int op : kOps) {
            for (auto kind : {atomics::Kind::kWrite, atomics::Kind::kFetch, atomics::Kind::kCompare}) {
                if (!atomics::valid(op, dt, kind)) continue;
                SCOPED_TRACE("datatype " + std::to_string(dt) + " op " + std::to_string(op) +
                             " kind " + std::to_string(int(kind)));
                alignas(16) uint8_t operand[kCount * 32], compare[kCount * 32],
                    result[kCount * 32], want[kCount * 32], old[kCount * 32];
                std::memset(result, 0xCD, sizeof result);
                for (size_t i = 0; i < kCount; ++i) {
                    const Val t = reference_value(dt, kTarget[i]);
                    const Val o = reference_value(dt, kOperand[i]);
                    const Val c = reference_value(dt, kCompare[i]);
                    encode(dt, t, target + i * size);
                    encode(dt, t, old + i * size);
                    encode(dt, o, operand + i * size);
                    encode(dt, c, compare + i * size);
                    Val out;
                    encode(dt, reference(dt, op, t, o, c, out) ? out : t, want + i * size);
                }
                const auto fdt = static_cast<fi_datatype>(dt);
                const auto fop = static_cast<fi_op>(op);
                const uint64_t at = addr(target, target);
                const uint64_t key = fi_mr_key(mr);
                ssize_t rc;
                if (kind == atomics::Kind::kWrite) {
                    rc = retry([&] { return fi_atomic(a_.ep, operand, kCount, nullptr, a_to_b_, at, key, fdt, fop, nullptr); });
                } else if (kind == atomics::Kind::kFetch) {
                    rc = retry([&] {
                        return fi_fetch_atomic(a_.ep, operand, kCount, nullptr, result, nullptr,
                                               a_to_b_, at, key, fdt, fop, nullptr);
                    });
                } else {
                    rc = retry([&] {
                        return fi_compare_atomic(a_.ep, operand, kCount, nullptr, compare, nullptr,
                                                 result, nullptr, a_to_b_, at, key, fdt, fop, nullptr);
                    });
                }
                ASSERT_EQ(rc, 0);
                ASSERT_EQ(done(FI_ATOMIC | (kind == atomics::Kind::kWrite ? FI_WRITE : FI_READ)), 0);
                for (size_t i = 0; i < kCount; ++i) {
                    EXPECT_TRUE(same_value(dt, target + i * size, want + i * size)) << "element " << i;
                    if (kind != atomics::Kind::kWrite) {
                        EXPECT_TRUE(same_value(dt, result + i * size, old + i * size))
                            << "old value of element " << i;
                    }
                }
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 300u) << "the matrix";
}

TEST_F(AtomicTest, VectorsAndSeveralTargetRanges) {
    uint64_t target[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    fid_mr *mr = reg(target, sizeof target, FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    uint64_t add1[2] = {10, 20}, add2[1] = {30};
    fi_ioc iov[2] = {{add1, 2}, {add2, 1}};
    fi_rma_ioc rma[2] = {{addr(target, &target[1]), 1, fi_mr_key(mr)},
                         {addr(target, &target[5]), 2, fi_mr_key(mr)}};
    uint64_t r1[1], r2[2];
    fi_ioc res[2] = {{r1, 1}, {r2, 2}};
    fi_msg_atomic msg{};
    msg.msg_iov = iov;
    msg.iov_count = 2;
    msg.addr = a_to_b_;
    msg.rma_iov = rma;
    msg.rma_iov_count = 2;
    msg.datatype = FI_UINT64;
    msg.op = FI_SUM;
    ASSERT_EQ(retry([&] { return fi_fetch_atomicmsg(a_.ep, &msg, res, nullptr, 2, FI_COMPLETION); }), 0);
    ASSERT_EQ(done(FI_ATOMIC | FI_READ), 0);
    EXPECT_EQ(target[1], 12u);
    EXPECT_EQ(target[5], 26u);
    EXPECT_EQ(target[6], 37u);
    EXPECT_EQ(r1[0], 2u);
    EXPECT_EQ(r2[0], 6u);
    EXPECT_EQ(r2[1], 7u);
    // fi_atomicv into one range, fi_inject_atomic.
    ASSERT_EQ(retry([&] {
                  return fi_atomicv(a_.ep, iov, nullptr, 2, a_to_b_, addr(target, &target[0]),
                                    fi_mr_key(mr), FI_UINT64, FI_ATOMIC_WRITE, nullptr);
              }),
              0);
    ASSERT_EQ(done(FI_ATOMIC | FI_WRITE), 0);
    EXPECT_EQ(target[0], 10u);
    EXPECT_EQ(target[1], 20u);
    EXPECT_EQ(target[2], 30u);
    const uint64_t one = 1;
    ASSERT_EQ(retry([&] {
                  return fi_inject_atomic(a_.ep, &one, 1, a_to_b_, addr(target, &target[7]),
                                          fi_mr_key(mr), FI_UINT64, FI_SUM);
              }),
              0);
    // No completion; a fetch behind it sees it (a peer's operations are handled in order).
    uint64_t seen = 0;
    ASSERT_EQ(retry([&] {
                  return fi_fetch_atomic(a_.ep, nullptr, 1, nullptr, &seen, nullptr, a_to_b_,
                                         addr(target, &target[7]), fi_mr_key(mr), FI_UINT64,
                                         FI_ATOMIC_READ, nullptr);
              }),
              0);
    ASSERT_EQ(done(FI_ATOMIC | FI_READ), 0);
    EXPECT_EQ(seen, 9u);
}

TEST_F(AtomicTest, TwoEndpointsFetchAddOneCounterWithoutLosingAny) {
    uint64_t counter = 0;
    fid_mr *mr = reg(&counter, sizeof counter, FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    // A and a third endpoint C both add to B's counter.
    open_side(c_);
    const fi_addr_t c_to_b = insert(c_, b_.name);
    constexpr int kEach = 500;
    std::set<uint64_t> seen;
    const uint64_t one = 1;
    for (int i = 0; i < kEach; ++i) {
        uint64_t got_a = 0, got_b = 0;
        ASSERT_EQ(retry([&] {
                      return fi_fetch_atomic(a_.ep, &one, 1, nullptr, &got_a, nullptr, a_to_b_,
                                             addr(&counter, &counter), fi_mr_key(mr), FI_UINT64,
                                             FI_SUM, nullptr);
                  }),
                  0);
        ASSERT_EQ(retry([&] {
                      return fi_fetch_atomic(c_.ep, &one, 1, nullptr, &got_b, nullptr, c_to_b,
                                             addr(&counter, &counter), fi_mr_key(mr), FI_UINT64,
                                             FI_SUM, nullptr);
                  }),
                  0);
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(a_.cq, e), 1);
        ASSERT_EQ(wait(c_.cq, e), 1);
        EXPECT_TRUE(seen.insert(got_a).second) << got_a;
        EXPECT_TRUE(seen.insert(got_b).second) << got_b;
    }
    EXPECT_EQ(counter, uint64_t{2 * kEach});
    EXPECT_EQ(*seen.rbegin(), uint64_t{2 * kEach - 1});
    for (fid_mr *m : mrs_) EXPECT_EQ(fi_close(&m->fid), 0);
    mrs_.clear();
    close_side(c_);
}

TEST_F(AtomicTest, RefusedAndMalformedAtomics) {
    uint64_t ro = 7, wo = 9;
    fid_mr *mro = reg(&ro, sizeof ro, FI_REMOTE_READ);
    fid_mr *mwo = reg(&wo, sizeof wo, FI_REMOTE_WRITE);
    ASSERT_TRUE(mro && mwo);
    const uint64_t one = 1;
    uint64_t got = 0;
    ASSERT_EQ(retry([&] {
                  return fi_atomic(a_.ep, &one, 1, nullptr, a_to_b_, addr(&ro, &ro), fi_mr_key(mro),
                                   FI_UINT64, FI_SUM, nullptr);
              }),
              0);
    EXPECT_EQ(done(0), FI_EACCES) << "no FI_REMOTE_WRITE";
    ASSERT_EQ(retry([&] {
                  return fi_fetch_atomic(a_.ep, &one, 1, nullptr, &got, nullptr, a_to_b_,
                                         addr(&wo, &wo), fi_mr_key(mwo), FI_UINT64, FI_SUM, nullptr);
              }),
              0);
    EXPECT_EQ(done(0), FI_EACCES) << "fetching needs FI_REMOTE_READ";
    ASSERT_EQ(retry([&] {
                  return fi_atomic(a_.ep, &one, 1, nullptr, a_to_b_, addr(&wo, &wo) + 4,
                                   fi_mr_key(mwo), FI_UINT64, FI_SUM, nullptr);
              }),
              0);
    EXPECT_EQ(done(0), FI_EACCES) << "beyond the region";
    EXPECT_EQ(ro, 7u);
    EXPECT_EQ(wo, 9u);
    // Caught at the call.
    EXPECT_EQ(fi_atomic(a_.ep, &one, 1, nullptr, a_to_b_, 0, fi_mr_key(mwo), FI_DOUBLE, FI_BOR,
                        nullptr),
              -FI_EOPNOTSUPP);
    std::vector<uint64_t> many(atomics::kMaxAtomicBytes / 8 + 1);
    EXPECT_EQ(fi_atomic(a_.ep, many.data(), many.size(), nullptr, a_to_b_, 0, fi_mr_key(mwo),
                        FI_UINT64, FI_SUM, nullptr),
              -FI_EINVAL);
    EXPECT_EQ(fi_atomic(a_.ep, &one, 0, nullptr, a_to_b_, 0, fi_mr_key(mwo), FI_UINT64, FI_SUM,
                        nullptr),
              -FI_EINVAL);
    EXPECT_EQ(fi_atomic(a_.ep, &one, 1, nullptr, a_to_b_, 0, fi_mr_key(mwo),
                        static_cast<fi_datatype>(99), FI_SUM, nullptr),
              -FI_EINVAL);
    fi_msg_atomic msg{};
    EXPECT_EQ(fi_atomicmsg(a_.ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
}

// Atomics on a region registered from NULL (the address space: docs/memory-keys.md) reach
// any word the target maps, by its virtual address; a word it does not map, or maps
// read-only for a write, fails with FI_EFAULT and is left as it was.
TEST_F(AtomicTest, AddressSpaceRegionFromNull) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(domain_, nullptr, UINTPTR_MAX, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                        next_key_++, 0, &mr, nullptr),
              0);
    mrs_.push_back(mr);
    const uint64_t key = fi_mr_key(mr);
    auto at = [](const void *p) { return reinterpret_cast<uint64_t>(p); };
    auto counter = std::make_unique<uint64_t[]>(4);
    counter[1] = 40;
    const uint64_t two = 2;
    uint64_t got = 0;
    ASSERT_EQ(retry([&] {
                  return fi_fetch_atomic(a_.ep, &two, 1, nullptr, &got, nullptr, a_to_b_,
                                         at(&counter[1]), key, FI_UINT64, FI_SUM, nullptr);
              }),
              0);
    EXPECT_EQ(done(FI_ATOMIC | FI_READ), 0);
    EXPECT_EQ(got, 40u);
    EXPECT_EQ(counter[1], 42u);
    const uint64_t expect = 42, swap = 7;
    ASSERT_EQ(retry([&] {
                  return fi_compare_atomic(a_.ep, &swap, 1, nullptr, &expect, nullptr, &got,
                                           nullptr, a_to_b_, at(&counter[1]), key, FI_UINT64,
                                           FI_CSWAP, nullptr);
              }),
              0);
    EXPECT_EQ(done(FI_ATOMIC | FI_READ), 0);
    EXPECT_EQ(counter[1], 7u);
    EXPECT_EQ(counter[0], 0u);
    EXPECT_EQ(counter[2], 0u);

    const size_t page = static_cast<size_t>(getpagesize());
    auto *ro = static_cast<uint64_t *>(
        mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(ro, MAP_FAILED);
    *ro = 5;
    ASSERT_EQ(mprotect(ro, page, PROT_READ), 0);
    auto *hole = static_cast<uint64_t *>(
        mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(hole, MAP_FAILED);
    ASSERT_EQ(munmap(hole, page), 0);
    ASSERT_EQ(retry([&] {
                  return fi_atomic(a_.ep, &two, 1, nullptr, a_to_b_, at(ro), key, FI_UINT64,
                                   FI_SUM, nullptr);
              }),
              0);
    EXPECT_EQ(done(0), FI_EFAULT) << "a read-only word";
    ASSERT_EQ(retry([&] {
                  return fi_fetch_atomic(a_.ep, &two, 1, nullptr, &got, nullptr, a_to_b_, at(ro),
                                         key, FI_UINT64, FI_ATOMIC_READ, nullptr);
              }),
              0);
    EXPECT_EQ(done(FI_ATOMIC | FI_READ), 0) << "reading it is fine";
    EXPECT_EQ(got, 5u);
    ASSERT_EQ(retry([&] {
                  return fi_fetch_atomic(a_.ep, &two, 1, nullptr, &got, nullptr, a_to_b_,
                                         at(hole), key, FI_UINT64, FI_SUM, nullptr);
              }),
              0);
    EXPECT_EQ(done(0), FI_EFAULT) << "a word nothing maps";
    EXPECT_EQ(*ro, 5u);
    EXPECT_EQ(munmap(ro, page), 0);
}

// Counts whose byte size wraps (2^61 + 1 elements of 8 bytes "are" 8 bytes) and target ranges
// past the end of the address space are refused at the call; nothing is sent.
TEST_F(AtomicTest, CountsThatOverflowAreRefusedAtTheCall) {
    uint64_t target = 9;
    fid_mr *mr = reg(&target, sizeof target, FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    const uint64_t one = 1;
    uint64_t got = 0, cmp = 9;
    fi_ioc operand{const_cast<uint64_t *>(&one), 1}, result{&got, 1}, compare{&cmp, 1};
    fi_rma_ioc remote{addr(&target, &target), (1ULL << 61) + 1, fi_mr_key(mr)};
    fi_msg_atomic msg{};
    msg.msg_iov = &operand;
    msg.iov_count = 1;
    msg.addr = a_to_b_;
    msg.rma_iov = &remote;
    msg.rma_iov_count = 1;
    msg.datatype = FI_UINT64;
    msg.op = FI_SUM;
    EXPECT_EQ(fi_atomicmsg(a_.ep, &msg, 0), -FI_EINVAL);
    EXPECT_EQ(fi_fetch_atomicmsg(a_.ep, &msg, &result, nullptr, 1, 0), -FI_EINVAL);
    msg.op = FI_CSWAP;
    EXPECT_EQ(fi_compare_atomicmsg(a_.ep, &msg, &compare, nullptr, 1, &result, nullptr, 1, 0),
              -FI_EINVAL);
    msg.op = FI_SUM;
    remote = {UINT64_MAX - 3, 1, fi_mr_key(mr)};  // 8 bytes from 4 before the end
    EXPECT_EQ(fi_atomicmsg(a_.ep, &msg, 0), -FI_EINVAL);
    EXPECT_TRUE(quiet(a_.cq));
    EXPECT_EQ(target, 9u);
    EXPECT_EQ(got, 0u);
}

// FI_INJECT on fi_atomicmsg, fi_fetch_atomicmsg and fi_compare_atomicmsg still writes a
// completion (the fetching ones' only word that the result is there); fi_inject_atomic
// writes none.
TEST_F(AtomicTest, InjectFlagOnMsgCallsStillCompletes) {
    uint64_t target = 10;
    fid_mr *mr = reg(&target, sizeof target, FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    uint64_t operand_v = 5, got = 0, cmp = 0;
    fi_ioc operand{&operand_v, 1}, result{&got, 1}, compare{&cmp, 1};
    fi_rma_ioc remote{addr(&target, &target), 1, fi_mr_key(mr)};
    int ctx = 0;
    fi_msg_atomic msg{};
    msg.msg_iov = &operand;
    msg.iov_count = 1;
    msg.addr = a_to_b_;
    msg.rma_iov = &remote;
    msg.rma_iov_count = 1;
    msg.datatype = FI_UINT64;
    msg.op = FI_SUM;
    msg.context = &ctx;
    auto expect_done = [&](uint64_t flags) {
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(a_.cq, e), 1);
        EXPECT_EQ(e.op_context, &ctx);
        EXPECT_EQ(e.flags, flags);
    };
    ASSERT_EQ(retry([&] { return fi_atomicmsg(a_.ep, &msg, FI_INJECT); }), 0);
    operand_v = 0;  // reusable at once
    expect_done(FI_ATOMIC | FI_WRITE);
    EXPECT_EQ(target, 15u);
    operand_v = 2;
    ASSERT_EQ(retry([&] { return fi_fetch_atomicmsg(a_.ep, &msg, &result, nullptr, 1, FI_INJECT); }), 0);
    expect_done(FI_ATOMIC | FI_READ);
    EXPECT_EQ(got, 15u) << "the result is there when the completion is";
    EXPECT_EQ(target, 17u);
    msg.op = FI_CSWAP;
    operand_v = 100;
    cmp = 17;
    ASSERT_EQ(retry([&] {
                  return fi_compare_atomicmsg(a_.ep, &msg, &compare, nullptr, 1, &result, nullptr,
                                              1, FI_INJECT);
              }),
              0);
    expect_done(FI_ATOMIC | FI_READ);
    EXPECT_EQ(got, 17u);
    EXPECT_EQ(target, 100u);
    const uint64_t add = 1;
    ASSERT_EQ(retry([&] {
                  return fi_inject_atomic(a_.ep, &add, 1, a_to_b_, addr(&target, &target),
                                          fi_mr_key(mr), FI_UINT64, FI_SUM);
              }),
              0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (__atomic_load_n(&target, __ATOMIC_ACQUIRE) != 101 &&
           std::chrono::steady_clock::now() < deadline) {
        progress_all();
    }
    EXPECT_EQ(target, 101u);
    EXPECT_TRUE(quiet(a_.cq));
}

// The checks are tables indexed by the values an application passes: values outside the enums
// (negative, between the last one and the table's end, far beyond it) are no datatype and no
// op, and never index past the tables.
TEST(AtomicFormats, ValuesOutsideTheEnumsAreNoDatatypeAndNoOp) {
    for (int dt : {-1, FI_FLOAT8_E5M2 + 1, 31, 32, 1000, INT32_MIN}) {
        EXPECT_EQ(atomics::element_size(dt), 0u) << dt;
        EXPECT_FALSE(atomics::valid(FI_SUM, dt, atomics::Kind::kWrite)) << dt;
    }
    for (int op : {-1, FI_DIFF + 1, 31, 32, 1000, INT32_MIN}) {
        EXPECT_FALSE(atomics::valid(op, FI_UINT64, atomics::Kind::kFetch)) << op;
    }
    EXPECT_FALSE(atomics::valid(FI_SUM, FI_UINT64, static_cast<atomics::Kind>(3)));
    EXPECT_TRUE(atomics::valid(FI_SUM, FI_UINT64, atomics::Kind::kFetch));
    EXPECT_EQ(atomics::element_size(FI_LONG_DOUBLE_COMPLEX), sizeof(std::complex<long double>));
}

// FI_FLOAT16 in software (atomics::from_half / to_half) against the compiler's _Float16,
// where it has one: every half, and a million floats spread over every exponent plus each
// half's neighbours and the midpoints between halves (the ties).
TEST(AtomicFormats, HalfMatchesTheCompilersFloat16) {
#ifdef __FLT16_MANT_DIG__
    const auto bits16 = [](_Float16 h) {
        uint16_t b;
        std::memcpy(&b, &h, sizeof b);
        return b;
    };
    const auto check_to = [&](float f) {
        const uint16_t want = bits16(static_cast<_Float16>(f));
        const uint16_t got = atomics::to_half(f);
        if (std::isnan(f)) {
            EXPECT_TRUE((got & 0x7C00) == 0x7C00 && (got & 0x3FF) != 0) << "NaN stays NaN";
        } else {
            ASSERT_EQ(got, want) << "to_half(" << f << ")";
        }
    };
    for (uint32_t b = 0; b < 0x10000; ++b) {
        _Float16 h;
        const auto b16 = static_cast<uint16_t>(b);
        std::memcpy(&h, &b16, sizeof h);
        const float want = static_cast<float>(h), got = atomics::from_half(b16);
        if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << b;
            continue;
        }
        ASSERT_EQ(std::memcmp(&want, &got, sizeof got), 0) << "from_half(" << b << ")";
        check_to(want);
        check_to(std::nextafter(want, INFINITY));
        check_to(std::nextafter(want, -INFINITY));
        if (b16 != 0x7BFF && b16 != 0xFBFF && (b16 & 0x7C00) != 0x7C00) {
            _Float16 next;
            const auto nb = static_cast<uint16_t>(b16 + 1);
            std::memcpy(&next, &nb, sizeof next);
            check_to((want + static_cast<float>(next)) / 2);  // the tie (exact in float)
        }
    }
    for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093) {
        float f;
        const auto u32 = static_cast<uint32_t>(u);
        std::memcpy(&f, &u32, sizeof f);
        check_to(f);
    }
#else
    GTEST_SKIP() << "this compiler has no _Float16 to compare with";
#endif
}

// The small floating-point formats' conversions, on known bit patterns.
TEST(AtomicFormats, SmallFloatConversions) {
    EXPECT_EQ(atomics::to_bfloat16(1.0f), 0x3F80);
    EXPECT_EQ(atomics::from_bfloat16(0xC000), -2.0f);
    EXPECT_EQ(atomics::to_bfloat16(1.00390625f), 0x3F80) << "ties to even (down)";
    EXPECT_EQ(atomics::to_bfloat16(1.01171875f), 0x3F82) << "ties to even (up)";
    EXPECT_EQ(atomics::to_float8_e4m3(1.0f), 0x38);
    EXPECT_EQ(atomics::to_float8_e4m3(448.0f), 0x7E);
    EXPECT_EQ(atomics::to_float8_e4m3(1e6f), 0x7E) << "saturates";
    EXPECT_EQ(atomics::to_float8_e4m3(-0.5f), 0xB0);
    EXPECT_EQ(atomics::to_float8_e4m3(std::ldexp(1.0f, -9)), 0x01) << "smallest subnormal";
    EXPECT_EQ(atomics::from_float8_e4m3(0x7E), 448.0f);
    EXPECT_TRUE(std::isnan(atomics::from_float8_e4m3(0x7F)));
    EXPECT_EQ(atomics::from_float8_e4m3(0x01), std::ldexp(1.0f, -9));
    EXPECT_EQ(atomics::to_float8_e5m2(1.0f), 0x3C);
    EXPECT_EQ(atomics::to_float8_e5m2(-3.0f), 0xC2);
    EXPECT_EQ(atomics::from_float8_e5m2(0x7B), 57344.0f) << "largest finite";
    EXPECT_TRUE(std::isinf(atomics::from_float8_e5m2(0x7C)));
    for (int b = 0; b < 256; ++b) {
        const float f = atomics::from_float8_e4m3(static_cast<uint8_t>(b));
        if (!std::isnan(f)) {
            EXPECT_EQ(atomics::to_float8_e4m3(f), b) << "e4m3 round trip " << b;
        }
        const float g = atomics::from_float8_e5m2(static_cast<uint8_t>(b));
        if (!std::isnan(g)) {
            EXPECT_EQ(atomics::to_float8_e5m2(g), b) << "e5m2 round trip " << b;
        }
    }
}

}  // namespace
}  // namespace ufi::msg_test
