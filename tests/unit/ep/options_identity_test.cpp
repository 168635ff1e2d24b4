// runtime/ep pure parts: endpoint options (defaults, limits, sizes, set-only and read-only
// options, the state rule) and the identity registry (uuids, unique endpoint ids).
#include "runtime/ep/identity.h"
#include "runtime/ep/options.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <set>

namespace ufi::runtime::ep {
namespace {

EndpointOptions make() {
    fi_ep_attr ep{};
    ep.max_msg_size = 1 << 20;
    fi_tx_attr tx{};
    tx.inject_size = 76;
    tx.size = 100;
    fi_rx_attr rx{};
    rx.size = 200;
    fi_info info{};
    info.ep_attr = &ep;
    info.tx_attr = &tx;
    info.rx_attr = &rx;
    return EndpointOptions::defaults_for(info);
}

size_t get_size(const EndpointOptions &o, int name) {
    size_t v = 0, len = sizeof v;
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, name, &v, &len), 0) << option_name(name);
    EXPECT_EQ(len, sizeof(size_t));
    return v;
}

TEST(EndpointOptions, DefaultsFromTheInfo) {
    const EndpointOptions o = make();
    EXPECT_EQ(get_size(o, FI_OPT_MIN_MULTI_RECV), 76U);
    for (int n :
         {FI_OPT_MAX_MSG_SIZE, FI_OPT_MAX_TAGGED_SIZE, FI_OPT_MAX_RMA_SIZE, FI_OPT_MAX_ATOMIC_SIZE})
        EXPECT_EQ(get_size(o, n), size_t{1} << 20) << option_name(n);
    for (int n : {FI_OPT_INJECT_MSG_SIZE, FI_OPT_INJECT_TAGGED_SIZE, FI_OPT_INJECT_RMA_SIZE,
                  FI_OPT_INJECT_ATOMIC_SIZE})
        EXPECT_EQ(get_size(o, n), 76U) << option_name(n);
    EXPECT_EQ(get_size(o, FI_OPT_TX_SIZE), 100U);
    EXPECT_EQ(get_size(o, FI_OPT_RX_SIZE), 200U);
    int p2p = -1;
    size_t len = sizeof p2p;
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &p2p, &len), 0);
    EXPECT_EQ(p2p, FI_HMEM_P2P_ENABLED);
    EXPECT_TRUE(o.shared_memory_permitted);
    EXPECT_FALSE(o.firewall_addr);
}

TEST(EndpointOptions, GetTooSmallReportsTheSize) {
    const EndpointOptions o = make();
    char small[2];
    size_t len = sizeof small;
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, small, &len), -FI_ETOOSMALL);
    EXPECT_EQ(len, sizeof(size_t));
    len = 0;
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, nullptr, &len), -FI_ETOOSMALL);
    EXPECT_EQ(len, sizeof(size_t));
    len = 0;
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, nullptr, &len), -FI_ETOOSMALL);
    EXPECT_EQ(len, sizeof(int));
}

TEST(EndpointOptions, SetWithinLimits) {
    EndpointOptions o = make();
    size_t v = 4096;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &v, sizeof v), 0);
    EXPECT_EQ(get_size(o, FI_OPT_MAX_MSG_SIZE), 4096U);
    v = (size_t{1} << 20) + 1;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_MAX_RMA_SIZE, &v, sizeof v), -FI_EINVAL);
    v = 0;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_INJECT_MSG_SIZE, &v, sizeof v), 0);
    v = 77;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_INJECT_TAGGED_SIZE, &v, sizeof v),
              -FI_EINVAL);
    v = 0;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_TX_SIZE, &v, sizeof v), -FI_EINVAL)
        << "queues hold >= 1";
    v = 50;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_RX_SIZE, &v, sizeof v), 0);
    EXPECT_EQ(get_size(o, FI_OPT_RX_SIZE), 50U);
    int wrong = 1;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &wrong, sizeof wrong),
              -FI_EINVAL);
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &wrong, sizeof wrong),
              -FI_EINVAL);
}

TEST(EndpointOptions, OnlyMinMultiRecvChangesAfterEnable) {
    EndpointOptions o = make();
    size_t v = 64;
    EXPECT_EQ(set_option(o, true, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, sizeof v), 0);
    EXPECT_EQ(get_size(o, FI_OPT_MIN_MULTI_RECV), 64U);
    EXPECT_EQ(set_option(o, true, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &v, sizeof v),
              -FI_EOPBADSTATE);
    bool f = false;
    EXPECT_EQ(set_option(o, true, FI_OPT_ENDPOINT, FI_OPT_SHARED_MEMORY_PERMITTED, &f, sizeof f),
              -FI_EOPBADSTATE);
    EXPECT_TRUE(o.shared_memory_permitted);
}

TEST(EndpointOptions, BooleanOptions) {
    EndpointOptions o = make();
    bool f = false, t = true;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_SHARED_MEMORY_PERMITTED, &f, sizeof f),
              0);
    EXPECT_FALSE(o.shared_memory_permitted);
    int one = 1;
    EXPECT_EQ(
        set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_SHARED_MEMORY_PERMITTED, &one, sizeof one), 0)
        << "int-sized booleans are accepted";
    EXPECT_TRUE(o.shared_memory_permitted);
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_SHARED_MEMORY_PERMITTED, &f, 3),
              -FI_EINVAL);
    // Set-only options (the page): getopt does not know them.
    size_t len = sizeof(bool);
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_SHARED_MEMORY_PERMITTED, &f, &len),
              -FI_ENOPROTOOPT);
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_CUDA_API_PERMITTED, &f, &len), -FI_ENOPROTOOPT);
    // No CUDA here: prohibiting it is fine, permitting it is -FI_EINVAL (the page).
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_CUDA_API_PERMITTED, &f, sizeof f), 0);
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_CUDA_API_PERMITTED, &t, sizeof t),
              -FI_EINVAL);
    // Firewall address: get and set.
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_FIREWALL_ADDR, &t, sizeof t), 0);
    bool got = false;
    len = sizeof got;
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_FIREWALL_ADDR, &got, &len), 0);
    EXPECT_TRUE(got);
    EXPECT_EQ(len, sizeof(bool));
    int as_int = 0;
    len = sizeof as_int;
    EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, FI_OPT_FIREWALL_ADDR, &as_int, &len), 0);
    EXPECT_EQ(as_int, 1);
}

TEST(EndpointOptions, HmemP2p) {
    EndpointOptions o = make();
    int v = FI_HMEM_P2P_DISABLED;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &v, sizeof v), 0);
    EXPECT_EQ(o.hmem_p2p, FI_HMEM_P2P_DISABLED);
    v = FI_HMEM_P2P_REQUIRED;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &v, sizeof v),
              -FI_EOPNOTSUPP);
    v = 42;
    EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &v, sizeof v), -FI_EINVAL);
    EXPECT_EQ(o.hmem_p2p, FI_HMEM_P2P_DISABLED);
}

TEST(EndpointOptions, UnknownLevelsAndOptions) {
    EndpointOptions o = make();
    size_t v = 0, len = sizeof v;
    EXPECT_EQ(get_option(o, 7, FI_OPT_MAX_MSG_SIZE, &v, &len), -FI_ENOPROTOOPT);
    EXPECT_EQ(set_option(o, false, 7, FI_OPT_MAX_MSG_SIZE, &v, sizeof v), -FI_ENOPROTOOPT);
    for (int n : {int{FI_OPT_CM_DATA_SIZE}, int{FI_OPT_BUFFERED_MIN}, int{FI_OPT_BUFFERED_LIMIT},
                  int{FI_OPT_SEND_BUF_SIZE}, int{FI_OPT_RECV_BUF_SIZE}, int{FI_OPT_XPU_TRIGGER},
                  1000, -5}) {
        len = sizeof v;
        EXPECT_EQ(get_option(o, FI_OPT_ENDPOINT, n, &v, &len), -FI_ENOPROTOOPT) << n;
        EXPECT_EQ(set_option(o, false, FI_OPT_ENDPOINT, n, &v, sizeof v), -FI_ENOPROTOOPT) << n;
    }
}

TEST(Identity, UuidsAreRandomAndNonZero) {
    std::set<uint64_t> seen;
    for (int i = 0; i < 100; ++i) {
        const uint64_t u = random_uuid();
        EXPECT_NE(u, 0U);
        seen.insert(u);
    }
    EXPECT_EQ(seen.size(), 100U);
}

TEST(Identity, IdsAreUniqueAmongLiveEndpoints) {
    const uint32_t a = ids::acquire();
    const uint32_t b = ids::acquire();
    EXPECT_NE(a, 0U);
    EXPECT_NE(a, b);
    EXPECT_TRUE(ids::in_use(a));
    EXPECT_FALSE(ids::claim(a)) << "a live endpoint holds it";
    ids::release(a);
    EXPECT_FALSE(ids::in_use(a));
    EXPECT_TRUE(ids::claim(a)) << "free again (a restarted process takes its old id)";
    EXPECT_FALSE(ids::claim(0)) << "0 is never an id";
    // acquire() skips claimed ids.
    const uint32_t big = b + 1;
    ASSERT_TRUE(ids::claim(big));
    const uint32_t c = ids::acquire();
    EXPECT_NE(c, big);
    for (uint32_t id : {a, b, big, c}) ids::release(id);
}

}  // namespace
}  // namespace ufi::runtime::ep
