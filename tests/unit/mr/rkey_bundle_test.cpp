// The packed key bundle (ufi's raw MR key): round trip, and every malformation decode() must
// refuse; random corruption never crashes it.
#include "transports/memory/rkey_bundle.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace ufi::transports {
namespace {

RkeyBundle sample() {
    RkeyBundle b;
    b.flags = RkeyBundle::kFlagVirtAddr;
    b.key = 0x1234;
    b.segments = {{0x10000, 4096}, {0x30000, 100}};
    b.base_addr = 0x10000;
    b.length = 4196;
    b.access = 0x3000;
    b.mds = {{"tcp", "tcp"}, {"cma", "cma"}, {"ib", "mlx5_0"}};
    for (std::size_t i = 0; i < b.segments.size() * b.mds.size(); ++i) {
        b.rkeys.push_back(
            std::vector<std::uint8_t>(i % 3 == 2 ? 12 : 0, static_cast<std::uint8_t>(i)));
    }
    return b;
}

// Rewrites the checksum after a deliberate edit, so the test reaches the check it wants.
void reseal(std::vector<std::uint8_t> &raw) {
    std::uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < raw.size(); ++i)
        h = (h ^ ((i >= 16 && i < 20) ? 0 : raw[i])) * 16777619u;
    for (int i = 0; i < 4; ++i) raw[16 + i] = static_cast<std::uint8_t>(h >> (8 * i));
}

bool decodes(const std::vector<std::uint8_t> &raw, std::string *why = nullptr) {
    RkeyBundle out;
    return RkeyBundle::decode(raw, out, why);
}

TEST(RkeyBundle, RoundTrip) {
    const RkeyBundle b = sample();
    const auto raw = b.encode();
    ASSERT_EQ(raw.size(), b.encoded_size());
    RkeyBundle out;
    std::string why;
    ASSERT_TRUE(RkeyBundle::decode(raw, out, &why)) << why;
    EXPECT_EQ(out, b);
    EXPECT_EQ(out.rkey(1, 2).size(), 12u);
}

TEST(RkeyBundle, RefusesMalformedBundles) {
    const auto good = sample().encode();
    std::string why;
    auto edit = [&](std::size_t off, std::uint8_t v, bool seal = true) {
        auto raw = good;
        raw[off] = v;
        if (seal) reseal(raw);
        return raw;
    };
    EXPECT_FALSE(decodes(edit(0, 0), &why));
    EXPECT_EQ(why, "not a ufi key bundle (wrong magic)");
    EXPECT_FALSE(decodes(edit(4, 2), &why));
    EXPECT_EQ(why, "unknown bundle version");
    EXPECT_FALSE(decodes(edit(5, 0x80), &why));
    EXPECT_EQ(why, "unknown bundle flags");
    EXPECT_FALSE(decodes(edit(10, 1), &why));
    EXPECT_EQ(why, "reserved header fields are not zero");
    EXPECT_FALSE(decodes(edit(30, 0x55, false), &why));
    EXPECT_EQ(why, "checksum mismatch");
    EXPECT_FALSE(decodes(edit(6, 0), &why));
    EXPECT_EQ(why, "segment count out of range");
    EXPECT_FALSE(decodes(edit(8, 33), &why));
    EXPECT_EQ(why, "memory-domain count out of range");
    EXPECT_FALSE(decodes(edit(40, 0x65), &why));  // length
    EXPECT_EQ(why, "segment lengths do not sum to the length");
    EXPECT_FALSE(decodes(edit(32, 0x01), &why));  // base_addr
    EXPECT_EQ(why, "base address is not the first segment's");

    auto truncated = good;
    truncated.pop_back();
    EXPECT_FALSE(decodes(truncated, &why));
    EXPECT_EQ(why, "size field disagrees with the key size");
    auto longer = good;
    longer.push_back(0);
    EXPECT_FALSE(decodes(longer, &why));
    EXPECT_FALSE(decodes(std::vector<std::uint8_t>(good.begin(), good.begin() + 20), &why));
    EXPECT_EQ(why, "shorter than the bundle header");
    EXPECT_FALSE(decodes({}, &why));

    RkeyBundle empty_seg = sample();
    empty_seg.segments[1].len = 0;
    empty_seg.length = 4096;
    EXPECT_FALSE(decodes(empty_seg.encode(), &why));
    EXPECT_EQ(why, "empty segment");
    RkeyBundle wrap = sample();
    wrap.segments[1] = {UINT64_MAX - 10, 100};
    EXPECT_FALSE(decodes(wrap.encode(), &why));
    EXPECT_EQ(why, "segment wraps the address space");
}

TEST(RkeyBundle, EncodeRefusesWhatDecodeWould) {
    RkeyBundle b = sample();
    b.segments.clear();
    b.rkeys.clear();
    EXPECT_EQ(b.encoded_size(), 0u);
    EXPECT_TRUE(b.encode().empty());
    b = sample();
    b.rkeys.pop_back();
    EXPECT_EQ(b.encoded_size(), 0u) << "rkeys must be segments x mds";
    b = sample();
    b.mds[0].md = std::string(64, 'x');
    EXPECT_EQ(b.encoded_size(), 0u);
    b = sample();
    std::vector<std::uint8_t> small(b.encoded_size() - 1);
    EXPECT_EQ(b.encode(small), 0u);
}

TEST(RkeyBundle, RandomCorruptionNeverCrashes) {
    const auto good = sample().encode();
    std::mt19937 rng(7);
    for (int round = 0; round < 20000; ++round) {
        auto raw = good;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f)
            raw[rng() % raw.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        if (rng() % 2) reseal(raw);  // get past the checksum to the structural checks
        if (rng() % 5 == 0) raw.resize(rng() % raw.size());
        RkeyBundle out;
        if (RkeyBundle::decode(raw, out)) {
            // Whatever decoded is self-consistent.
            std::uint64_t sum = 0;
            for (const auto &s : out.segments) sum += s.len;
            EXPECT_EQ(sum, out.length);
            EXPECT_EQ(out.rkeys.size(), out.segments.size() * out.mds.size());
        }
    }
}

}  // namespace
}  // namespace ufi::transports
