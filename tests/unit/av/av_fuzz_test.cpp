// Fuzzing the AV calls: random bytes and mutated valid addresses as addresses, random flags,
// random fi_addr_t values, in both address formats. Every call must return a documented
// result (a count or a negative fi errno) and never crash; ASan/UBSan builds run it too.
// Seeded: a failure reproduces with the printed seed (UFI_AV_FUZZ_SEED is not read: the
// seed is fixed per run, so CI is deterministic).
#include "av_fixture.h"

#include "runtime/av/av.h"
#include "runtime/av/binding.h"
#include "base/log/log.h"

#include <climits>
#include <random>

namespace ufi::av_test {
namespace {

constexpr int kIterations = 6000;

class AvFuzzTest : public AvTest {
  protected:
    void SetUp() override {
        saved_ = log::level();
        log::set_level(log::Level::Error);  // the fuzzer provokes thousands of WARN lines
    }
    void TearDown() override {
        AvTest::TearDown();
        log::set_level(saved_);
    }

    // A random address: random bytes, or a valid one with a few bytes changed, or a valid one.
    std::vector<uint8_t> random_blob() {
        std::vector<uint8_t> b;
        switch (rng_() % 4) {
            case 0: {
                b.resize(rng_() % 120);
                for (auto &x : b) x = static_cast<uint8_t>(rng_());
                if (b.size() >= 3 && rng_() % 2) {  // a plausible header
                    b[0] = 'u';
                    b[1] = 'f';
                    b[2] = 1;
                }
                break;
            }
            case 1:
            case 2: {
                b = make_blob(rng_() % 1000, 1 + static_cast<int>(rng_() % 5));
                const int flips = 1 + static_cast<int>(rng_() % 3);
                for (int i = 0; i < flips; ++i) b[rng_() % b.size()] = static_cast<uint8_t>(rng_());
                if (rng_() % 4 == 0) b.resize(rng_() % b.size());
                break;
            }
            default:
                b = make_blob(rng_() % 1000, 1 + static_cast<int>(rng_() % 4));
        }
        return b;
    }

    uint64_t random_flags() {
        static const uint64_t bits[] = {
            FI_MORE, FI_SYNC_ERR, FI_AV_USER_ID, FI_AUTH_KEY, FI_FIREWALL_ADDR,
            FI_READ, FI_XPU,      FI_EVENT,      1ULL << 63,  0};
        uint64_t f = 0;
        const int n = static_cast<int>(rng_() % 3);
        for (int i = 0; i < n; ++i) f |= bits[rng_() % (sizeof bits / sizeof bits[0])];
        return f;
    }

    fi_addr_t random_addr() {
        switch (rng_() % 5) {
            case 0:
                return rng_() % 64;
            case 1:
                return FI_ADDR_NOTAVAIL;
            case 2:
                return (1ULL << 31) | (rng_() % 8);
            case 3:
                return (static_cast<uint64_t>(rng_()) << 32) | (rng_() % 64);
            default:
                return static_cast<uint64_t>(rng_()) << 1 | (rng_() & 1);
        }
    }

    static bool documented_insert(int rc, size_t count) {
        return (rc >= 0 && static_cast<size_t>(rc) <= count) || rc == -FI_EINVAL ||
               rc == -FI_EBADFLAGS || rc == -FI_EACCES || rc == -FI_ENOEQ;
    }

    void fuzz(fid_av *av, bool str) {
        std::vector<uint8_t> buf(4096);
        for (int it = 0; it < kIterations; ++it) {
            const size_t count = 1 + rng_() % 4;
            std::vector<std::vector<uint8_t>> blobs;
            std::vector<uint8_t> laid;
            std::vector<std::string> strs;
            std::vector<const char *> ptrs;
            for (size_t i = 0; i < count; ++i) {
                blobs.push_back(random_blob());
                // Each entry takes exactly the domain's address length: cut or zero-extended.
                std::vector<uint8_t> entry = blobs.back();
                entry.resize(addr_len(), 0);
                laid.insert(laid.end(), entry.begin(), entry.end());
                if (rng_() % 3 == 0) {
                    strs.push_back("fi_ufi://" +
                                   std::string(rng_() % 40, static_cast<char>('A' + rng_() % 60)));
                } else {
                    strs.push_back(address::to_string(blobs.back().data(), blobs.back().size()));
                }
            }
            // No slack after the last entry: whatever the blobs claim, a read past
            // count * addr_len bytes is a heap overflow ASan reports.
            std::vector<uint8_t> exact(laid.begin(), laid.end());
            laid.swap(exact);
            for (auto &s : strs) ptrs.push_back(s.c_str());
            if (rng_() % 10 == 0) ptrs[0] = nullptr;
            std::vector<fi_addr_t> addrs(count);
            for (auto &a : addrs) a = random_addr();
            std::vector<int> status(count);
            const uint64_t flags = random_flags();
            void *ctx = (flags & FI_SYNC_ERR) && rng_() % 4 ? status.data() : nullptr;
            fi_addr_t *fa = rng_() % 5 ? addrs.data() : nullptr;
            const void *addr = str ? static_cast<const void *>(ptrs.data()) : laid.data();
            int rc = 0;
            switch (rng_() % 9) {
                case 0:
                case 1:
                case 2:
                    rc = fi_av_insert(av, addr, count, fa, flags, ctx);
                    ASSERT_TRUE(documented_insert(rc, count))
                        << "insert rc " << rc << " flags " << flags;
                    break;
                case 3:
                    rc = fi_av_insertsvc(av, rng_() % 2 ? "10.0.0.1" : strs[0].c_str(),
                                         rng_() % 2 ? nullptr : "5000", fa, flags, ctx);
                    ASSERT_TRUE(documented_insert(rc, 1)) << "insertsvc rc " << rc;
                    break;
                case 4: {
                    const size_t nodecnt = rng_() % 3;
                    const size_t svccnt = rng_() % 3;
                    std::vector<int> st(nodecnt * svccnt + 1);
                    std::vector<fi_addr_t> out(nodecnt * svccnt + 1);
                    rc = fi_av_insertsym(av, rng_() % 2 ? "10.9.0.1" : "fd00::9", nodecnt, "100",
                                         svccnt, out.data(), flags & ~(FI_AV_USER_ID | FI_AUTH_KEY),
                                         st.data());
                    ASSERT_TRUE(documented_insert(rc, nodecnt * svccnt)) << "insertsym rc " << rc;
                    break;
                }
                case 5:
                    rc = fi_av_remove(av, addrs.data(), count, flags & (FI_AUTH_KEY | FI_MORE));
                    ASSERT_TRUE(rc == 0 || rc == -FI_EINVAL || rc == -FI_EBADFLAGS ||
                                rc == -FI_EBUSY || rc == -FI_EACCES)
                        << "remove rc " << rc;
                    break;
                case 6: {
                    size_t len = rng_() % 2 ? buf.size() : rng_() % 16;
                    rc = fi_av_lookup(av, addrs[0], buf.data(), &len);
                    ASSERT_TRUE(rc == 0 || rc == -FI_EINVAL) << "lookup rc " << rc;
                    len = rng_() % 2 ? buf.size() : rng_() % 16;
                    rc = fi_av_lookup2(av, addrs[0], buf.data(), &len, flags & (FI_XPU | FI_MORE),
                                       nullptr);
                    ASSERT_TRUE(rc == 0 || rc == -FI_EINVAL || rc == -FI_ETOOSMALL ||
                                rc == -FI_EBADFLAGS)
                        << "lookup2 rc " << rc;
                    break;
                }
                case 7: {
                    size_t len = rng_() % 2 ? buf.size() : rng_() % 16;
                    const char *s = fi_av_straddr(
                        av, str ? static_cast<const void *>(ptrs[0] ? ptrs[0] : "x") : laid.data(),
                        reinterpret_cast<char *>(buf.data()), &len);
                    if (s != nullptr) {
                        ASSERT_EQ(s, reinterpret_cast<char *>(buf.data()));
                        ASSERT_GT(len, 0u);
                    }
                    break;
                }
                default: {
                    rc = fi_av_set_user_id(av, addrs[0], addrs[1 % count], flags & FI_AUTH_KEY);
                    ASSERT_TRUE(rc == 0 || rc == -FI_EINVAL) << "set_user_id rc " << rc;
                    uint8_t key[80];
                    for (auto &k : key) k = static_cast<uint8_t>(rng_());
                    fi_addr_t h = 0;
                    rc = fi_av_insert_auth_key(av, key, rng_() % 70, &h, rng_() % 8 ? 0 : flags);
                    ASSERT_TRUE(rc == 0 || rc == -FI_EINVAL || rc == -FI_EBADFLAGS ||
                                rc == -FI_ENOSPC || rc == -FI_EACCES)
                        << "insert_auth_key rc " << rc;
                    size_t len = rng_() % 80;
                    rc = fi_av_lookup_auth_key(av, addrs[0], key, &len);
                    ASSERT_TRUE(rc == 0 || rc == -FI_EINVAL) << "lookup_auth_key rc " << rc;
                }
            }
            runtime::av::PeerEntry pe;
            (void)runtime::av::resolve(runtime::av::av_of(av), addrs[0], pe);
        }
    }

    std::mt19937_64 rng_{0x5eed5eedULL};
    log::Level saved_ = log::Level::Warn;
};

TEST_F(AvFuzzTest, BinaryFormat) {
    open_domain();
    fid_av *av = open_av();
    fuzz(av, false);
}

TEST_F(AvFuzzTest, StringFormat) {
    open_domain({.str_format = true});
    fid_av *av = open_av();
    fuzz(av, true);
}

TEST_F(AvFuzzTest, AuthKeysAndUserIds) {
    open_domain({.auth_keys = true});
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.flags = FI_AV_USER_ID;
    fid_av *av = open_av(attr);
    fuzz(av, false);
}

TEST_F(AvFuzzTest, SharedAndEventAvs) {
    open_domain();
    const std::string name = unique_name("fuzz");
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.name = name.c_str();
    fid_av *av = open_av(attr);
    fuzz(av, false);
    fi_av_attr ev{};
    ev.type = FI_AV_TABLE;
    ev.flags = FI_EVENT;  // no EQ bound: inserts fail with -FI_ENOEQ
    fid_av *av2 = open_av(ev);
    fuzz(av2, false);
}

}  // namespace
}  // namespace ufi::av_test
