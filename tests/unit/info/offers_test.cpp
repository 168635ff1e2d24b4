// Derivation of fi_info limits from UCT attributes (offer_from_choice), on synthetic
// resources shaped like this machine's and an InfiniBand node's.
#include "runtime/info/capabilities.h"
#include "runtime/info/offers.h"
#include "tests/unit/transports/synthetic_resources.h"
#include "transports/selection.h"
#include "transports/selection_config.h"

#include <gtest/gtest.h>

#include <climits>

namespace ufi::runtime::info {
namespace {

namespace tt = ufi::transports::testing;

std::vector<DomainOffer> offers_for(const std::vector<transports::Resource> &res, const char *tls) {
    const auto cfg = transports::parse_selection_config(tls, "all");
    const auto sel = transports::select_domains(res, transports::TopologyView{}, cfg);
    std::vector<DomainOffer> out;
    for (const auto &c : sel.choices) out.push_back(offer_from_choice(res, c));
    return out;
}

TEST(Offers, ThisMachine) {
    auto res = tt::this_machine_resources();
    for (auto &r : res) {
        if (r.tl == "tcp" && r.dev == "eth0") r.ip_addrs = {"192.0.2.2"};
    }
    const auto offers = offers_for(res, "all");
    ASSERT_EQ(offers.size(), 3u);
    EXPECT_EQ(offers[0].name, "eth0");
    EXPECT_TRUE(offers[0].reaches_local && offers[0].reaches_remote);
    EXPECT_EQ(offers[1].name, "lo");
    EXPECT_FALSE(offers[1].reaches_remote);
    EXPECT_EQ(offers[2].name, "shm");
    // posix/sysv am_short_iov carries 100 bytes in all; ufi's header takes 24 of them.
    const size_t shm_inject = 100 - kEagerShortOverhead;
    EXPECT_EQ(shm_inject, 76u);
    for (const auto &o : offers) {
        EXPECT_EQ(o.inject_size, shm_inject) << o.name;
        EXPECT_EQ(o.max_msg_size, static_cast<size_t>(SSIZE_MAX));
    }
    // tcp's zero-copy AM gathers 6 iovs; the shm-only domain packs into bounce buffers.
    EXPECT_EQ(offers[0].iov_limit, 6u);
    EXPECT_EQ(offers[2].iov_limit, kDefaultIovLimit);
    EXPECT_EQ(offers[0].ip_addrs, std::vector<std::string>{"192.0.2.2"}) << "the net device's addresses";
    EXPECT_TRUE(offers[2].ip_addrs.empty());
}

TEST(Offers, TcpOnlyHasTcpLimits) {
    const auto res = tt::this_machine_resources();
    const auto offers = offers_for(res, "tcp");
    ASSERT_FALSE(offers.empty());
    EXPECT_EQ(offers[0].name, "eth0");
    // tcp reaches the peers of this host too (fi_getinfo("127.0.0.1", port) finds this
    // domain under UFI_TLS=tcp; libfabric's tcp provider says FI_LOCAL_COMM as well).
    EXPECT_TRUE(offers[0].reaches_local);
    EXPECT_EQ(offers[0].inject_size, 8192 - kEagerShortOverhead);
}

// Processes that chose different transports exchange addresses packed at one length (Open
// MPI's ranks hand fi_av_insert count x addrlen bytes): every domain whose names fit
// FI_NAME_MAX uses all 64 bytes, a tcp-only domain as much as one with shared memory too.
TEST(Offers, NamesThatFitTakeFiNameMaxWhateverTheTransports) {
    const auto res = tt::this_machine_resources();
    for (const char *tls : {"all", "tcp", "tcp,self", "posix,self", "shm", "posix,cma,self,tcp"}) {
        const auto offers = offers_for(res, tls);
        ASSERT_FALSE(offers.empty()) << "UFI_TLS=" << tls;
        for (const auto &o : offers) {
            EXPECT_EQ(o.addr_len, 64u) << "UFI_TLS=" << tls << ", domain " << o.name;
        }
    }
}

TEST(Offers, InfinibandNodeFirstOfferIsRdma) {
    const auto res = tt::ib_node_resources();
    const auto offers = offers_for(res, "all");
    ASSERT_FALSE(offers.empty());
    EXPECT_EQ(offers[0].name.rfind("mlx5_", 0), 0u) << offers[0].name;
    EXPECT_TRUE(offers[0].reaches_local && offers[0].reaches_remote);
    EXPECT_GT(offers[0].inject_size, 0u);
}

}  // namespace
}  // namespace ufi::runtime::info
