// The endpoint address blob: round trips, the printable form, and rejection of every kind
// of malformed input (fuzzed), never a crash.
#include "transports/address.h"
#include "transports/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace ufi::transports::address {
namespace {

EndpointAddress sample() {
    EndpointAddress a;
    a.uuid = 0x1122334455667788ULL;
    a.endpoint_id = 7;
    a.records.push_back({"posix", {1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15, 16}});
    a.records.push_back({"self", {}, {0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11}});
    a.records.push_back({"tcp", std::vector<uint8_t>(18, 0x42), {0x13, 0x88}});
    return a;
}

TEST(Address, RoundTrip) {
    const EndpointAddress a = sample();
    std::string why;
    const auto blob = pack(a, &why);
    ASSERT_FALSE(blob.empty()) << why;
    // Known transports take a one-byte code (no name).
    EXPECT_EQ(blob.size(), kHeaderSize + (3 + 16) + (3 + 8) + (3 + 20));
    EndpointAddress b;
    ASSERT_TRUE(unpack(blob.data(), blob.size(), b, &why)) << why;
    EXPECT_EQ(a, b);
    EXPECT_TRUE(is_valid(blob.data(), blob.size()));
    EXPECT_EQ(content_size(blob.data(), blob.size()), blob.size());
    EXPECT_NE(describe(b).find("posix, self, tcp"), std::string::npos) << describe(b);
}

TEST(Address, StringForm) {
    const auto blob = pack(sample());
    const std::string s = to_string(blob.data(), blob.size());
    EXPECT_EQ(s.rfind("fi_ufi://", 0), 0u);
    EXPECT_EQ(s.substr(9).find_first_of("+/=:. \n"), std::string::npos) << "printable, url- and kv-store-safe";
    std::vector<uint8_t> back;
    std::string why;
    ASSERT_TRUE(from_string(s, back, &why)) << why;
    EXPECT_EQ(back, blob);
    EXPECT_FALSE(from_string("fi_sockaddr_in://1.2.3.4:5", back, &why));
    EXPECT_NE(why.find("fi_ufi://"), std::string::npos);
    EXPECT_FALSE(from_string("fi_ufi://not*base64", back, &why));
    EXPECT_FALSE(from_string("fi_ufi://", back, &why));
    EXPECT_FALSE(from_string("fi_ufi://" + s.substr(9, s.size() - 12), back, &why)) << "truncated";
}

TEST(Address, Base64Url) {
    for (size_t n = 0; n < 40; ++n) {
        std::vector<uint8_t> data(n);
        for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
        std::vector<uint8_t> back;
        ASSERT_TRUE(base64url_decode(base64url_encode(data.data(), n), back)) << n;
        EXPECT_EQ(back, data);
    }
    std::vector<uint8_t> out;
    EXPECT_FALSE(base64url_decode("A", out)) << "impossible length";
    EXPECT_FALSE(base64url_decode("AB", out)) << "non-zero leftover bits";
    EXPECT_TRUE(base64url_decode("AA", out));
}

TEST(Address, RejectsMalformed) {
    const auto good = pack(sample());
    std::string why;
    EndpointAddress out;
    EXPECT_FALSE(unpack(nullptr, 10, out, &why));
    EXPECT_FALSE(unpack(good.data(), 5, out, &why));
    EXPECT_NE(why.find("header"), std::string::npos);
    auto bad = good;
    bad[0] = 'x';
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why));
    EXPECT_NE(why.find("magic"), std::string::npos);
    bad = good;
    bad[2] = 9;
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why));
    EXPECT_NE(why.find("version 9"), std::string::npos);
    bad = good;
    bad[3] = 0;
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why));
    bad = good;
    bad[3] = 4;  // one record more than present
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why));
    EXPECT_NE(why.find("runs past the address's"), std::string::npos) << why;
    bad = good;
    bad.push_back(0);
    EXPECT_TRUE(unpack(bad.data(), bad.size(), out, &why)) << "a zero byte is padding: " << why;
    bad.push_back(7);
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why)) << "padding is zeros";
    EXPECT_NE(why.find("is not zero padding"), std::string::npos) << why;
    bad = good;
    bad[3] |= 0x40;  // a reserved header flag
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why));
    EXPECT_NE(why.find("reserved flag"), std::string::npos) << why;
    bad = good;
    bad[kHeaderSize] = 200;  // a transport code this ufi does not know
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why));
    EXPECT_NE(why.find("unknown transport code 200"), std::string::npos) << why;
    for (size_t len = 0; len < good.size(); ++len) {
        EXPECT_FALSE(is_valid(good.data(), len)) << "every truncation is invalid: " << len;
    }
}

// Transports without a code are spelled out; a known one spelled out is not the canonical
// form and is refused (one address, one encoding).
TEST(Address, UnknownTransportsAreSpelledOut) {
    EndpointAddress a = sample();
    a.records.push_back({"ugni_x", {1, 2}, {3}});
    std::string why;
    const auto blob = pack(a, &why);
    ASSERT_FALSE(blob.empty()) << why;
    EXPECT_EQ(blob.size(), kHeaderSize + (3 + 16) + (3 + 8) + (3 + 20) + (4 + 6 + 3));
    EndpointAddress b;
    ASSERT_TRUE(unpack(blob.data(), blob.size(), b, &why)) << why;
    EXPECT_EQ(a, b);
    Resource r;
    r.tl = "ugni_x";
    r.device_addr_len = 2;
    r.iface_addr_len = 1;
    EXPECT_EQ(record_bound(r), 4 + 6 + 3u);

    // The spelled-out record is the last: code 0, length, name.
    const size_t at = blob.size() - (4 + 6 + 3);
    ASSERT_EQ(blob[at], 0);
    ASSERT_EQ(blob[at + 1], 6);
    auto bad = blob;
    bad[at + 2] = '!';  // not printable
    EXPECT_FALSE(unpack(bad.data(), bad.size(), b, &why));
    EXPECT_NE(why.find("not printable"), std::string::npos) << why;

    EndpointAddress spelled;
    spelled.uuid = 1;
    spelled.endpoint_id = 1;
    spelled.records.push_back({"ugni_x", {}, {7}});
    auto blob2 = pack(spelled);
    ASSERT_FALSE(blob2.empty());
    // A record that spells out a known transport's name (what an encoder without codes wrote).
    std::vector<uint8_t> forged(blob2.begin(), blob2.begin() + kHeaderSize);
    const std::string posix = "posix";
    forged.push_back(0);
    forged.push_back(static_cast<uint8_t>(posix.size()));
    forged.insert(forged.end(), posix.begin(), posix.end());
    forged.push_back(0);
    forged.push_back(1);
    forged.push_back(7);
    const uint32_t sum = fnv1a_skipping({forged.data(), forged.size()}, kChecksumOffset);
    for (int i = 0; i < 4; ++i) forged[kChecksumOffset + i] = static_cast<uint8_t>(sum >> (8 * i));
    EXPECT_FALSE(unpack(forged.data(), forged.size(), b, &why));
    EXPECT_NE(why.find("spelled out instead of coded"), std::string::npos) << why;
}

TEST(Address, PartialFlagRoundTrips) {
    EndpointAddress a = sample();
    a.partial = true;
    const auto blob = pack(a);
    ASSERT_FALSE(blob.empty());
    EXPECT_EQ(blob[3], 0x80 | 3);
    EndpointAddress b;
    ASSERT_TRUE(unpack(blob.data(), blob.size(), b));
    EXPECT_TRUE(b.partial);
    EXPECT_EQ(a, b);
    EXPECT_NE(describe(b).find("tcp, ...]"), std::string::npos) << describe(b);
}

TEST(Address, FixedSizePadsAndBoundsEveryRead) {
    const auto good = pack(sample());
    const size_t fixed = (good.size() + 7 + 8) & ~size_t{7};
    auto padded = good;
    ASSERT_TRUE(pad(padded, fixed));
    EXPECT_EQ(padded.size(), fixed);
    EXPECT_EQ(content_size(padded.data(), padded.size()), good.size());
    auto too_long = good;
    std::string why;
    EXPECT_FALSE(pad(too_long, good.size() - 1, &why));
    EXPECT_NE(why.find("does not fit"), std::string::npos) << why;

    // Every truncation of the padded address: only those that keep all records parse, and
    // none reads a byte past the length given (ASan sees the heap copy's end).
    for (size_t len = 0; len <= padded.size(); ++len) {
        std::vector<uint8_t> exact(padded.begin(), padded.begin() + static_cast<long>(len));
        EXPECT_EQ(is_valid(exact.data(), exact.size()), len >= good.size()) << len;
    }
}

TEST(Address, FixedSizeOfResources) {
    Resource posix, tcp;
    posix.tl = "posix";
    posix.device_addr_len = 8;
    posix.iface_addr_len = 8;
    tcp.tl = "tcp";
    tcp.device_addr_len = 18;
    tcp.iface_addr_len = 2;
    EXPECT_EQ(record_bound(posix), 3 + 16u);
    const Resource *both[] = {&posix, &tcp};
    const size_t raw = kHeaderSize + (3 + 16) + (3 + 20);
    EXPECT_EQ(fixed_size(both), (raw + 7) & ~size_t{7});
    EXPECT_EQ(fixed_size(both) % 8, 0u);
}

TEST(Address, PackRejectsWhatCannotBeEncoded) {
    EndpointAddress a;
    EXPECT_TRUE(pack(a).empty()) << "no record";
    a = sample();
    a.records[0].tl = "a_transport_name_too_long";
    EXPECT_TRUE(pack(a).empty());
    a = sample();
    a.records[0].iface_addr.resize(300);
    EXPECT_TRUE(pack(a).empty());
    a = sample();
    a.records.resize(33, a.records[0]);
    EXPECT_TRUE(pack(a).empty());
}

// Recomputes a blob's checksum over all of it (as a forger would).
void reseal(std::vector<uint8_t> &b) {
    size_t content = b.size();
    while (content > kHeaderSize && b[content - 1] == 0) --content;
    const uint32_t sum = fnv1a_skipping({b.data(), content}, kChecksumOffset);
    for (int i = 0; i < 4; ++i) b[kChecksumOffset + i] = static_cast<uint8_t>(sum >> (8 * i));
}

TEST(Address, ChecksumCatchesEveryByteChange) {
    const auto good = pack(sample());
    for (size_t i = 0; i < good.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            auto bad = good;
            bad[i] ^= static_cast<uint8_t>(1u << bit);
            EXPECT_FALSE(is_valid(bad.data(), bad.size())) << "byte " << i << " bit " << bit;
        }
    }
    // Cut short and padded with zeros (an application that copied too few bytes).
    for (size_t keep = 0; keep < good.size(); ++keep) {
        if (good[keep] == 0 && std::all_of(good.begin() + static_cast<long>(keep), good.end(),
                                           [](uint8_t b) { return b == 0; }))
            continue;  // nothing was actually cut
        auto cut = good;
        std::fill(cut.begin() + static_cast<long>(keep), cut.end(), 0);
        EXPECT_FALSE(is_valid(cut.data(), cut.size())) << "kept " << keep;
    }
    std::string why;
    auto bad = good;
    bad[good.size() - 1] ^= 1;
    EXPECT_FALSE(is_valid(bad.data(), bad.size(), &why));
    EXPECT_NE(why.find("checksum"), std::string::npos) << why;
}

// Random bytes and random mutations of a valid blob: a clear error, never a crash
// (this test runs under ASan+UBSan in CI).
TEST(Address, Fuzz) {
    std::mt19937_64 rng(12345);
    const auto good = pack(sample());
    int accepted = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        std::vector<uint8_t> buf;
        if (iter % 2 == 0) {
            buf.resize(rng() % 200);
            for (auto &b : buf) b = static_cast<uint8_t>(rng());
            if (buf.size() >= 3 && iter % 4 == 0) {
                buf[0] = 'u';
                buf[1] = 'f';
                buf[2] = 1;
            }
        } else {
            buf = good;
            const int flips = 1 + static_cast<int>(rng() % 4);
            for (int f = 0; f < flips; ++f) buf[rng() % buf.size()] = static_cast<uint8_t>(rng());
            if (rng() % 3 == 0) buf.resize(rng() % (buf.size() + 8));
            // Half the time, re-seal the checksum so the structure checks get exercised.
            if (iter % 4 == 1 && buf.size() >= kHeaderSize) reseal(buf);
        }
        EndpointAddress out;
        std::string why;
        const bool ok = unpack(buf.data(), buf.size(), out, &why);
        if (ok) {
            ++accepted;
            auto repacked = pack(out);
            EXPECT_EQ(repacked.size(), content_size(buf.data(), buf.size()));
            ASSERT_TRUE(pad(repacked, buf.size()));
            EXPECT_EQ(repacked, buf) << "what unpacks, packs back identically (with its padding)";
        } else {
            EXPECT_FALSE(why.empty());
        }
        EXPECT_EQ(ok, is_valid(buf.data(), buf.size()));
        const std::string s = to_string(buf.data(), buf.size());
        std::vector<uint8_t> back;
        EXPECT_EQ(from_string(s, back), ok);
        if (ok) {
            EXPECT_EQ(back.size(), content_size(buf.data(), buf.size())) << "strings trim padding";
        }
    }
    EXPECT_GT(accepted, 0) << "mutations that keep the structure are accepted";
}

}  // namespace
}  // namespace ufi::transports::address
