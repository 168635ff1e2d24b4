// Discovery on this machine (UCX 1.13 with self, posix, sysv, cma, tcp on lo and
// eth0 here). Robust elsewhere: skips when UCT finds nothing, and only asserts
// what must exist wherever UCX runs (self, posix, tcp/lo).
#include "base/config/config.h"
#include "transports/iface/discovery.h"
#include "transports/flag_names.h"

#include <uct/api/uct.h>

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <algorithm>

namespace ufi::transports {
namespace {

const Resource *find_tl(const Discovery &d, const std::string &tl) {
    for (const Resource &r : d.resources) {
        if (r.tl == tl) {
            return &r;
        }
    }
    return nullptr;
}

class DiscoveryTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (discovery().resources.empty()) {
            GTEST_SKIP() << "UCT found no transport resources here";
        }
    }
    const Discovery &d = discovery();
};

TEST(DiscoveryCache, SameObjectEveryTime) {
    const Discovery &a = discovery();
    const Discovery &b = discovery();
    EXPECT_EQ(&a, &b);
}

TEST_F(DiscoveryTest, FindsTheTransportsEveryUcxHas) {
    const Resource *self = find_tl(d, "self");
    ASSERT_NE(self, nullptr);
    EXPECT_EQ(self->type, DeviceType::Loopback);
    EXPECT_TRUE(self->usable) << self->error;

    const Resource *posix = find_resource(d, "posix", "memory");
    ASSERT_NE(posix, nullptr);
    EXPECT_EQ(posix->type, DeviceType::SharedMemory);
    EXPECT_TRUE(posix->usable) << posix->error;

    const Resource *lo = find_resource(d, "tcp", "lo");
    ASSERT_NE(lo, nullptr);
    EXPECT_EQ(lo->type, DeviceType::Network);
    EXPECT_TRUE(lo->usable) << lo->error;
    EXPECT_TRUE(lo->is_loopback_netdev);
    EXPECT_EQ(lo->netdev, "lo");
    EXPECT_TRUE(std::find(lo->ip_addrs.begin(), lo->ip_addrs.end(), "127.0.0.1") !=
                lo->ip_addrs.end());
    EXPECT_FALSE(lo->pci_bus_id.has_value());
}

// A shared-memory FIFO's inline limit (transports/iface/fifo_tuning.h).
size_t expected_shm_short() {
    const int64_t elem = config::registry().get_int("UFI_SHM_FIFO_ELEM_SIZE");
    return elem == 0 ? 100u : static_cast<size_t>(elem) - 28;
}

TEST_F(DiscoveryTest, LimitsAreSane) {
    const Resource *posix = find_resource(d, "posix", "memory");
    ASSERT_NE(posix, nullptr);
    ASSERT_TRUE(posix->usable);
    EXPECT_TRUE(posix->has(UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                           UCT_IFACE_FLAG_CONNECT_TO_IFACE));
    // 8-byte header included: the FIFO element less its 28-byte header (ufi's 576, or UCX's
    // 128 where UFI_SHM_FIFO_ELEM_SIZE is 0).
    EXPECT_EQ(posix->limits.am.max_short, expected_shm_short());
    EXPECT_GE(posix->limits.am.max_bcopy, 8192U);
    EXPECT_TRUE(posix->event_flags & UCT_IFACE_FLAG_EVENT_FD);
    EXPECT_NE(posix->limits.atomic64.fop_flags & UCS_BIT(UCT_ATOMIC_OP_CSWAP), 0U);
    EXPECT_TRUE(posix->md_cap_flags & UCT_MD_FLAG_ALLOC);
    EXPECT_GT(posix->rkey_packed_size, 0U);
    EXPECT_GT(posix->iface_addr_len, 0U);
    EXPECT_GT(posix->perf.bandwidth(), 1e9);

    const Resource *lo = find_resource(d, "tcp", "lo");
    ASSERT_NE(lo, nullptr);
    EXPECT_TRUE(lo->has(UCT_IFACE_FLAG_CONNECT_TO_IFACE));
    EXPECT_TRUE(lo->has(UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE));
    EXPECT_TRUE(lo->has(UCT_IFACE_FLAG_AM_ZCOPY));
    EXPECT_GT(lo->limits.am.max_zcopy, 0U);
    EXPECT_GT(lo->limits.am.max_iov, 0U);
    EXPECT_GT(lo->limits.am.max_hdr, 0U);
    EXPECT_GT(lo->perf.latency_s, 0);
    EXPECT_GT(lo->perf.max_num_eps, 0U);
    EXPECT_GT(lo->device_addr_len, 0U);

    const Resource *self = find_tl(d, "self");
    ASSERT_NE(self, nullptr);
    EXPECT_EQ(self->event_flags & UCT_IFACE_FLAG_EVENT_FD, 0U);  // never ask self for an fd

    for (const Resource &r : d.resources) {
        if (!r.usable) {
            EXPECT_FALSE(r.error.empty()) << r.label();
            continue;
        }
        EXPECT_NE(r.iface_cap_flags, 0U) << r.label();
        if (r.has(UCT_IFACE_FLAG_AM_SHORT)) {
            EXPECT_GE(r.limits.am.max_short, 8U) << r.label();
        }
        EXPECT_FALSE(r.component.empty()) << r.label();
        EXPECT_NE(find_md(d, r.md), nullptr) << r.label();
        EXPECT_FALSE(iface_cap_flag_names(r.iface_cap_flags).empty()) << r.label();
    }
}

TEST_F(DiscoveryTest, NetworkDevicesKnowTheirInterface) {
    const Resource *eth0 = find_resource(d, "tcp", "eth0");
    if (eth0 == nullptr) {
        GTEST_SKIP() << "no tcp/eth0 here";
    }
    EXPECT_FALSE(eth0->is_loopback_netdev);
    EXPECT_EQ(eth0->netdev, "eth0");
    const NetInterface *nif = find_interface(d, "eth0");
    ASSERT_NE(nif, nullptr);
    EXPECT_FALSE(nif->is_loopback);
    EXPECT_EQ(eth0->ip_addrs.size(), nif->addresses.size());
    for (const Resource &r : d.resources) {
        if (r.type == DeviceType::Network && r.dev != "lo") {
            EXPECT_FALSE(r.is_loopback_netdev) << r.label();
        }
    }
}

TEST_F(DiscoveryTest, ShmTransportsOfThisMachine) {
    // Present wherever UCX has its shm components; cma may be unusable (ptrace).
    if (find_resource(d, "sysv", "memory") != nullptr) {
        EXPECT_EQ(find_resource(d, "sysv", "memory")->limits.am.max_short, expected_shm_short());
    }
    const Resource *cma = find_resource(d, "cma", "memory");
    if (cma != nullptr && cma->usable) {
        EXPECT_TRUE(cma->has(UCT_IFACE_FLAG_GET_ZCOPY | UCT_IFACE_FLAG_PUT_ZCOPY));
        EXPECT_FALSE(cma->has(UCT_IFACE_FLAG_AM_SHORT));
    }
}

TEST_F(DiscoveryTest, ComponentsAndMemoryDomains) {
    const ComponentInfo *tcp = find_component(d, "tcp");
    ASSERT_NE(tcp, nullptr);
    EXPECT_TRUE(tcp->has_cm);
    EXPECT_TRUE(tcp->cm_usable) << tcp->cm_error;
    EXPECT_GT(tcp->cm_max_conn_priv, 0U);
    EXPECT_TRUE(std::find(tcp->md_names.begin(), tcp->md_names.end(), "tcp") !=
                tcp->md_names.end());

    const ComponentInfo *self = find_component(d, "self");
    ASSERT_NE(self, nullptr);
    EXPECT_FALSE(self->has_cm);

    // A CM that cannot open (rdmacm without RDMA devices) is listed with its error.
    const ComponentInfo *rdmacm = find_component(d, "rdmacm");
    if (rdmacm != nullptr && !rdmacm->cm_usable) {
        EXPECT_TRUE(rdmacm->has_cm);
        EXPECT_FALSE(rdmacm->cm_error.empty());
    }

    const MdInfo *posix = find_md(d, "posix");
    ASSERT_NE(posix, nullptr);
    EXPECT_TRUE(posix->usable);
    EXPECT_EQ(posix->component, "posix");
    EXPECT_TRUE(posix->cap_flags & UCT_MD_FLAG_ALLOC);
    EXPECT_GT(posix->max_alloc, 0U);

    const MdInfo *tcp_md = find_md(d, "tcp");
    ASSERT_NE(tcp_md, nullptr);
    EXPECT_TRUE(tcp_md->cap_flags & UCT_MD_FLAG_REG);
    EXPECT_TRUE(tcp_md->reg_mem_types & UCS_BIT(UCS_MEMORY_TYPE_HOST));
}

TEST_F(DiscoveryTest, InterfacesListLoopback) {
    const NetInterface *lo = find_interface(d, "lo");
    ASSERT_NE(lo, nullptr);
    EXPECT_TRUE(lo->is_loopback);
    EXPECT_TRUE(lo->is_up);
    bool v4 =
        std::any_of(lo->addresses.begin(), lo->addresses.end(), [](const InterfaceAddress &a) {
            return a.family == AF_INET && a.address == "127.0.0.1" && a.prefix_len == 8;
        });
    EXPECT_TRUE(v4);
}

TEST_F(DiscoveryTest, UncachedRunFindsTheSame) {
    Discovery again = discover_now();
    ASSERT_EQ(again.resources.size(), d.resources.size());
    for (std::size_t i = 0; i < again.resources.size(); ++i) {
        EXPECT_EQ(again.resources[i].label(), d.resources[i].label());
        EXPECT_EQ(again.resources[i].usable, d.resources[i].usable);
        EXPECT_EQ(again.resources[i].iface_cap_flags, d.resources[i].iface_cap_flags);
    }
    EXPECT_EQ(again.components.size(), d.components.size());
}

}  // namespace
}  // namespace ufi::transports
