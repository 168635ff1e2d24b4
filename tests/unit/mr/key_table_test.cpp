// The target side's key table (bounds, access, single use, stale keys), the key-request
// reply, mapped raw keys and registrations for buffers passed without desc.
#include "mr_fixture.h"

#include "runtime/mr/binding.h"
#include "runtime/mr/key_table.h"
#include "runtime/mr/mr.h"
#include "transports/memory/rkey_bundle.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace ufi::test {
namespace {

using runtime::mr::KeyCheck;

class KeyTableTest : public MrFixture {
  protected:
    KeyCheck check(fid_domain *d, uint64_t key, uint64_t addr, size_t len, uint64_t access,
                   bool consume = false) {
        return runtime::mr::check_remote_access(runtime_domain(d), key, addr, len, access, consume,
                                                nullptr);
    }
    std::vector<char> buf_ = std::vector<char>(16 * 1024);
};

TEST_F(KeyTableTest, ValidatesBoundsAndAccess) {
    fid_domain *d = open_domain(0);
    fid_mr *ro = nullptr, *rw = nullptr;
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 1024, FI_REMOTE_READ, 0, 1, 0, &ro, nullptr), 0);
    ASSERT_EQ(fi_mr_reg(d, buf_.data() + 1024, 1024, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 2, 0, &rw,
                        nullptr),
              0);
    EXPECT_EQ(check(d, 1, 0, 1024, FI_REMOTE_READ), KeyCheck::Ok);
    EXPECT_EQ(check(d, 1, 0, 8, FI_REMOTE_WRITE), KeyCheck::AccessDenied);
    EXPECT_EQ(check(d, 2, 0, 8, FI_REMOTE_WRITE | FI_REMOTE_READ), KeyCheck::Ok);
    EXPECT_EQ(check(d, 1, 1020, 8, FI_REMOTE_READ), KeyCheck::OutOfBounds);
    EXPECT_EQ(check(d, 1, UINT64_MAX - 2, 8, FI_REMOTE_READ), KeyCheck::OutOfBounds) << "wraps";
    EXPECT_EQ(check(d, 3, 0, 8, FI_REMOTE_READ), KeyCheck::UnknownKey);
    EXPECT_EQ(check(d, 1ULL << 63, 0, 8, FI_REMOTE_READ), KeyCheck::UnknownKey);
    EXPECT_EQ(fi_close(&ro->fid), 0);
    EXPECT_EQ(check(d, 1, 0, 8, FI_REMOTE_READ), KeyCheck::UnknownKey) << "closed";
    EXPECT_EQ(runtime::mr::key_check_errno(KeyCheck::UnknownKey), -FI_EKEYREJECTED);
    EXPECT_EQ(runtime::mr::key_check_errno(KeyCheck::OutOfBounds), -FI_EACCES);
    EXPECT_EQ(fi_close(&rw->fid), 0);
}

// Local-only regions hold their key in the table (so it is checked and reserved), yet peers
// cannot reach them: no access check passes, no key reply is built.
TEST_F(KeyTableTest, LocalOnlyRegionsAreNotReachable) {
    fid_domain *d = open_domain(0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 1024, FI_SEND | FI_RECV | FI_READ | FI_WRITE, 0, 5, 0,
                        &mr, nullptr),
              0);
    EXPECT_EQ(check(d, 5, 0, 8, FI_REMOTE_READ), KeyCheck::UnknownKey);
    EXPECT_EQ(check(d, 5, 0, 8, FI_REMOTE_WRITE), KeyCheck::UnknownKey);
    std::vector<uint8_t> reply;
    EXPECT_EQ(runtime::mr::build_key_reply(runtime_domain(d), 5, reply), -FI_EKEYREJECTED);
    EXPECT_TRUE(reply.empty());
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(KeyTableTest, SingleUseKeysServeOneOperation) {
    fid_domain *d = open_domain(0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(
        fi_mr_reg(d, buf_.data(), 1024, FI_REMOTE_WRITE, 0, 1, FI_MR_SINGLE_USE, &mr, nullptr), 0);
    EXPECT_EQ(check(d, 1, 0, 8, FI_REMOTE_WRITE, false), KeyCheck::Ok) << "a look without use";
    std::vector<uint8_t> reply;
    ASSERT_EQ(runtime::mr::build_key_reply(runtime_domain(d), 1, reply), 0);
    transports::RkeyBundle b;
    ASSERT_TRUE(transports::RkeyBundle::decode(reply, b));
    EXPECT_TRUE(b.flags & transports::RkeyBundle::kFlagSingleUse) << "initiators must not cache it";
    EXPECT_EQ(check(d, 1, 0, 8, FI_REMOTE_WRITE, true), KeyCheck::Ok);
    EXPECT_EQ(check(d, 1, 0, 8, FI_REMOTE_WRITE, true), KeyCheck::Consumed);
    EXPECT_EQ(runtime::mr::build_key_reply(runtime_domain(d), 1, reply), -FI_EKEYREJECTED);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(KeyTableTest, StaleProviderKeysMiss) {
    fid_domain *d = open_domain(FI_MR_PROV_KEY);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 1024, FI_REMOTE_READ, 0, 0, 0, &mr, nullptr), 0);
    const uint64_t old_key = fi_mr_key(mr);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 1024, FI_REMOTE_READ, 0, 0, 0, &mr, nullptr), 0);
    EXPECT_NE(fi_mr_key(mr), old_key);
    EXPECT_EQ(check(d, old_key, 0, 8, FI_REMOTE_READ), KeyCheck::UnknownKey)
        << "a key of a closed MR";
    EXPECT_EQ(check(d, fi_mr_key(mr), 0, 8, FI_REMOTE_READ), KeyCheck::Ok);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(KeyTableTest, KeyTableDirectly) {
    runtime::mr::KeyTable prov(true, true), user(false, false);
    auto *fake = reinterpret_cast<runtime::mr::Mr *>(&prov);  // never dereferenced here
    uint64_t k1 = 0, k2 = 0;
    ASSERT_EQ(prov.insert(fake, 0, &k1), 0);
    ASSERT_EQ(prov.insert(fake, 0, &k2), 0);
    EXPECT_NE(k1, k2);
    EXPECT_EQ(prov.size(), 2u);
    prov.erase(k1);
    prov.erase(k1);  // twice: no-op
    EXPECT_EQ(prov.size(), 1u);
    EXPECT_EQ(prov.visit(k1, [](runtime::mr::Mr *m) { return m; }), nullptr);
    EXPECT_EQ(prov.visit(k2, [](runtime::mr::Mr *m) { return m; }), fake);
    ASSERT_EQ(user.insert(fake, 77, &k1), 0);
    EXPECT_EQ(k1, 77u);
    EXPECT_EQ(user.insert(fake, 77, &k2), -FI_ENOKEY);
    EXPECT_EQ(user.insert(fake, FI_KEY_NOTAVAIL, &k2), -FI_EKEYREJECTED);
    ASSERT_EQ(user.insert(fake, 1ULL << 63, &k2), 0) << "the top bit is a key's like any other";
    EXPECT_EQ(k2, 1ULL << 63);
    EXPECT_EQ(user.visit(1ULL << 63, [](runtime::mr::Mr *m) { return m; }), fake);
}

TEST_F(KeyTableTest, ReplyIsTheRawKey) {
    fid_domain *d = open_domain(FI_MR_VIRT_ADDR);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 4096, FI_REMOTE_READ, 0, 8, 0, &mr, nullptr), 0);
    std::vector<uint8_t> reply;
    ASSERT_EQ(runtime::mr::build_key_reply(runtime_domain(d), 8, reply), 0);
    uint64_t base = 0;
    size_t size = 4096;
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    raw.resize(size);
    EXPECT_EQ(reply, raw);
    transports::RkeyBundle b;
    ASSERT_TRUE(transports::RkeyBundle::decode(reply, b));
    EXPECT_EQ(b.key, 8u);
    EXPECT_EQ(b.access, static_cast<uint64_t>(FI_REMOTE_READ));
    EXPECT_TRUE(b.flags & transports::RkeyBundle::kFlagVirtAddr);
    EXPECT_EQ(b.base_addr, reinterpret_cast<uint64_t>(buf_.data()));
    const auto *mds = runtime::mr::memory_domains(runtime_domain(d));
    ASSERT_NE(mds, nullptr);
    EXPECT_EQ(b.mds.size(), mds->registering().size());
    EXPECT_EQ(runtime::mr::build_key_reply(runtime_domain(d), 9, reply), -FI_EKEYREJECTED);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(KeyTableTest, MappedKeysUnpackTheTransportsKeys) {
    fid_domain *d = open_domain(0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 4096, FI_REMOTE_READ, 0, 8, 0, &mr, nullptr), 0);
    uint64_t base = 0, key = 0;
    size_t size = 4096;
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    ASSERT_EQ(fi_mr_map_raw(d, base, raw.data(), size, &key, 0), 0);
    EXPECT_TRUE(runtime::mr::is_mapped_key(key));
    EXPECT_FALSE(runtime::mr::is_mapped_key(fi_mr_key(mr)));
    const auto *m = runtime::mr::find_mapped_key(runtime_domain(d), key);
    ASSERT_NE(m, nullptr);
    for (size_t i = 0; i < m->bundle.mds.size(); ++i)
        EXPECT_TRUE(m->rkeys.at(0, i).usable()) << m->bundle.mds[i].md;
    EXPECT_EQ(fi_mr_unmap_key(d, key), 0);
    EXPECT_EQ(runtime::mr::find_mapped_key(runtime_domain(d), key), nullptr);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

// fi_mr_map_raw of a forged raw key whose checksum is right (the checksum is no authentication)
// but whose per-transport rkey has a size other than its memory domain packs: -FI_EINVAL, before
// UCT reads it (UCT once asserted in mm_posix.c or read past the buffer). Every truncation of
// every rkey, one byte more, and, for every MD this domain has open (posix and sysv included,
// which register nothing), rkeys of 0, 1, packed_size-1 and packed_size+1 bytes.
TEST_F(KeyTableTest, MapRawRefusesRkeysOfTheWrongSize) {
    fid_domain *d = open_domain(0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 4096, FI_REMOTE_READ, 0, 8, 0, &mr, nullptr), 0);
    MrCloser closer{mr};
    uint64_t base = 0, key = 0;
    size_t size = 4096;
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    raw.resize(size);
    transports::RkeyBundle honest;
    ASSERT_TRUE(transports::RkeyBundle::decode(raw, honest));
    ASSERT_FALSE(honest.mds.empty());

    size_t tried = 0;
    auto expect_refused = [&](const transports::RkeyBundle &forged, const std::string &what) {
        std::vector<uint8_t> bytes = forged.encode();  // a fresh, valid checksum
        ASSERT_FALSE(bytes.empty()) << what;
        transports::RkeyBundle check;
        ASSERT_TRUE(transports::RkeyBundle::decode(bytes, check)) << what << ": well-formed";
        uint64_t k = 0;
        EXPECT_EQ(fi_mr_map_raw(d, base, bytes.data(), bytes.size(), &k, 0), -FI_EINVAL) << what;
        ++tried;
    };
    for (size_t m = 0; m < honest.mds.size(); ++m) {
        const size_t n = honest.rkeys[m].size();
        for (size_t len = 0; len < n; ++len) {  // every truncation
            transports::RkeyBundle forged = honest;
            forged.rkeys[m].resize(len);
            expect_refused(forged, honest.mds[m].md + " truncated to " + std::to_string(len));
        }
        transports::RkeyBundle longer = honest;
        longer.rkeys[m].push_back(0);
        expect_refused(longer, honest.mds[m].md + " one byte longer");
    }
    const auto *mds = runtime::mr::memory_domains(runtime_domain(d));
    ASSERT_NE(mds, nullptr);
    for (const transports::MemoryDomain &md : mds->all()) {
        const size_t n = md.rkey_packed_size;
        std::vector<size_t> lengths = {0, 1, n + 1};
        if (n > 0) lengths.push_back(n - 1);
        for (const size_t len : lengths) {
            if (len == n) continue;
            transports::RkeyBundle forged = honest;
            forged.mds = {{md.component_name, md.md_name}};
            forged.rkeys = {std::vector<uint8_t>(len, 0)};
            expect_refused(forged, md.md_name + " alone, " + std::to_string(len) + " bytes");
        }
    }
    EXPECT_GT(tried, honest.mds.size());
    ASSERT_EQ(fi_mr_map_raw(d, base, raw.data(), raw.size(), &key, 0), 0) << "the honest key";
    EXPECT_EQ(fi_mr_unmap_key(d, key), 0);
}

TEST_F(KeyTableTest, LocalRegistrationsComeFromTheCache) {
    fid_domain *d = open_domain(0);
    runtime::Domain *rd = runtime_domain(d);
    const size_t page = static_cast<size_t>(getpagesize());
    char *p = static_cast<char *>(
        mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    transports::RegionRef a, b;
    ASSERT_EQ(runtime::mr::acquire_local(rd, p, 100, a), 0);
    ASSERT_EQ(runtime::mr::acquire_local(rd, p + 50, 100, b), 0);
    EXPECT_EQ(a.get(), b.get()) << "a cache hit";
    EXPECT_EQ(runtime::mr::acquire_local(rd, nullptr, 100, b), -FI_EINVAL);
    a.reset();
    b.reset();
    ASSERT_EQ(munmap(p, 4 * page), 0);
    char *q = static_cast<char *>(mmap(p, 4 * page, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
    ASSERT_EQ(q, p);
    auto *state = runtime::mr::mr_state_of(rd);
    const auto misses = state->cache->stats().misses;
    ASSERT_EQ(runtime::mr::acquire_local(rd, q, 100, a), 0);
    EXPECT_EQ(state->cache->stats().misses, misses + 1) << "registered again after munmap + mmap";
    a.reset();
    munmap(q, 4 * page);
}

TEST_F(KeyTableTest, SameBufferTwiceHitsTheCacheUnderApplicationMrs) {
    fid_domain *d = open_domain(0);
    auto *state = runtime::mr::mr_state_of(runtime_domain(d));
    fid_mr *a = nullptr, *b = nullptr;
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 8192, FI_REMOTE_READ, 0, 1, 0, &a, nullptr), 0);
    const auto before = state->cache->stats();
    ASSERT_EQ(fi_mr_reg(d, buf_.data(), 8192, FI_REMOTE_WRITE, 0, 2, 0, &b, nullptr), 0);
    EXPECT_EQ(state->cache->stats().hits, before.hits + 1);
    EXPECT_EQ(state->cache->stats().misses, before.misses);
    EXPECT_EQ(fi_close(&a->fid), 0);
    EXPECT_EQ(fi_close(&b->fid), 0);
}

// FI_THREAD_SAFE: registrations, closes, lookups and munmap events from several threads at
// once (ASan/UBSan builds check the rest).
TEST_F(KeyTableTest, ConcurrentRegistrationLookupAndUnmap) {
    fid_domain *d = open_domain(0);
    runtime::Domain *rd = runtime_domain(d);
    ASSERT_EQ(rd->threading, FI_THREAD_SAFE);
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    auto registrar = [&](uint64_t first_key) {
        std::vector<char> local(64 * 1024);
        for (int i = 0; i < 300; ++i) {
            fid_mr *mr = nullptr;
            const uint64_t key = first_key + static_cast<uint64_t>(i % 7);
            if (fi_mr_reg(d, local.data() + (i % 8) * 4096, 4096, FI_REMOTE_READ, 0, key, 0, &mr,
                          nullptr) != 0) {
                ++failures;
                continue;
            }
            if (fi_close(&mr->fid) != 0) ++failures;
        }
    };
    std::thread reader([&] {
        while (!stop.load()) {
            for (uint64_t k = 100; k < 220; ++k) {
                runtime::mr::check_remote_access(rd, k, 0, 8, FI_REMOTE_READ, false, nullptr);
            }
        }
    });
    std::thread unmapper([&] {
        const size_t page = static_cast<size_t>(getpagesize());
        while (!stop.load()) {
            void *p =
                mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            transports::RegionRef r;
            if (p != MAP_FAILED) {
                runtime::mr::acquire_local(rd, p, page, r);
                r.reset();
                munmap(p, 4 * page);
            }
        }
    });
    std::thread a(registrar, 100), b(registrar, 200);
    a.join();
    b.join();
    stop = true;
    reader.join();
    unmapper.join();
    EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace ufi::test
