// The memory module under the MR family: memory domains, registrations and their packed
// rkeys, rkey unpack, and the registration cache (hits, merging, LRU limits, uncached
// overflow, invalidation by ucm memory events - never a stale registration after munmap).
#include "transports/iface/discovery.h"
#include "transports/memory/memory_domains.h"
#include "transports/memory/reg_cache.h"
#include "transports/memory/registration.h"
#include "transports/memory/rkey_bundle.h"
#include "transports/memory/unpacked_rkeys.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <vector>

namespace ufi::transports {
namespace {

const MemoryDomains &host_mds() {
    static const MemoryDomains mds = [] {
        std::vector<MdName> names;
        for (const Resource &r : discovery().resources) names.push_back({r.component, r.md});
        MemoryDomains m;
        m.open(names);
        return m;
    }();
    return mds;
}

const std::size_t kPage = static_cast<std::size_t>(getpagesize());

struct Mapping {
    explicit Mapping(std::size_t len, void *hint = nullptr, int extra = 0) : len(len) {
        p = static_cast<char *>(
            mmap(hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0));
        if (p == MAP_FAILED) p = nullptr;
    }
    ~Mapping() {
        if (p != nullptr) munmap(p, len);
    }
    void unmap() {
        munmap(p, len);
        p = nullptr;
    }
    char *p = nullptr;
    std::size_t len;
};

TEST(MemoryDomains, OpensEachOnceAndKnowsWhichRegister) {
    const MemoryDomains &mds = host_mds();
    ASSERT_GT(mds.size(), 0u);
    for (std::size_t i = 0; i < mds.size(); ++i) {
        for (std::size_t j = i + 1; j < mds.size(); ++j) EXPECT_NE(mds[i].md_name, mds[j].md_name);
        const bool alloc_only = mds[i].md_name == "posix" || mds[i].md_name == "sysv";
        EXPECT_EQ(mds[i].can_register(), !alloc_only) << mds[i].md_name;
    }
    std::vector<std::string> problems;
    MemoryDomains bad;
    const MdName names[] = {{"no-such-component", "x"}};
    EXPECT_EQ(bad.open(names, &problems), 0u);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("no-such-component"), std::string::npos);
}

TEST(Registration, RegistersOnEveryRegisteringMdAndPacks) {
    const MemoryDomains &mds = host_mds();
    std::vector<char> buf(8192);
    Registration r;
    ASSERT_EQ(Registration::create(mds, buf.data(), buf.size(), UCT_MD_MEM_ACCESS_ALL, r), UCS_OK);
    for (std::size_t i = 0; i < mds.size(); ++i) {
        EXPECT_EQ(r.memh(i) != nullptr, mds[i].can_register()) << mds[i].md_name;
        std::vector<std::uint8_t> packed;
        EXPECT_EQ(r.pack_rkey(i, packed), UCS_OK);
        EXPECT_EQ(packed.size(), mds[i].can_register() ? mds[i].rkey_packed_size : 0u);
    }
    Registration moved = std::move(r);
    EXPECT_FALSE(r.valid());
    EXPECT_TRUE(moved.valid());
}

TEST(UnpackedRkeys, UnpacksWhatThisProcessKnows) {
    const MemoryDomains &mds = host_mds();
    std::vector<char> buf(4096);
    Registration r;
    ASSERT_EQ(Registration::create(mds, buf.data(), buf.size(), UCT_MD_MEM_ACCESS_ALL, r), UCS_OK);
    RkeyBundle b;
    b.segments = {{reinterpret_cast<std::uint64_t>(buf.data()), buf.size()}};
    b.base_addr = b.segments[0].addr;
    b.length = buf.size();
    for (std::size_t i : mds.registering()) {
        b.mds.push_back({mds[i].component_name, mds[i].md_name});
        std::vector<std::uint8_t> packed;
        ASSERT_EQ(r.pack_rkey(i, packed), UCS_OK);
        b.rkeys.push_back(packed);
    }
    b.mds.push_back({"no_such_comp", "x0"});  // a peer's MD whose component this process lacks
    b.rkeys.push_back(std::vector<std::uint8_t>(16, 1));
    UnpackedRkeys u;
    EXPECT_EQ(u.unpack(b, mds), mds.registering().size());
    EXPECT_FALSE(u.at(0, b.mds.size() - 1).usable());
    EXPECT_NE(u.at(0, b.mds.size() - 1).why.find("no_such_comp"), std::string::npos);
    for (std::size_t m = 0; m + 1 < b.mds.size(); ++m)
        EXPECT_TRUE(u.at(0, m).usable()) << b.mds[m].md;
}

// A forged bundle (or one from another UCX version) with an rkey of the wrong size is caught
// before UCT reads it: sizes_match() names it, and unpack() never hands it to uct_rkey_unpack.
TEST(UnpackedRkeys, RkeysOfTheWrongSizeAreNeverUnpacked) {
    const MemoryDomains &mds = host_mds();
    std::vector<char> buf(4096);
    Registration r;
    ASSERT_EQ(Registration::create(mds, buf.data(), buf.size(), UCT_MD_MEM_ACCESS_ALL, r), UCS_OK);
    RkeyBundle b;
    b.segments = {{reinterpret_cast<std::uint64_t>(buf.data()), buf.size()}};
    b.base_addr = b.segments[0].addr;
    b.length = buf.size();
    for (std::size_t i : mds.registering()) {
        b.mds.push_back({mds[i].component_name, mds[i].md_name});
        std::vector<std::uint8_t> packed;
        ASSERT_EQ(r.pack_rkey(i, packed), UCS_OK);
        b.rkeys.push_back(packed);
    }
    ASSERT_TRUE(UnpackedRkeys::sizes_match(b, mds));
    for (std::size_t m = 0; m < b.mds.size(); ++m) {
        const std::size_t n = b.rkeys[m].size();
        for (const std::size_t len : {n + 1, n == 0 ? std::size_t{8} : n - 1}) {
            RkeyBundle forged = b;
            forged.rkeys[m].resize(len, 0xA5);
            std::string why;
            EXPECT_FALSE(UnpackedRkeys::sizes_match(forged, mds, &why)) << b.mds[m].md << " " << len;
            EXPECT_NE(why.find(b.mds[m].md), std::string::npos) << why;
            UnpackedRkeys u;
            EXPECT_EQ(u.unpack(forged, mds), b.mds.size() - 1) << b.mds[m].md << " " << len;
            EXPECT_FALSE(u.at(0, m).usable());
        }
    }
}

class RegCacheTest : public ::testing::Test {};

TEST_F(RegCacheTest, HitsOnTheSameAndContainedRanges) {
    CacheConfig c;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(cache.caching()) << "ucm memory events should work here";
    Mapping m(16 * kPage);
    RegionRef a, b, c2;
    ASSERT_EQ(cache.acquire(m.p + 100, 5000, a), UCS_OK);
    EXPECT_EQ(a->start(), reinterpret_cast<std::uintptr_t>(m.p)) << "page-aligned";
    EXPECT_EQ(a->end(), reinterpret_cast<std::uintptr_t>(m.p) + 2 * kPage);
    ASSERT_EQ(cache.acquire(m.p + 100, 5000, b), UCS_OK);
    ASSERT_EQ(cache.acquire(m.p + kPage, 10, c2), UCS_OK);
    EXPECT_EQ(a.get(), b.get());
    EXPECT_EQ(a.get(), c2.get());
    const auto s = cache.stats();
    EXPECT_EQ(s.misses, 1u);
    EXPECT_EQ(s.hits, 2u);
    EXPECT_EQ(s.count, 1u);
    a.reset();
    b.reset();
    c2.reset();
    RegionRef again;
    ASSERT_EQ(cache.acquire(m.p, 10, again), UCS_OK);
    EXPECT_EQ(cache.stats().hits, 3u) << "unused regions stay cached";
}

TEST_F(RegCacheTest, OverlapsMergeIntoOneRegion) {
    CacheConfig c;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(16 * kPage);
    RegionRef a, b, merged;
    ASSERT_EQ(cache.acquire(m.p, 2 * kPage, a), UCS_OK);
    ASSERT_EQ(cache.acquire(m.p + 4 * kPage, 2 * kPage, b), UCS_OK);
    ASSERT_EQ(cache.acquire(m.p + kPage, 4 * kPage, merged), UCS_OK);
    EXPECT_EQ(merged->start(), reinterpret_cast<std::uintptr_t>(m.p));
    EXPECT_EQ(merged->end(), reinterpret_cast<std::uintptr_t>(m.p) + 6 * kPage);
    EXPECT_EQ(cache.stats().count, 1u);
    EXPECT_FALSE(a->cached()) << "retired, still valid for its holder";
    EXPECT_TRUE(a->registration().valid());
    a.reset();
    b.reset();
    RegionRef hit;
    ASSERT_EQ(cache.acquire(m.p + 5 * kPage, 10, hit), UCS_OK);
    EXPECT_EQ(hit.get(), merged.get());
}

TEST_F(RegCacheTest, EvictsLeastRecentlyUsedBeyondCount) {
    CacheConfig c;
    c.max_count = 2;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(16 * kPage);
    for (int i = 0; i < 3; ++i) {
        RegionRef r;
        ASSERT_EQ(cache.acquire(m.p + 2 * i * kPage, kPage, r), UCS_OK);
    }
    auto s = cache.stats();
    EXPECT_EQ(s.count, 2u);
    EXPECT_EQ(s.evictions, 1u);
    RegionRef r;
    ASSERT_EQ(cache.acquire(m.p + 4 * kPage, kPage, r), UCS_OK);  // the newest: still cached
    EXPECT_EQ(cache.stats().hits, 1u);
    r.reset();
    ASSERT_EQ(cache.acquire(m.p, kPage, r), UCS_OK);  // the oldest: was evicted
    EXPECT_EQ(cache.stats().misses, 4u);
}

// acquire_cached (fi_mr_reg's first question) is a hit or nothing: a miss registers nothing,
// and a hit's reference keeps the region off the LRU list like acquire()'s.
TEST_F(RegCacheTest, AcquireCachedHitsOrRegistersNothing) {
    CacheConfig c;
    c.max_count = 1;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(16 * kPage);
    RegionRef r;
    EXPECT_FALSE(cache.acquire_cached(m.p, kPage, r));
    EXPECT_FALSE(r);
    EXPECT_EQ(cache.stats().misses, 0u) << "a miss registers nothing";
    EXPECT_EQ(cache.stats().count, 0u);
    {
        RegionRef first;
        ASSERT_EQ(cache.acquire(m.p, kPage, first), UCS_OK);
    }
    ASSERT_TRUE(cache.acquire_cached(m.p + 10, 100, r));
    EXPECT_EQ(r->start(), reinterpret_cast<std::uintptr_t>(m.p));
    EXPECT_EQ(cache.stats().hits, 1u);
    EXPECT_FALSE(cache.acquire_cached(m.p, 2 * kPage, r)) << "not covered";
    EXPECT_FALSE(r);
    // In use through acquire_cached's reference: a second region cannot evict it.
    ASSERT_TRUE(cache.acquire_cached(m.p, kPage, r));
    RegionRef other;
    ASSERT_EQ(cache.acquire(m.p + 4 * kPage, kPage, other), UCS_OK);
    EXPECT_TRUE(r->cached());
    EXPECT_TRUE(r->registration().valid());
}

// The LRU order after regions are taken again from the middle of the list: the one used
// longest ago goes first.
TEST_F(RegCacheTest, ReuseMovesARegionToTheFrontOfTheLru) {
    CacheConfig c;
    c.max_count = 3;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(16 * kPage);
    auto at = [&](int i) { return m.p + 2 * i * kPage; };
    for (int i = 0; i < 3; ++i) {
        RegionRef r;
        ASSERT_EQ(cache.acquire(at(i), kPage, r), UCS_OK);  // LRU: 2 1 0
    }
    {
        RegionRef r;
        ASSERT_TRUE(cache.acquire_cached(at(1), kPage, r));  // from the middle: 1 2 0
    }
    {
        RegionRef r;
        ASSERT_TRUE(cache.acquire_cached(at(0), kPage, r));  // from the back: 0 1 2
    }
    RegionRef r3;
    ASSERT_EQ(cache.acquire(at(3), kPage, r3), UCS_OK);  // evicts 2
    EXPECT_EQ(cache.stats().evictions, 1u);
    RegionRef r;
    EXPECT_TRUE(cache.acquire_cached(at(0), kPage, r));
    r.reset();
    EXPECT_TRUE(cache.acquire_cached(at(1), kPage, r));
    r.reset();
    EXPECT_FALSE(cache.acquire_cached(at(2), kPage, r)) << "the least recently used went";
    r3.reset();
    cache.flush();
    EXPECT_EQ(cache.stats().count, 0u);
    EXPECT_FALSE(cache.acquire_cached(at(3), kPage, r));
}

TEST_F(RegCacheTest, EvictsBeyondSizeAndHandsOutUncachedWhenFullOfUsers) {
    CacheConfig c;
    c.max_size = 4 * kPage;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(32 * kPage);
    RegionRef a, b, big;
    ASSERT_EQ(cache.acquire(m.p, 2 * kPage, a), UCS_OK);
    ASSERT_EQ(cache.acquire(m.p + 4 * kPage, 2 * kPage, b), UCS_OK);
    ASSERT_EQ(cache.acquire(m.p + 8 * kPage, 2 * kPage, big), UCS_OK);
    EXPECT_FALSE(big->cached()) << "the cache is full of regions in use";
    EXPECT_EQ(cache.stats().uncached, 1u);
    EXPECT_LE(cache.stats().bytes, 4 * kPage);
    big.reset();
    a.reset();
    RegionRef c3;
    ASSERT_EQ(cache.acquire(m.p + 12 * kPage, 2 * kPage, c3), UCS_OK);
    EXPECT_TRUE(c3->cached()) << "the unused region made room";
    EXPECT_EQ(cache.stats().evictions, 1u);
    RegionRef huge;
    ASSERT_EQ(cache.acquire(m.p + 16 * kPage, 8 * kPage, huge), UCS_OK);
    EXPECT_FALSE(huge->cached()) << "larger than the whole cache";
}

TEST_F(RegCacheTest, DisabledRegistersEveryTime) {
    CacheConfig c;
    c.enabled = false;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    EXPECT_FALSE(cache.caching());
    Mapping m(4 * kPage);
    RegionRef a, b;
    ASSERT_EQ(cache.acquire(m.p + 10, 100, a), UCS_OK);
    ASSERT_EQ(cache.acquire(m.p + 10, 100, b), UCS_OK);
    EXPECT_NE(a.get(), b.get());
    EXPECT_EQ(a->start(), reinterpret_cast<std::uintptr_t>(m.p + 10)) << "exactly the range";
    EXPECT_EQ(cache.stats().misses, 2u);
    EXPECT_EQ(cache.stats().count, 0u);
}

// The required property: register through the cache, munmap, mmap again at the same
// address, look up: the lookup must register again, never return the old registration.
TEST_F(RegCacheTest, RemappedAddressIsRegisteredAgain) {
    CacheConfig c;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    ASSERT_TRUE(cache.caching());
    Mapping m(4 * kPage);
    char *addr = m.p;
    const Region *first = nullptr;
    {
        RegionRef r;
        ASSERT_EQ(cache.acquire(addr, 4 * kPage, r), UCS_OK);
        first = r.get();
    }
    m.unmap();
    EXPECT_GE(cache.monitor().events(), 1u) << "ucm reported the munmap";
    Mapping again(4 * kPage, addr, MAP_FIXED_NOREPLACE);
    ASSERT_EQ(again.p, addr) << "the kernel gave the same address back";
    RegionRef r;
    ASSERT_EQ(cache.acquire(addr, 4 * kPage, r), UCS_OK);
    const auto s = cache.stats();
    EXPECT_EQ(s.hits, 0u);
    EXPECT_EQ(s.misses, 2u);
    EXPECT_GE(s.invalidations, 1u);
    (void)first;  // freed: compare statistics, not addresses (the allocator may reuse them)
}

TEST_F(RegCacheTest, UnmapWhileInUseKeepsTheHolderValid) {
    CacheConfig c;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(2 * kPage);
    char *addr = m.p;
    RegionRef held;
    ASSERT_EQ(cache.acquire(addr, kPage, held), UCS_OK);
    m.unmap();
    Mapping again(2 * kPage, addr, MAP_FIXED_NOREPLACE);
    ASSERT_EQ(again.p, addr);
    RegionRef fresh;
    ASSERT_EQ(cache.acquire(addr, kPage, fresh), UCS_OK);
    EXPECT_NE(fresh.get(), held.get());
    EXPECT_FALSE(held->cached());
    EXPECT_TRUE(held->registration().valid());
}

TEST_F(RegCacheTest, PartialUnmapAndMremapInvalidate) {
    CacheConfig c;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(8 * kPage);
    {
        RegionRef r;
        ASSERT_EQ(cache.acquire(m.p, 8 * kPage, r), UCS_OK);
    }
    ASSERT_EQ(munmap(m.p + 7 * kPage, kPage), 0);  // one page of it
    m.len = 7 * kPage;
    RegionRef r;
    ASSERT_EQ(cache.acquire(m.p, kPage, r), UCS_OK);
    EXPECT_EQ(cache.stats().hits, 0u);
    r.reset();
    void *moved = mremap(m.p, 7 * kPage, 14 * kPage, MREMAP_MAYMOVE);
    ASSERT_NE(moved, MAP_FAILED);
    m.p = static_cast<char *>(moved);
    m.len = 14 * kPage;
    ASSERT_EQ(cache.acquire(m.p, kPage, r), UCS_OK);
    EXPECT_EQ(cache.stats().hits, 0u) << "mremap unmaps the old range";
}

TEST_F(RegCacheTest, ExplicitInvalidateAndFlush) {
    CacheConfig c;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(8 * kPage);
    {
        RegionRef a, b;
        ASSERT_EQ(cache.acquire(m.p, kPage, a), UCS_OK);
        ASSERT_EQ(cache.acquire(m.p + 4 * kPage, kPage, b), UCS_OK);
    }
    cache.invalidate(m.p, 2 * kPage);
    EXPECT_EQ(cache.stats().count, 1u);
    cache.flush();
    EXPECT_EQ(cache.stats().count, 0u);
}

TEST_F(RegCacheTest, MonitorOverflowDropsEverything) {
    CacheConfig c;
    RegCache cache(host_mds(), c, UCT_MD_MEM_ACCESS_ALL);
    Mapping m(8 * kPage);
    {
        RegionRef r;
        ASSERT_EQ(cache.acquire(m.p, kPage, r), UCS_OK);
    }
    // Far more disjoint ranges than the queue holds, none of them the cached one.
    for (std::size_t i = 0; i < 2 * MemoryMonitor::kQueueSize; ++i)
        cache.monitor().notify(0x1000 + i * 0x2000, 16);
    RegionRef r;
    ASSERT_EQ(cache.acquire(m.p, kPage, r), UCS_OK);
    EXPECT_EQ(cache.stats().hits, 0u) << "an overflowed queue leaves every region suspect";
}

TEST(MemoryMonitor, MergesTouchingRangesAndDrains) {
    MemoryMonitor mon;
    mon.notify(100, 50);
    mon.notify(150, 50);  // touches the last one
    mon.notify(1000, 10);
    mon.notify(5, 0);  // empty: ignored
    AddressRange out[8];
    bool everything = true;
    ASSERT_EQ(mon.drain(out, everything), 2u);
    EXPECT_FALSE(everything);
    EXPECT_EQ(out[0].start, 100u);
    EXPECT_EQ(out[0].end, 200u);
    EXPECT_EQ(out[1].start, 1000u);
    EXPECT_EQ(mon.drain(out, everything), 0u);
}

}  // namespace
}  // namespace ufi::transports
