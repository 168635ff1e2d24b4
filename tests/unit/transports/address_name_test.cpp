// Endpoint names (transports/address_name.h): which records a domain's names carry so that
// they fit FI_NAME_MAX (Open MPI holds names in 64 bytes), on this machine's domains and on
// synthetic RDMA domains, and the partial mark that makes the handshake bring the rest.
#include "transports/address_name.h"
#include "tests/unit/transports/synthetic_resources.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ufi::transports::address {
namespace {

using testing::ib_resource;
using testing::self_resource;
using testing::shm_resource;
using testing::tcp_resource;
using Strings = std::vector<std::string>;

NamePlan plan(const std::vector<Resource> &domain) {
    std::vector<const Resource *> p;
    for (const Resource &r : domain) p.push_back(&r);
    return plan_names(p);
}

std::vector<Resource> local_lanes() {
    return {shm_resource("posix"), shm_resource("sysv"), shm_resource("cma"), self_resource()};
}

TEST(AddressName, LoopbackDomainCarriesPosixAndTcp) {
    auto d = local_lanes();
    d.push_back(tcp_resource("lo", true));  // 18-byte device address (namespace id)
    const NamePlan p = plan(d);
    EXPECT_EQ(p.tls, (Strings{"posix", "tcp"}));
    EXPECT_EQ(p.left_out, (Strings{"cma", "sysv"})) << "self is never missed";
    EXPECT_EQ(p.size, 64u);  // 20 + (3 + 16) + (3 + 20), padded
    EXPECT_FALSE(p.over_budget());
}

TEST(AddressName, NetworkDomainFillsWhatFits) {
    auto d = local_lanes();
    d.push_back(tcp_resource("eth0", false));  // 6-byte device address
    const NamePlan p = plan(d);
    // 20 + 19 + 11 = 50: cma (15) or sysv (19) would pass 64.
    EXPECT_EQ(p.tls, (Strings{"posix", "tcp"}));
    EXPECT_EQ(p.left_out, (Strings{"cma", "sysv"}));
    EXPECT_EQ(p.size, 56u);

    // A smaller cma record fits.
    d[2].device_addr_len = 4;
    EXPECT_EQ(plan(d).tls, (Strings{"posix", "cma", "tcp"}));
}

TEST(AddressName, SharedMemoryDomainCarriesCma) {
    const NamePlan p = plan(local_lanes());
    EXPECT_EQ(p.tls, (Strings{"posix", "cma"})) << "cma before sysv, which lanes rarely use";
    EXPECT_EQ(p.left_out, Strings{"sysv"});
    EXPECT_EQ(p.size, 56u);
}

TEST(AddressName, SysvAloneIsTheSharedMemoryLane) {
    std::vector<Resource> d = {shm_resource("sysv"), self_resource()};
    const NamePlan p = plan(d);
    EXPECT_EQ(p.tls, Strings{"sysv"});
    EXPECT_TRUE(p.left_out.empty());
}

TEST(AddressName, RdmaDomainNamesAnIfaceTransport) {
    auto d = local_lanes();
    for (const char *tl : {"rc_mlx5", "dc_mlx5", "ud_mlx5"}) d.push_back(ib_resource(tl, "mlx5_0:1"));
    const NamePlan p = plan(d);
    // rc connects endpoint to endpoint: never the first contact. dc and ud tie at 9 bytes: dc.
    EXPECT_EQ(p.tls, (Strings{"posix", "cma", "dc_mlx5"}));
    EXPECT_EQ(p.left_out, (Strings{"rc_mlx5", "ud_mlx5", "sysv"}));
    EXPECT_LE(p.size, kNameBudget);

    // RoCE: a GID in every device address. The smallest first-contact record still fits.
    for (auto &r : d) {
        if (r.type == DeviceType::Network) r.device_addr_len = 18;
    }
    d.back().iface_addr_len = 2;  // ud's record is now the smallest
    const NamePlan roce = plan(d);
    EXPECT_EQ(roce.tls, (Strings{"posix", "ud_mlx5"}));
    EXPECT_EQ(roce.size, 64u);
}

TEST(AddressName, FirstContactRecordsTooLongAreStillNamed) {
    auto d = local_lanes();
    d.push_back(ib_resource("ud_mlx5", "mlx5_0:1"));
    d.back().device_addr_len = 40;
    const NamePlan p = plan(d);
    EXPECT_EQ(p.tls, (Strings{"posix", "ud_mlx5"}));
    EXPECT_TRUE(p.over_budget()) << p.size;
}

TEST(AddressName, SelfAloneNamesBySelf) {
    std::vector<Resource> d = {self_resource()};
    const NamePlan p = plan(d);
    EXPECT_EQ(p.tls, Strings{"self"});
    EXPECT_EQ(p.size, padded_size(record_bound(d[0])));
}

EndpointAddress full_address() {
    EndpointAddress a;
    a.uuid = 0x1234;
    a.endpoint_id = 2;
    a.records = {{"posix", std::vector<uint8_t>(8, 1), std::vector<uint8_t>(8, 2)},
                 {"cma", std::vector<uint8_t>(8, 1), std::vector<uint8_t>(4, 3)},
                 {"self", {}, std::vector<uint8_t>(8, 4)},
                 {"tcp", std::vector<uint8_t>(18, 5), std::vector<uint8_t>(2, 6)}};
    return a;
}

TEST(AddressName, NameKeepsItsTransportsAndSaysWhenPartial) {
    const EndpointAddress full = full_address();
    const Strings tls = {"posix", "tcp"};
    const EndpointAddress name = name_of(full, tls);
    EXPECT_EQ(name.uuid, full.uuid);
    EXPECT_EQ(name.endpoint_id, full.endpoint_id);
    ASSERT_EQ(name.records.size(), 2u);
    EXPECT_EQ(name.records[0], full.records[0]);
    EXPECT_EQ(name.records[1], full.records[3]);
    EXPECT_TRUE(name.partial) << "cma was left out";
    const auto blob = pack(name);
    EXPECT_LE(padded_size(blob.size() - kHeaderSize), kNameBudget);

    // Leaving out self alone is no loss: the name is complete.
    const EndpointAddress all_but_self = name_of(full, Strings{"posix", "cma", "tcp"});
    EXPECT_EQ(all_but_self.records.size(), 3u);
    EXPECT_FALSE(all_but_self.partial);

    // An endpoint that opened none of the named transports is named by what it has.
    EndpointAddress only_self;
    only_self.uuid = 9;
    only_self.records = {full.records[2]};
    EXPECT_EQ(name_of(only_self, tls), only_self);
}

}  // namespace
}  // namespace ufi::transports::address
