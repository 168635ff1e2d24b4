// Topology over hwloc: the synthetic XML topologies in tests/data/topologies
// (devices, PCI ids, NUMA/package, distances for several bindings), the running
// system, and TopologyView built from them.
#include "transports/topology.h"
#include "transports/topology_view.h"

#include "synthetic_resources.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace ufi::transports {
namespace {

const std::string kDir = std::string(UFI_TEST_DATA_DIR) + "/topologies/";
const std::string kTwoSocket = kDir + "two_socket_4ib_8gpu.xml";
const std::string kSingleSocket = kDir + "single_socket_eth_ib.xml";

Topology load(const std::string &path, const char *binding) {
    std::string error;
    std::optional<Topology> t = Topology::from_xml_file(path, binding, &error);
    EXPECT_TRUE(t.has_value()) << path << ": " << error;
    return t ? *t : Topology{};
}

TEST(TopologyXml, TwoSocketDevices) {
    Topology t = load(kTwoSocket, "0-7");
    EXPECT_FALSE(t.empty());
    EXPECT_FALSE(t.from_this_system());
    EXPECT_EQ(t.num_packages(), 2U);
    EXPECT_EQ(t.num_numa_nodes(), 2U);
    EXPECT_EQ(t.binding(), "0-7");
    // eth0, mlx5_0..3 + ib0..3, cuda0..7 + nvidia0..7
    EXPECT_EQ(t.devices().size(), 1U + 8U + 16U);

    const IoDevice *mlx = t.find_device("mlx5_2");
    ASSERT_NE(mlx, nullptr);
    EXPECT_EQ(mlx->kind, IoDeviceKind::OpenFabrics);
    EXPECT_EQ(mlx->pci_bus_id, "0000:81:00.0");
    EXPECT_EQ(mlx->numa_node, 1U);
    EXPECT_EQ(mlx->package, 1U);
    EXPECT_EQ(mlx->locality, "8-15");

    const IoDevice *ib1 = t.find_device("ib1");
    ASSERT_NE(ib1, nullptr);
    EXPECT_EQ(ib1->kind, IoDeviceKind::Network);
    EXPECT_EQ(ib1->pci_bus_id, "0000:15:00.0");
    EXPECT_EQ(ib1->package, 0U);

    const IoDevice *cuda5 = t.find_device("cuda5");
    ASSERT_NE(cuda5, nullptr);
    EXPECT_EQ(cuda5->kind, IoDeviceKind::Coprocessor);
    EXPECT_EQ(cuda5->subtype, "CUDA");
    EXPECT_EQ(cuda5->pci_bus_id, "0000:83:00.0");
    EXPECT_EQ(cuda5->numa_node, 1U);
    const IoDevice *nv0 = t.find_device("nvidia0");
    ASSERT_NE(nv0, nullptr);
    EXPECT_EQ(nv0->kind, IoDeviceKind::Gpu);

    const IoDevice *eth0 = t.find_device("eth0");
    ASSERT_NE(eth0, nullptr);
    EXPECT_EQ(eth0->pci_bus_id, "0000:01:00.0");
    EXPECT_EQ(eth0->numa_node, 0U);

    EXPECT_EQ(t.find_device("lo"), nullptr);
    EXPECT_EQ(t.find_device("mlx5_9"), nullptr);
}

TEST(TopologyXml, UctNamesMapToHwlocDevices) {
    Topology t = load(kTwoSocket, "0-7");
    ASSERT_NE(t.find_device("mlx5_3:1"), nullptr);
    EXPECT_EQ(t.find_device("mlx5_3:1")->name, "mlx5_3");
    EXPECT_EQ(t.find_device("mlx5_3:x"), nullptr);
    // Two OS devices share a PCI function: the first (mlx5_*) wins.
    ASSERT_NE(t.find_by_pci_bus_id("0000:81:00.0"), nullptr);
    EXPECT_EQ(t.find_by_pci_bus_id("0000:81:00.0")->name, "mlx5_2");
    EXPECT_EQ(t.find_by_pci_bus_id("81:00.0")->name, "mlx5_2");
    EXPECT_EQ(t.find_by_pci_bus_id("0000:86:00.0")->name, "cuda6");
    EXPECT_EQ(t.find_by_pci_bus_id("0000:86"), nullptr);
    EXPECT_EQ(t.find_by_pci_bus_id("0000:99:00.0"), nullptr);
}

TEST(TopologyXml, DistancesFollowTheBinding) {
    struct Case {
        const char *binding;
        unsigned socket0;
        unsigned socket1;
    };
    for (const Case &c :
         {Case{"0-7", 0, 1}, Case{"8-15", 1, 0}, Case{"0", 0, 1}, Case{"15", 1, 0},
          Case{"0x000000f0", 0, 1}, Case{"", 1, 1}, Case{"all", 1, 1}, Case{"4-11", 1, 1}}) {
        Topology t = load(kTwoSocket, c.binding);
        for (const char *dev : {"mlx5_0", "mlx5_1:1", "ib0", "eth0", "cuda0", "nvidia3"}) {
            EXPECT_EQ(t.distance(dev), c.socket0) << c.binding << " " << dev;
        }
        for (const char *dev : {"mlx5_2", "mlx5_3:1", "ib3", "cuda4", "cuda7"}) {
            EXPECT_EQ(t.distance(dev), c.socket1) << c.binding << " " << dev;
        }
        EXPECT_EQ(t.distance_by_pci_bus_id("0000:12:00.0"), c.socket0) << c.binding;
        EXPECT_EQ(t.distance_by_pci_bus_id("0000:82:00.0"), c.socket1) << c.binding;
        EXPECT_FALSE(t.distance("lo").has_value());
    }
}

TEST(TopologyXml, WithBindingReusesTheHardware) {
    Topology t = load(kTwoSocket, "0-7");
    std::optional<Topology> s1 = t.with_binding("8-15");
    ASSERT_TRUE(s1.has_value());
    EXPECT_EQ(s1->binding(), "8-15");
    EXPECT_EQ(s1->distance("mlx5_2"), 0U);
    EXPECT_EQ(t.distance("mlx5_2"), 1U);  // the original is unchanged
    EXPECT_EQ(s1->devices().size(), t.devices().size());
    Topology copy = *s1;
    EXPECT_EQ(copy.distance("mlx5_0"), 1U);
}

TEST(TopologyXml, BadBindingsAreErrors) {
    std::string error;
    EXPECT_FALSE(Topology::from_xml_file(kTwoSocket, "nonsense", &error).has_value());
    EXPECT_NE(error.find("cannot parse"), std::string::npos) << error;
    error.clear();
    EXPECT_FALSE(Topology::from_xml_file(kTwoSocket, "100-101", &error).has_value());
    EXPECT_NE(error.find("no CPU"), std::string::npos) << error;
    // A binding partly outside the machine keeps its CPUs inside.
    std::optional<Topology> t = Topology::from_xml_file(kTwoSocket, "6-20", &error);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->binding(), "6-15");
    EXPECT_FALSE(Topology().with_binding("0").has_value());
}

TEST(TopologyXml, BadXmlIsAnError) {
    std::string error;
    EXPECT_FALSE(Topology::from_xml_file(kDir + "does_not_exist.xml", "", &error).has_value());
    EXPECT_FALSE(error.empty());
    error.clear();
    EXPECT_FALSE(Topology::from_xml_buffer("<topology><oops", "", &error).has_value());
    EXPECT_FALSE(error.empty());
}

TEST(TopologyXml, FromBuffer) {
    std::ifstream in(kSingleSocket);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string error;
    std::optional<Topology> t = Topology::from_xml_buffer(ss.str(), "2-3", &error);
    ASSERT_TRUE(t.has_value()) << error;
    EXPECT_EQ(t->devices().size(), 3U);
}

TEST(TopologyXml, SingleSocketEverythingIsNear) {
    Topology t = load(kSingleSocket, "0-1");
    EXPECT_EQ(t.num_packages(), 1U);
    EXPECT_EQ(t.num_numa_nodes(), 1U);
    ASSERT_EQ(t.devices().size(), 3U);  // eth0, mlx5_0, ib0
    for (const IoDevice &d : t.devices()) {
        EXPECT_EQ(d.distance, 0U) << d.name;
        EXPECT_EQ(d.numa_node, 0U) << d.name;
        EXPECT_EQ(d.package, 0U) << d.name;
    }
    EXPECT_EQ(t.find_device("eth0")->pci_bus_id, "0000:02:00.0");
    EXPECT_EQ(t.find_device("mlx5_0:1")->pci_bus_id, "0000:03:00.0");
    EXPECT_EQ(t.find_device("ib0")->pci_bus_id, "0000:03:00.0");
    // Unbound (whole machine) is still within the one package.
    EXPECT_EQ(load(kSingleSocket, "").distance("eth0"), 0U);
}

TEST(TopologyEmpty, AnswersUnknown) {
    Topology t;
    EXPECT_TRUE(t.empty());
    EXPECT_TRUE(t.devices().empty());
    EXPECT_FALSE(t.distance("eth0").has_value());
    EXPECT_EQ(t.binding(), "");
}

TEST(TopologySystem, LoadsFromTheRunningSystem) {
    std::string error;
    std::optional<Topology> t = Topology::from_system(&error);
    ASSERT_TRUE(t.has_value()) << error;
    EXPECT_FALSE(t->binding().empty());
    EXPECT_GE(t->num_packages() + t->num_numa_nodes(), 1U);
    for (const IoDevice &d : t->devices()) {
        EXPECT_FALSE(d.name.empty());
        if (d.distance) {
            EXPECT_TRUE(d.pci_bus_id.has_value()) << d.name;
        }
    }
    EXPECT_EQ(&system_topology(), &system_topology());
    EXPECT_TRUE(system_topology_error().empty() || system_topology().empty());
    EXPECT_FALSE(t->distance("lo").has_value());
}

TEST(PciBusId, Normalize) {
    EXPECT_EQ(normalize_pci_bus_id("0000:81:00.0"), "0000:81:00.0");
    EXPECT_EQ(normalize_pci_bus_id("81:00.1"), "0000:81:00.1");
    EXPECT_EQ(normalize_pci_bus_id("0001:AF:1F.7"), "0001:af:1f.7");
    EXPECT_FALSE(normalize_pci_bus_id("mlx5_0").has_value());
    EXPECT_FALSE(normalize_pci_bus_id("0000:81:00.0x").has_value());
    EXPECT_FALSE(normalize_pci_bus_id("0000:81:20.0").has_value());
    EXPECT_FALSE(normalize_pci_bus_id("0x00:81:00.0").has_value());
    EXPECT_FALSE(normalize_pci_bus_id("00000:81:00.0").has_value());
    EXPECT_FALSE(normalize_pci_bus_id(":81:00.0").has_value());
    EXPECT_FALSE(normalize_pci_bus_id("").has_value());
}

TEST(TopologyViewTest, FromTopologyMapsUctNames) {
    Topology t = load(kTwoSocket, "8-15");
    std::vector<Resource> res = testing::ib_node_resources();
    Resource gpu = testing::cuda_copy_resource();
    gpu.dev = "cuda5";
    gpu.pci_bus_id = "0000:83:00.0";
    res.push_back(gpu);
    TopologyView v = TopologyView::from_topology(t, res);
    EXPECT_EQ(v.distance("mlx5_0:1"), 1U);
    EXPECT_EQ(v.distance("mlx5_2:1"), 0U);
    EXPECT_EQ(v.distance("ib0"), 1U);
    EXPECT_EQ(v.distance("ib3"), 0U);
    EXPECT_EQ(v.distance("eth0"), 1U);
    EXPECT_FALSE(v.distance("lo").has_value());
    EXPECT_EQ(v.distances.count("lo"), 1U);  // known to be unknown
    EXPECT_EQ(v.distance("cuda5"), 0U);      // by PCI bus id
    EXPECT_FALSE(v.distance("memory").has_value());
}

TEST(TopologyViewTest, PortFallback) {
    TopologyView v;
    v.distances["mlx5_0"] = 2U;
    v.distances["mlx5_1:1"] = 0U;
    EXPECT_EQ(v.distance("mlx5_0:1"), 2U);
    EXPECT_EQ(v.distance("mlx5_0:2"), 2U);
    EXPECT_EQ(v.distance("mlx5_1:1"), 0U);
    EXPECT_FALSE(v.distance("mlx5_1:2").has_value());
    EXPECT_FALSE(v.distance("eth0").has_value());
}

}  // namespace
}  // namespace ufi::transports
