// The endpoint address blob: round trips, the printable form, and rejection of every kind
// of malformed input (fuzzed), never a crash.
#include "transports/address.h"

#include <gtest/gtest.h>

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
    EXPECT_EQ(blob.size(), kHeaderSize + (1 + 5 + 2 + 16) + (1 + 4 + 2 + 8) + (1 + 3 + 2 + 20));
    EndpointAddress b;
    ASSERT_TRUE(unpack(blob.data(), blob.size(), b, &why)) << why;
    EXPECT_EQ(a, b);
    EXPECT_TRUE(is_valid(blob.data(), blob.size()));
    EXPECT_EQ(blob_size(blob.data(), blob.size() + 100), blob.size());
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
    EXPECT_NE(why.find("truncated"), std::string::npos);
    bad = good;
    bad.push_back(0);
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why)) << "trailing bytes";
    bad = good;
    bad[kHeaderSize + 1] = '!';  // transport name not printable
    EXPECT_FALSE(unpack(bad.data(), bad.size(), out, &why));
    for (size_t len = 0; len < good.size(); ++len) {
        EXPECT_FALSE(is_valid(good.data(), len)) << "every truncation is invalid: " << len;
    }
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
        }
        EndpointAddress out;
        std::string why;
        const bool ok = unpack(buf.data(), buf.size(), out, &why);
        if (ok) {
            ++accepted;
            EXPECT_EQ(pack(out), buf) << "what unpacks, packs back identically";
        } else {
            EXPECT_FALSE(why.empty());
        }
        EXPECT_EQ(ok, is_valid(buf.data(), buf.size()));
        const std::string s = to_string(buf.data(), buf.size());
        std::vector<uint8_t> back;
        EXPECT_EQ(from_string(s, back), ok);
    }
    EXPECT_GT(accepted, 0) << "mutations that keep the structure are accepted";
}

}  // namespace
}  // namespace ufi::transports::address
