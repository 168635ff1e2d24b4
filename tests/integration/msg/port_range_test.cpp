// UFI_TCP_PORT_RANGE: the tcp transport's listeners take ports of the range, so a firewall can
// hold them. Meson runs this with the range 29100-29107 (below Linux's ephemeral ports, so
// other programs' connections do not take them meanwhile), tcp alone, on lo. Endpoints opened
// one after another each listen on a port of their own inside the range; once it is full, one
// more endpoint cannot listen and its fi_enable fails with -FI_ENODEV (tcp is its only
// transport, and the log says why); a closed endpoint's port serves the next one; endpoints in
// the range exchange messages. (Ports of the range something else holds when the test starts
// are counted out.)
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <vector>

namespace {

constexpr uint16_t kFirst = 29100, kLast = 29107;  // (meson.build)

struct Objects {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
};

class PortRange : public ::testing::Test {
  protected:
    void SetUp() override {
        fi_info *hints = fi_allocinfo();
        hints->ep_attr->type = FI_EP_RDM;
        hints->caps = FI_MSG | FI_TAGGED;
        hints->addr_format = FI_SOCKADDR_IN;  // the name is the listener's IP and port
        ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &o_.info), 0);
        fi_freeinfo(hints);
        ASSERT_EQ(fi_fabric(o_.info->fabric_attr, &o_.fabric, nullptr), 0);
        ASSERT_EQ(fi_domain(o_.fabric, o_.info, &o_.domain, nullptr), 0);
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        ASSERT_EQ(fi_av_open(o_.domain, &av_attr, &o_.av, nullptr), 0);
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        ASSERT_EQ(fi_cq_open(o_.domain, &cq_attr, &o_.cq, nullptr), 0);
    }
    void TearDown() override {
        for (fid_ep *ep : eps_) fi_close(&ep->fid);
        if (o_.cq) fi_close(&o_.cq->fid);
        if (o_.av) fi_close(&o_.av->fid);
        if (o_.domain) fi_close(&o_.domain->fid);
        if (o_.fabric) fi_close(&o_.fabric->fid);
        if (o_.info) fi_freeinfo(o_.info);
    }
    // An endpoint, enabled: fi_enable's result, the endpoint kept (closed at TearDown) when 0.
    int open(fid_ep **out) {
        fid_ep *ep = nullptr;
        if (fi_endpoint(o_.domain, o_.info, &ep, nullptr) != 0) return -FI_EOTHER;
        if (fi_ep_bind(ep, &o_.av->fid, 0) != 0 || fi_ep_bind(ep, &o_.cq->fid, FI_TRANSMIT | FI_RECV) != 0) {
            fi_close(&ep->fid);
            return -FI_EOTHER;
        }
        const int rc = fi_enable(ep);
        if (rc != 0) {
            fi_close(&ep->fid);
            return rc;
        }
        eps_.push_back(ep);
        *out = ep;
        return 0;
    }
    uint16_t port_of(fid_ep *ep) {
        sockaddr_in sa{};
        size_t len = sizeof sa;
        EXPECT_EQ(fi_getname(&ep->fid, &sa, &len), 0);
        EXPECT_EQ(sa.sin_family, AF_INET);
        return ntohs(sa.sin_port);
    }
    void close(fid_ep *ep) {
        eps_.erase(std::find(eps_.begin(), eps_.end(), ep));
        EXPECT_EQ(fi_close(&ep->fid), 0);
    }
    Objects o_;
    std::vector<fid_ep *> eps_;
};

// Whether nothing holds tcp port `port` now (a test bind to the wildcard address).
bool port_free(uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    sa.sin_port = htons(port);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0;
    ::close(fd);
    return ok;
}

TEST_F(PortRange, ListenersTakePortsOfTheRangeUntilItIsFull) {
    int free = 0;
    for (unsigned p = kFirst; p <= kLast; ++p) free += port_free(static_cast<uint16_t>(p));
    ASSERT_GE(free, 4) << "most of the range is held by something else on this machine";
    std::set<uint16_t> ports;
    std::vector<fid_ep *> eps;
    for (int i = 0; i < free; ++i) {
        fid_ep *ep = nullptr;
        ASSERT_EQ(open(&ep), 0) << "endpoint " << i << " of the range's " << free << " free ports";
        const uint16_t port = port_of(ep);
        EXPECT_GE(port, kFirst);
        EXPECT_LE(port, kLast);
        EXPECT_TRUE(ports.insert(port).second) << "port " << port << " twice";
        eps.push_back(ep);
    }
    fid_ep *extra = nullptr;
    EXPECT_EQ(open(&extra), -FI_ENODEV) << "the range is full";
    // A closed endpoint's port serves the next one.
    const uint16_t freed = port_of(eps[3]);
    close(eps[3]);
    fid_ep *again = nullptr;
    ASSERT_EQ(open(&again), 0);
    EXPECT_EQ(port_of(again), freed);
}

TEST_F(PortRange, EndpointsInTheRangeExchangeMessages) {
    fid_ep *a = nullptr, *b = nullptr;
    ASSERT_EQ(open(&a), 0);
    ASSERT_EQ(open(&b), 0);
    sockaddr_in name{};
    size_t len = sizeof name;
    ASSERT_EQ(fi_getname(&b->fid, &name, &len), 0);
    fi_addr_t to_b = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insert(o_.av, &name, 1, &to_b, 0, nullptr), 1);
    uint64_t out = 0x5eed, in = 0;
    ASSERT_EQ(fi_trecv(b, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 9, 0, nullptr), 0);
    ASSERT_EQ(fi_tsend(a, &out, sizeof out, nullptr, to_b, 9, nullptr), 0);
    int done = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (done < 2 && std::chrono::steady_clock::now() < until) {
        fi_cq_tagged_entry e{};
        const ssize_t rc = fi_cq_read(o_.cq, &e, 1);
        ASSERT_TRUE(rc == 1 || rc == -FI_EAGAIN) << fi_strerror(int(-rc));
        done += rc == 1;
    }
    EXPECT_EQ(done, 2);
    EXPECT_EQ(in, out);
}

}  // namespace
