// fi_av_insertsvc and fi_av_insertsym: node/service addresses become tcp-only ufi addresses;
// symmetric ranges in the page's order.
#include "av_fixture.h"

#include "runtime/av/av.h"
#include "transports/address_svc.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace ufi::av_test {
namespace {

using runtime::av::expand_symmetric;
using Pairs = std::vector<std::pair<std::string, std::string>>;

std::vector<uint8_t> tcp_blob(const char *ip, uint16_t port) {
    sockaddr_storage ss{};
    if (std::strchr(ip, ':') != nullptr) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        inet_pton(AF_INET6, ip, &in6->sin6_addr);
    } else {
        auto *in = reinterpret_cast<sockaddr_in *>(&ss);
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        inet_pton(AF_INET, ip, &in->sin_addr);
    }
    // As fi_av_lookup returns it: padded to the domain's address length.
    return padded(address::tcp_peer_address(reinterpret_cast<sockaddr *>(&ss)));
}

std::vector<uint8_t> lookup(fid_av *av, fi_addr_t a) {
    std::vector<uint8_t> buf(512);
    size_t len = buf.size();
    EXPECT_EQ(fi_av_lookup(av, a, buf.data(), &len), 0);
    buf.resize(len);
    return buf;
}

TEST(AvSymmetric, ThePagesExample) {
    Pairs out;
    ASSERT_EQ(expand_symmetric("10.1.1.1", 2, "5000", 2, out, nullptr), 0);
    const Pairs expect = {
        {"10.1.1.1", "5000"}, {"10.1.1.1", "5001"}, {"10.1.1.2", "5000"}, {"10.1.1.2", "5001"}};
    EXPECT_EQ(out, expect);
    ASSERT_EQ(expand_symmetric("host10", 2, "5000", 2, out, nullptr), 0);
    const Pairs hosts = {
        {"host10", "5000"}, {"host10", "5001"}, {"host11", "5000"}, {"host11", "5001"}};
    EXPECT_EQ(out, hosts);
}

TEST(AvSymmetric, Ranges) {
    Pairs out;
    ASSERT_EQ(expand_symmetric("10.0.0.255", 2, "1", 1, out, nullptr), 0);
    EXPECT_EQ(out[1].first, "10.0.1.0") << "IPv4 carries into the next octet";
    ASSERT_EQ(expand_symmetric("fd00::ffff", 2, "7", 1, out, nullptr), 0);
    EXPECT_EQ(out[1].first, "fd00::1:0");
    ASSERT_EQ(expand_symmetric("node09", 3, "100", 1, out, nullptr), 0);
    EXPECT_EQ(out[1].first, "node10") << "the suffix keeps its width";
    EXPECT_EQ(out[2].first, "node11");
    ASSERT_EQ(expand_symmetric("h9", 2, "100", 1, out, nullptr), 0);
    EXPECT_EQ(out[1].first, "h10");
    ASSERT_EQ(expand_symmetric("localhost", 1, "65535", 1, out, nullptr), 0)
        << "one node needs no suffix";
    EXPECT_EQ(out.size(), 1u);
}

TEST(AvSymmetric, Errors) {
    Pairs out;
    std::string why;
    EXPECT_EQ(expand_symmetric(nullptr, 1, "1", 1, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("h1", 1, nullptr, 1, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("h1", 0, "1", 1, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("h1", 1, "1", 0, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("host", 2, "1", 1, out, &why), -FI_EINVAL);
    EXPECT_NE(why.find("suffix"), std::string::npos);
    EXPECT_EQ(expand_symmetric("h1", 1, "http", 1, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("h1", 1, "65535", 2, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("h1", 1, "70000", 1, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("255.255.255.255", 2, "1", 1, out, &why), -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 2, "1", 1, out, &why),
              -FI_EINVAL);
    EXPECT_EQ(expand_symmetric("h1", size_t{1} << 40, "1", size_t{1} << 40, out, &why), -FI_EINVAL);
}

TEST_F(AvTest, InsertsvcNumericHost) {
    open_domain();
    fid_av *av = open_av();
    fi_addr_t out = 99;
    ASSERT_EQ(fi_av_insertsvc(av, "192.0.2.77", "4791", &out, 0, nullptr), 1);
    EXPECT_EQ(out, 0u);
    const auto got = lookup(av, out);
    EXPECT_EQ(got, tcp_blob("192.0.2.77", 4791));
    address::EndpointAddress a;
    ASSERT_TRUE(address::unpack(got.data(), got.size(), a));
    EXPECT_EQ(a.uuid, 0u) << "identity learned at wireup";
    ASSERT_EQ(a.records.size(), 1u);
    EXPECT_EQ(a.records[0].tl, "tcp");
    const std::vector<uint8_t> dev = {0, AF_INET, 192, 0, 2, 77};
    EXPECT_EQ(a.records[0].device_addr, dev);
    const std::vector<uint8_t> port = {4791 >> 8, 4791 & 0xff};
    EXPECT_EQ(a.records[0].iface_addr, port);
    ASSERT_EQ(fi_av_insertsvc(av, "fd00::9", "80", &out, 0, nullptr), 1);
    EXPECT_EQ(lookup(av, out), tcp_blob("fd00::9", 80));
}

TEST_F(AvTest, InsertsvcHostNameAndStringAddress) {
    open_domain();
    fid_av *av = open_av();
    fi_addr_t out = 99;
    ASSERT_EQ(fi_av_insertsvc(av, "localhost", "5000", &out, 0, nullptr), 1);
    const auto got = lookup(av, out);
    EXPECT_TRUE(got == tcp_blob("127.0.0.1", 5000) || got == tcp_blob("::1", 5000));
    // node may be an FI_ADDR_STR address, with service NULL.
    const auto b = make_blob(4);
    const auto t = trimmed(b);
    const std::string s = address::to_string(t.data(), t.size());
    ASSERT_EQ(fi_av_insertsvc(av, s.c_str(), nullptr, &out, 0, nullptr), 1);
    EXPECT_EQ(lookup(av, out), b);
}

TEST_F(AvTest, InsertsvcErrors) {
    open_domain();
    fid_av *av = open_av();
    fi_addr_t out = 0;
    const auto b = make_blob(4);
    const std::string s = address::to_string(b.data(), b.size());
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insertsvc(av, nullptr, "1", &out, 0, nullptr), -FI_EINVAL);
        EXPECT_EQ(w.count(), 1u);
        EXPECT_TRUE(w.contains("node"));
    }
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insertsvc(av, s.c_str(), "5000", &out, 0, nullptr), -FI_EINVAL)
            << "service must be NULL";
        EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", nullptr, &out, 0, nullptr), -FI_EINVAL)
            << "no port";
        EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", "no-such-service-x", &out, 0, nullptr),
                  -FI_EINVAL);
        EXPECT_EQ(w.count(), 3u);
    }
    EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", "1", &out, FI_READ, nullptr), -FI_EBADFLAGS);
    int status = 7;
    WarnCapture w;
    EXPECT_EQ(fi_av_insertsvc(av, "fi_ufi://AAAA", nullptr, &out, FI_SYNC_ERR, &status), 0);
    EXPECT_EQ(out, FI_ADDR_NOTAVAIL);
    EXPECT_EQ(status, FI_EINVAL);
    EXPECT_EQ(w.count(), 1u);
}

TEST_F(AvTest, InsertsymInPageOrder) {
    open_domain();
    fid_av *av = open_av();
    std::vector<fi_addr_t> out(6);
    ASSERT_EQ(fi_av_insertsym(av, "10.1.1.1", 3, "5000", 2, out.data(), 0, nullptr), 6);
    const char *ips[] = {"10.1.1.1", "10.1.1.1", "10.1.1.2", "10.1.1.2", "10.1.1.3", "10.1.1.3"};
    for (size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(out[i], i);
        EXPECT_EQ(lookup(av, out[i]), tcp_blob(ips[i], static_cast<uint16_t>(5000 + i % 2))) << i;
    }
    WarnCapture w;
    EXPECT_EQ(fi_av_insertsym(av, "host", 2, "5000", 1, out.data(), 0, nullptr), -FI_EINVAL);
    EXPECT_EQ(w.count(), 1u);
    EXPECT_EQ(fi_av_insertsym(av, "10.0.0.1", 1, nullptr, 1, out.data(), 0, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_av_insertsym(av, "10.0.0.1", 0, "1", 1, out.data(), 0, nullptr), -FI_EINVAL);
}

}  // namespace
}  // namespace ufi::av_test
