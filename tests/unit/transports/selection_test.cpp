// select_domains on synthetic resource lists: this machine's shape, an InfiniBand
// node with the 2-socket hwloc topology and several bindings, UFI_TLS and
// UFI_NET_DEVICES, unusable resources, determinism.
#include "transports/selection.h"

#include "synthetic_resources.h"
#include "transports/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace ufi::transports {
namespace {

using testing::ib_node_resources;
using testing::labels;
using testing::this_machine_resources;
using Strings = std::vector<std::string>;

const std::string kTwoSocketXml =
    std::string(UFI_TEST_DATA_DIR) + "/topologies/two_socket_4ib_8gpu.xml";

SelectionResult select(const std::vector<Resource> &res, const TopologyView &view,
                       const char *tls = "all", const char *devs = "all") {
    return select_domains(res, view, parse_selection_config(tls, devs));
}

Strings excluded_texts(const SelectionResult &r) {
    Strings out;
    for (const ExcludedResource &e : r.excluded) {
        out.push_back(e.text());
    }
    return out;
}

bool contains(const Strings &v, const std::string &s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

bool any_contains(const Strings &v, const std::string &needle) {
    return std::any_of(v.begin(), v.end(),
                       [&](const std::string &s) { return s.find(needle) != std::string::npos; });
}

TopologyView two_socket_view(const std::vector<Resource> &res, const char *binding) {
    std::string error;
    std::optional<Topology> topo = Topology::from_xml_file(kTwoSocketXml, binding, &error);
    EXPECT_TRUE(topo.has_value()) << error;
    return topo ? TopologyView::from_topology(*topo, res) : TopologyView{};
}

// --- this machine's shape: self, posix, sysv, cma, tcp/lo, tcp/eth0 ---

TEST(SelectionThisMachine, DefaultOrderEth0ThenLoThenShm) {
    auto res = this_machine_resources();
    TopologyView view;
    view.distances["eth0"] = 0U;  // virtio NIC on PCI, as hwloc sees it here
    SelectionResult r = select(res, view);

    ASSERT_EQ(r.choice_names(), (Strings{"eth0", "lo", "shm"}));
    const DomainChoice &eth0 = r.choices[0];
    EXPECT_EQ(eth0.description, "shm(posix,sysv,cma,self)+tcp/eth0");
    EXPECT_EQ(labels(res, eth0.resources),
              (Strings{"posix/memory", "sysv/memory", "cma/memory", "self/memory0", "tcp/eth0"}));
    EXPECT_EQ(labels(res, eth0.net_resources), Strings{"tcp/eth0"});
    EXPECT_EQ(eth0.net_device, "eth0");
    EXPECT_TRUE(eth0.reaches_local);
    EXPECT_TRUE(eth0.reaches_remote);
    EXPECT_FALSE(eth0.loopback_net);
    EXPECT_FALSE(eth0.rdma);
    EXPECT_EQ(eth0.distance, 0U);
    EXPECT_GT(eth0.score, 0);

    const DomainChoice &lo = r.choices[1];
    EXPECT_EQ(lo.description, "shm(posix,sysv,cma,self)+tcp/lo");
    EXPECT_TRUE(lo.reaches_local);
    EXPECT_FALSE(lo.reaches_remote);
    EXPECT_TRUE(lo.loopback_net);
    EXPECT_FALSE(lo.distance.has_value());

    const DomainChoice &shm = r.choices[2];
    EXPECT_EQ(shm.description, "shm(posix,sysv,cma,self)");
    EXPECT_EQ(shm.net_device, "");
    EXPECT_TRUE(shm.net_resources.empty());
    EXPECT_TRUE(shm.reaches_local);
    EXPECT_FALSE(shm.reaches_remote);

    EXPECT_TRUE(r.excluded.empty());
    EXPECT_TRUE(r.diagnostics.empty());
}

TEST(SelectionThisMachine, SameOrderWithoutTopology) {
    auto res = this_machine_resources();
    EXPECT_EQ(select(res, TopologyView{}).choice_names(), (Strings{"eth0", "lo", "shm"}));
}

TEST(SelectionThisMachine, NoTcpLeavesShmOnly) {
    auto res = this_machine_resources();
    SelectionResult r = select(res, TopologyView{}, "^tcp");
    ASSERT_EQ(r.choice_names(), Strings{"shm"});
    EXPECT_EQ(r.choices[0].description, "shm(posix,sysv,cma,self)");
    EXPECT_EQ(excluded_texts(r),
              (Strings{"tcp/lo: excluded by UFI_TLS=^tcp", "tcp/eth0: excluded by UFI_TLS=^tcp"}));
}

TEST(SelectionThisMachine, TcpOnlyIsNetworkOnly) {
    auto res = this_machine_resources();
    SelectionResult r = select(res, TopologyView{}, "tcp");
    ASSERT_EQ(r.choice_names(), (Strings{"eth0", "lo"}));
    EXPECT_EQ(r.choices[0].description, "tcp/eth0");
    EXPECT_TRUE(r.choices[0].reaches_local) << "tcp reaches this host's peers too";
    EXPECT_TRUE(r.choices[0].reaches_remote);
    EXPECT_TRUE(r.choices[0].local_resources.empty());
    EXPECT_EQ(r.choices[1].description, "tcp/lo");
    EXPECT_FALSE(r.choices[1].reaches_remote);
    EXPECT_EQ(excluded_texts(r), (Strings{"self/memory0: not selected, UFI_TLS=tcp",
                                          "sysv/memory: not selected, UFI_TLS=tcp",
                                          "posix/memory: not selected, UFI_TLS=tcp",
                                          "cma/memory: not selected, UFI_TLS=tcp"}));
}

TEST(SelectionThisMachine, ShmAliasKeepsSelfAndReportsNothingMissing) {
    auto res = this_machine_resources();
    SelectionResult r = select(res, TopologyView{}, "shm");
    ASSERT_EQ(r.choice_names(), Strings{"shm"});
    EXPECT_EQ(r.choices[0].description, "shm(posix,sysv,cma,self)");
    EXPECT_TRUE(r.diagnostics.empty());  // knem/xpmem missing is fine: posix exists
}

TEST(SelectionThisMachine, SelfOnly) {
    auto res = this_machine_resources();
    SelectionResult r = select(res, TopologyView{}, "self");
    ASSERT_EQ(r.choice_names(), Strings{"shm"});
    EXPECT_EQ(r.choices[0].description, "shm(self)");
}

TEST(SelectionThisMachine, NetDevicesRestrictTcp) {
    auto res = this_machine_resources();
    SelectionResult r = select(res, TopologyView{}, "all", "eth0");
    ASSERT_EQ(r.choice_names(), (Strings{"eth0", "shm"}));
    EXPECT_EQ(excluded_texts(r), Strings{"tcp/lo: not selected, UFI_NET_DEVICES=eth0"});

    SelectionResult x = select(res, TopologyView{}, "all", "^eth0");
    ASSERT_EQ(x.choice_names(), (Strings{"lo", "shm"}));
    EXPECT_EQ(excluded_texts(x), Strings{"tcp/eth0: excluded by UFI_NET_DEVICES=^eth0"});
}

TEST(SelectionThisMachine, AbsentTransportsAreDiagnosed) {
    auto res = this_machine_resources();
    SelectionResult r = select(res, TopologyView{}, "ib");
    EXPECT_TRUE(r.choices.empty());
    EXPECT_EQ(r.excluded.size(), res.size());
    EXPECT_TRUE(any_contains(r.diagnostics, "UFI_TLS: 'ib' matches no transport"));
    EXPECT_TRUE(any_contains(r.diagnostics, "no usable transport"));

    SelectionResult d = select(res, TopologyView{}, "all", "mlx5_0:1");
    EXPECT_EQ(d.choice_names(), Strings{"shm"});
    EXPECT_TRUE(
        any_contains(d.diagnostics, "UFI_NET_DEVICES: 'mlx5_0:1' matches no network device"));
}

TEST(SelectionThisMachine, UnusableResourcesCarryTheirError) {
    auto res = this_machine_resources();
    for (Resource &r : res) {
        if (r.tl == "cma") {
            r.usable = false;
            r.error = "uct_iface_open: Operation not permitted";
        }
    }
    SelectionResult r = select(res, TopologyView{});
    ASSERT_EQ(r.choice_names(), (Strings{"eth0", "lo", "shm"}));
    EXPECT_EQ(r.choices[0].description, "shm(posix,sysv,self)+tcp/eth0");
    EXPECT_EQ(excluded_texts(r),
              Strings{"cma/memory: unusable: uct_iface_open: Operation not permitted"});
}

TEST(SelectionThisMachine, NothingUsableGivesEmptyResultWithReasons) {
    auto res = this_machine_resources();
    for (Resource &r : res) {
        r.usable = false;
        r.error = "broken";
    }
    SelectionResult r = select(res, TopologyView{});
    EXPECT_TRUE(r.choices.empty());
    ASSERT_EQ(r.excluded.size(), res.size());
    for (std::size_t i = 0; i < res.size(); ++i) {
        EXPECT_EQ(r.excluded[i].resource, i);
        EXPECT_EQ(r.excluded[i].reason, "unusable: broken");
    }
    EXPECT_FALSE(r.diagnostics.empty());

    SelectionResult none = select({}, TopologyView{});
    EXPECT_TRUE(none.choices.empty());
    EXPECT_TRUE(any_contains(none.diagnostics, "no transport resources"));
}

// --- InfiniBand node + 2-socket topology ---

TEST(SelectionIbNode, SocketZeroBindingPrefersSocketZeroRdma) {
    auto res = ib_node_resources();
    SelectionResult r = select(res, two_socket_view(res, "0-7"));
    EXPECT_EQ(r.choice_names(), (Strings{"mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_3:1", "ib0",
                                         "ib1", "eth0", "ib2", "ib3", "lo", "shm"}));
    const DomainChoice &best = r.choices[0];
    EXPECT_EQ(best.description, "shm(posix,sysv,cma,self)+{rc_mlx5,dc_mlx5,ud_mlx5}/mlx5_0:1");
    EXPECT_EQ(labels(res, best.net_resources),
              (Strings{"rc_mlx5/mlx5_0:1", "dc_mlx5/mlx5_0:1", "ud_mlx5/mlx5_0:1"}));
    EXPECT_TRUE(best.rdma);
    EXPECT_TRUE(best.reaches_local);
    EXPECT_TRUE(best.reaches_remote);
    EXPECT_EQ(best.distance, 0U);
    EXPECT_EQ(r.find("mlx5_2:1")->distance, 1U);
    EXPECT_EQ(r.find("ib0")->distance, 0U);
    EXPECT_EQ(r.find("ib3")->distance, 1U);
    EXPECT_FALSE(r.find("ib0")->rdma);
    EXPECT_FALSE(r.find("lo")->distance.has_value());
    EXPECT_TRUE(r.excluded.empty());
}

TEST(SelectionIbNode, SocketOneBindingPrefersSocketOneRdma) {
    auto res = ib_node_resources();
    SelectionResult r = select(res, two_socket_view(res, "8-15"));
    EXPECT_EQ(r.choice_names(), (Strings{"mlx5_2:1", "mlx5_3:1", "mlx5_0:1", "mlx5_1:1", "ib2",
                                         "ib3", "ib0", "ib1", "eth0", "lo", "shm"}));
}

TEST(SelectionIbNode, SingleCoreBindingAndHexSyntax) {
    auto res = ib_node_resources();
    EXPECT_EQ(select(res, two_socket_view(res, "3")).choices.front().name, "mlx5_0:1");
    EXPECT_EQ(select(res, two_socket_view(res, "12")).choices.front().name, "mlx5_2:1");
    EXPECT_EQ(select(res, two_socket_view(res, "0x00000f00")).choices.front().name, "mlx5_2:1");
}

TEST(SelectionIbNode, UnboundProcessSeesEveryNicAtTheSameDistance) {
    auto res = ib_node_resources();
    SelectionResult r = select(res, two_socket_view(res, ""));
    EXPECT_EQ(r.choice_names(), (Strings{"mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_3:1", "ib0",
                                         "ib1", "ib2", "ib3", "eth0", "lo", "shm"}));
    for (const char *name : {"mlx5_0:1", "mlx5_3:1", "eth0"}) {
        EXPECT_EQ(r.find(name)->distance, 1U) << name;
    }
}

TEST(SelectionIbNode, TcpOnIpoibRanksBelowEveryRdmaPort) {
    auto res = ib_node_resources();
    for (const char *binding : {"0-7", "8-15", "", "4-11"}) {
        SelectionResult r = select(res, two_socket_view(res, binding));
        auto pos = [&](const std::string &n) {
            Strings names = r.choice_names();
            return std::find(names.begin(), names.end(), n) - names.begin();
        };
        for (const char *rdma : {"mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_3:1"}) {
            for (const char *tcp : {"ib0", "ib1", "ib2", "ib3", "eth0"}) {
                EXPECT_LT(pos(rdma), pos(tcp)) << binding << ": " << rdma << " vs " << tcp;
            }
        }
    }
}

TEST(SelectionIbNode, UnknownDistanceRanksAfterKnownOnes) {
    auto res = ib_node_resources();
    res.push_back(
        testing::tcp_resource("eth9", false, 12.5e9));  // a virtual NIC hwloc does not know
    TopologyView view = two_socket_view(res, "0-7");
    EXPECT_FALSE(view.distance("eth9").has_value());
    SelectionResult r = select(res, view);
    Strings names = r.choice_names();
    ASSERT_GE(names.size(), 3U);
    EXPECT_EQ(names[names.size() - 3], "eth9");  // after every known NIC, before lo and shm
}

TEST(SelectionIbNode, NetDevicesSelectsOnePort) {
    auto res = ib_node_resources();
    SelectionResult r = select(res, two_socket_view(res, "8-15"), "all", "mlx5_0:1");
    ASSERT_EQ(r.choice_names(), (Strings{"mlx5_0:1", "shm"}));
    Strings ex = excluded_texts(r);
    EXPECT_TRUE(contains(ex, "rc_mlx5/mlx5_2:1: not selected, UFI_NET_DEVICES=mlx5_0:1"));
    EXPECT_TRUE(contains(ex, "tcp/eth0: not selected, UFI_NET_DEVICES=mlx5_0:1"));
    EXPECT_TRUE(contains(ex, "tcp/lo: not selected, UFI_NET_DEVICES=mlx5_0:1"));
    EXPECT_EQ(ex.size(), 3U * 3U + 6U);  // 3 other ports x 3 tls, tcp on ib0..3/eth0/lo
    EXPECT_TRUE(r.diagnostics.empty());
}

TEST(SelectionIbNode, NetDevicesDeviceNameMatchesAllPorts) {
    auto res = ib_node_resources();
    res.push_back(testing::ib_resource("rc_mlx5", "mlx5_1:2"));
    SelectionResult r = select(res, two_socket_view(res, "0-7"), "all", "mlx5_1");
    EXPECT_EQ(r.choice_names(), (Strings{"mlx5_1:1", "mlx5_1:2", "shm"}));
}

TEST(SelectionIbNode, TlsRcOnlyAndNoShm) {
    auto res = ib_node_resources();
    SelectionResult r = select(res, two_socket_view(res, "0-7"), "rc");
    EXPECT_EQ(r.choice_names(), (Strings{"mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_3:1"}));
    EXPECT_EQ(r.choices[0].description, "rc_mlx5/mlx5_0:1");
    EXPECT_TRUE(r.choices[0].reaches_local) << "an HCA reaches this host's peers (loopback)";
    EXPECT_TRUE(any_contains(excluded_texts(r), "dc_mlx5/mlx5_0:1: not selected, UFI_TLS=rc"));
    EXPECT_TRUE(r.diagnostics.empty());  // rc_verbs absent but rc_mlx5 present
}

TEST(SelectionIbNode, ExcludingIbLeavesTcpOrderedByDistance) {
    auto res = ib_node_resources();
    SelectionResult r = select(res, two_socket_view(res, "8-15"), "^ib");
    EXPECT_EQ(r.choice_names(), (Strings{"ib2", "ib3", "ib0", "ib1", "eth0", "lo", "shm"}));
    EXPECT_EQ(r.choices[0].description, "shm(posix,sysv,cma,self)+tcp/ib2");
}

TEST(SelectionIbNode, AcceleratorsJoinEveryChoice) {
    auto res = ib_node_resources();
    res.push_back(testing::cuda_copy_resource());
    SelectionResult r = select(res, two_socket_view(res, "0-7"));
    ASSERT_FALSE(r.choices.empty());
    EXPECT_EQ(r.choices[0].description,
              "shm(posix,sysv,cma,self)+acc(cuda_copy)+{rc_mlx5,dc_mlx5,ud_mlx5}/mlx5_0:1");
    EXPECT_EQ(r.choices.back().name, "shm");
    EXPECT_EQ(r.choices.back().description, "shm(posix,sysv,cma,self)+acc(cuda_copy)");

    // Alone, an accelerator transport reaches nobody.
    SelectionResult alone = select(res, TopologyView{}, "cuda");
    EXPECT_TRUE(alone.choices.empty());
    EXPECT_TRUE(any_contains(excluded_texts(alone),
                             "cuda_copy/cuda: no shared-memory or network transport"));
}

TEST(SelectionIbNode, DeterministicUnderInputPermutation) {
    auto res = ib_node_resources();
    res.push_back(testing::cuda_copy_resource());
    auto describe = [](const std::vector<Resource> &rs, const SelectionResult &r) {
        Strings out;
        for (const DomainChoice &c : r.choices) {
            out.push_back(c.name + " " + c.description);
            for (const std::string &l : labels(rs, c.resources)) {
                out.push_back("  " + l);
            }
        }
        return out;
    };
    TopologyView view = two_socket_view(res, "0-7");
    Strings expected = describe(res, select(res, view));
    std::mt19937 rng(12345);
    for (int i = 0; i < 20; ++i) {
        auto shuffled = res;
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        EXPECT_EQ(describe(shuffled, select(shuffled, view)), expected) << "permutation " << i;
    }
    // And the same call twice gives the same answer.
    EXPECT_EQ(describe(res, select(res, view)), expected);
}

TEST(SelectionIbNode, EqualDevicesTieBreakOnPriorityThenName) {
    std::vector<Resource> res = {testing::tcp_resource("eth1", false),
                                 testing::tcp_resource("eth0", false),
                                 testing::tcp_resource("eth2", false)};
    res[2].perf.priority = 3;
    SelectionResult r = select(res, TopologyView{});
    EXPECT_EQ(r.choice_names(), (Strings{"eth2", "eth0", "eth1"}));
}

TEST(SelectionScore, RdmaAndScoreHelpers) {
    EXPECT_TRUE(is_rdma_resource(testing::ib_resource("ud_mlx5", "mlx5_0:1")));
    EXPECT_TRUE(is_rdma_resource(testing::ib_resource("rc_mlx5", "mlx5_0:1")));
    EXPECT_FALSE(is_rdma_resource(testing::tcp_resource("eth0", false)));
    EXPECT_GT(transport_score(testing::ib_resource("rc_mlx5", "mlx5_0:1")),
              transport_score(testing::tcp_resource("ib0", false, 12.5e9)));
    Resource zero = testing::tcp_resource("eth0", false, 0);
    EXPECT_EQ(transport_score(zero), 0);
}

}  // namespace
}  // namespace ufi::transports
