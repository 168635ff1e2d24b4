// getinfo over synthetic offers: order, provider filters, FI_PROV_ATTR_ONLY, versions,
// node/FI_SOURCE, and the explanation of every exclusion.
#include "runtime/info/getinfo.h"
#include "tests/unit/info/info_fixture.h"
#include "transports/address.h"
#include "transports/address_svc.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace ufi::runtime::info {
namespace {

using testing::InfoPtr;

constexpr uint32_t kApi = FI_VERSION(2, 7);

GetinfoEnv machine_env() {
    GetinfoEnv env;
    env.offers = {testing::eth0_offer(), testing::lo_offer(), testing::shm_offer()};
    env.local_addrs = {"127.0.0.1", "::1", "192.0.2.2", "fd00::2", "fe80::fc:ff:fe00:1"};
    return env;
}

// The domains of a list, in order (a domain's entries for each endpoint type counted once).
std::vector<std::string> domains(const fi_info *info) {
    std::vector<std::string> out;
    for (; info != nullptr; info = info->next) {
        if (out.empty() || out.back() != info->domain_attr->name) out.emplace_back(info->domain_attr->name);
    }
    return out;
}

bool mentions(const Explanation &why, const std::string &text) {
    for (const auto &l : why.lines) {
        if (l.find(text) != std::string::npos) return true;
    }
    return false;
}

int run(const GetinfoEnv &env, const fi_info *hints, InfoPtr &out, Explanation &why,
        const char *node = nullptr, std::vector<std::string> resolved = {}, uint64_t flags = 0,
        uint32_t version = kApi) {
    fi_info *info = nullptr;
    const int rc = getinfo_with_env(env, version, node, resolved, flags, hints, &info, why);
    out.reset(info);
    return rc;
}

TEST(Getinfo, OrderFollowsTheOffers) {
    InfoPtr out;
    Explanation why;
    ASSERT_EQ(run(machine_env(), nullptr, out, why), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0", "lo", "shm"}));
    // The first entry reaches same-host and remote peers.
    EXPECT_EQ(out->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM), FI_LOCAL_COMM | FI_REMOTE_COMM);
}

TEST(Getinfo, NoMatchExplainsEveryDomain) {
    InfoPtr hints(alloc_info());
    hints->ep_attr->type = FI_EP_MSG;
    hints->addr_format = FI_ADDR_UCX;  // (connected endpoints are addressed by socket address)
    InfoPtr out;
    Explanation why;
    EXPECT_EQ(run(machine_env(), hints.get(), out, why), -FI_ENODATA);
    EXPECT_FALSE(out);
    // One line per domain and endpoint type considered.
    ASSERT_GE(why.lines.size(), 3u);
    EXPECT_TRUE(mentions(why, "domain eth0"));
    EXPECT_TRUE(mentions(why, "domain lo"));
    EXPECT_TRUE(mentions(why, "domain shm"));
    EXPECT_TRUE(mentions(why, "ep_type FI_EP_MSG"));
    EXPECT_FALSE(why.explicit_request);
}

TEST(Getinfo, ExplicitProviderRequestIsFlagged) {
    InfoPtr hints(alloc_info());
    hints->fabric_attr->prov_name = strdup("ufi");
    hints->caps = FI_COLLECTIVE;
    InfoPtr out;
    Explanation why;
    EXPECT_EQ(run(machine_env(), hints.get(), out, why), -FI_ENODATA);
    EXPECT_TRUE(why.explicit_request);
    GetinfoEnv env = machine_env();
    env.provider_filter = {"ufi"};
    InfoPtr plain(alloc_info());
    plain->caps = FI_COLLECTIVE;
    EXPECT_EQ(run(env, plain.get(), out, why), -FI_ENODATA);
    EXPECT_TRUE(why.explicit_request);
}

TEST(Getinfo, ProviderFilters) {
    InfoPtr out;
    Explanation why;
    GetinfoEnv env = machine_env();
    env.provider_filter = {"tcp", "shm"};
    EXPECT_EQ(run(env, nullptr, out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "FI_PROVIDER does not name ufi"));
    env.provider_filter = {"^ufi"};
    EXPECT_EQ(run(env, nullptr, out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "FI_PROVIDER excludes ufi"));
    env.provider_filter = {"^tcp"};
    EXPECT_EQ(run(env, nullptr, out, why), 0);
    env.provider_filter = {"UFI"};
    EXPECT_EQ(run(env, nullptr, out, why), 0) << "provider names are case-insensitive";
    env.provider_filter.clear();
    env.provider_exclude = {"ufi"};
    EXPECT_EQ(run(env, nullptr, out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "FI_PROVIDER_EXCLUDE"));
}

TEST(Getinfo, HintsProviderName) {
    InfoPtr out;
    Explanation why;
    InfoPtr hints(alloc_info());
    hints->fabric_attr->prov_name = strdup("tcp");
    EXPECT_EQ(run(machine_env(), hints.get(), out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "hints ask for provider \"tcp\""));
    free(hints->fabric_attr->prov_name);
    hints->fabric_attr->prov_name = strdup("ufi;ofi_rxm");
    EXPECT_EQ(run(machine_env(), hints.get(), out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "layers providers"));
}

TEST(Getinfo, ProvAttrOnly) {
    InfoPtr out;
    Explanation why;
    ASSERT_EQ(run(machine_env(), nullptr, out, why, nullptr, {}, FI_PROV_ATTR_ONLY), 0);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->next, nullptr);
    EXPECT_STREQ(out->fabric_attr->prov_name, "ufi");
    EXPECT_NE(out->fabric_attr->prov_version, 0u);
    // Even without usable transports, the provider is listed (fi_info -l).
    GetinfoEnv empty;
    ASSERT_EQ(run(empty, nullptr, out, why, nullptr, {}, FI_PROV_ATTR_ONLY), 0);
    EXPECT_EQ(run(empty, nullptr, out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "no usable transport"));
}

TEST(Getinfo, Versions) {
    InfoPtr out;
    Explanation why;
    EXPECT_EQ(run(machine_env(), nullptr, out, why, nullptr, {}, 0, FI_VERSION(2, 8)), -FI_ENOSYS);
    EXPECT_EQ(run(machine_env(), nullptr, out, why, nullptr, {}, 0, FI_VERSION(3, 0)), -FI_ENOSYS);
    // Version 0 is "what you have" (MPICH's first call is fi_getinfo(0, ...); libfabric takes
    // it): served as ufi's own version.
    for (uint32_t v : {0u, uint32_t{FI_VERSION(0, 9)}}) {
        ASSERT_EQ(run(machine_env(), nullptr, out, why, nullptr, {}, 0, v), 0) << v;
        EXPECT_EQ(out->fabric_attr->api_version, FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION));
        EXPECT_EQ(out->domain_attr->mr_mode & FI_MR_SCALABLE, 0) << "the current vocabulary";
    }
    for (uint32_t v : {FI_VERSION(1, 0), FI_VERSION(1, 4), FI_VERSION(1, 5), FI_VERSION(1, 17),
                       FI_VERSION(1, 22), FI_VERSION(2, 0), FI_VERSION(2, 7)}) {
        ASSERT_EQ(run(machine_env(), nullptr, out, why, nullptr, {}, 0, v), 0) << v;
        EXPECT_EQ(out->fabric_attr->api_version, v) << "the caller's version is remembered";
    }
    // A 1.4 caller speaks the legacy mr_mode vocabulary.
    ASSERT_EQ(run(machine_env(), nullptr, out, why, nullptr, {}, 0, FI_VERSION(1, 4)), 0);
    EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_SCALABLE);
}

TEST(Getinfo, NullOutputPointer) {
    Explanation why;
    EXPECT_EQ(getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, nullptr, nullptr, why), -FI_EINVAL);
}

TEST(Getinfo, SourceAddressPicksTheDomainThatOwnsIt) {
    InfoPtr out;
    Explanation why;
    ASSERT_EQ(run(machine_env(), nullptr, out, why, "127.0.0.1", {"127.0.0.1"}, FI_SOURCE), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"lo"}));
    ASSERT_EQ(run(machine_env(), nullptr, out, why, "192.0.2.2", {"192.0.2.2"}, FI_SOURCE), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0"}));
    EXPECT_TRUE(mentions(why, "domain lo"));
    EXPECT_EQ(run(machine_env(), nullptr, out, why, "10.9.9.9", {"10.9.9.9"}, FI_SOURCE), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "is not on"));
    // A host address no network device of ufi's owns: the shared-memory domain serves it.
    GetinfoEnv env = machine_env();
    env.offers = {testing::shm_offer()};
    ASSERT_EQ(run(env, nullptr, out, why, "192.0.2.2", {"192.0.2.2"}, FI_SOURCE), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"shm"}));
}

TEST(Getinfo, DestinationNeedsAReachingDomain) {
    InfoPtr out;
    Explanation why;
    ASSERT_EQ(run(machine_env(), nullptr, out, why, "10.1.2.3", {"10.1.2.3"}), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0"}));
    EXPECT_TRUE(mentions(why, "cannot reach remote node 10.1.2.3"));
    ASSERT_EQ(run(machine_env(), nullptr, out, why, "localhost", {"127.0.0.1", "::1"}), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0", "lo", "shm"}));
}

// Open MPI's OFI MTL asks for FI_REMOTE_COMM; a single-node job pinned to loopback
// (UFI_NET_DEVICES=lo leaves the lo and shm domains) must still find ufi. The loopback domain
// offers it, as libfabric's tcp provider does; the shared-memory-only domain does not, and lo
// still refuses to name another host.
TEST(Getinfo, LoopbackDomainOffersRemoteCommButReachesNoOtherHost) {
    GetinfoEnv env;
    env.offers = {testing::lo_offer(), testing::shm_offer()};
    env.local_addrs = {"127.0.0.1", "::1"};
    InfoPtr hints(alloc_info());
    hints->caps = FI_TAGGED | FI_DIRECTED_RECV | FI_REMOTE_COMM;
    hints->ep_attr->type = FI_EP_RDM;
    InfoPtr out;
    Explanation why;
    ASSERT_EQ(run(env, hints.get(), out, why), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"lo"}));
    EXPECT_EQ(out->caps & FI_REMOTE_COMM, FI_REMOTE_COMM);
    EXPECT_EQ(out->domain_attr->caps & FI_REMOTE_COMM, FI_REMOTE_COMM);
    EXPECT_TRUE(mentions(why, "domain shm")) << "the shm domain is refused for FI_REMOTE_COMM";

    EXPECT_EQ(run(env, hints.get(), out, why, "10.1.2.3", {"10.1.2.3"}), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "cannot reach remote node 10.1.2.3"));
}

transports::address::EndpointAddress sample_address() {
    transports::address::EndpointAddress a;
    a.uuid = 42;
    a.endpoint_id = 3;
    a.records.push_back({"posix", std::vector<uint8_t>(8, 1), std::vector<uint8_t>(8, 2)});
    return a;
}

TEST(Getinfo, UfiAddressAsNode) {
    const auto blob = transports::address::pack(sample_address());
    const std::string str = transports::address::to_string(blob.data(), blob.size());
    InfoPtr out;
    Explanation why;
    InfoPtr rdm(alloc_info());
    rdm->ep_attr->type = FI_EP_RDM;
    ASSERT_EQ(run(machine_env(), rdm.get(), out, why, str.c_str()), 0);
    const std::vector<size_t> lengths = {120, 128, 104};  // eth0, lo, shm
    size_t n = 0;
    for (fi_info *i = out.get(); i; i = i->next, ++n) {
        ASSERT_EQ(i->addr_format, static_cast<uint32_t>(FI_ADDR_UCX));
        ASSERT_EQ(i->dest_addrlen, lengths[n]) << "padded to each domain's address length";
        EXPECT_EQ(memcmp(i->dest_addr, blob.data(), blob.size()), 0);
        const auto *pad = static_cast<const uint8_t *>(i->dest_addr);
        for (size_t b = blob.size(); b < i->dest_addrlen; ++b) ASSERT_EQ(pad[b], 0) << b;
        // No source named: each entry names this host (uuid 0, a tcp record with port 0),
        // as applications expect of every entry.
        transports::address::EndpointAddress src;
        ASSERT_NE(i->src_addr, nullptr);
        ASSERT_TRUE(transports::address::unpack(static_cast<const uint8_t *>(i->src_addr),
                                                transports::address::content_size(i->src_addr, i->src_addrlen),
                                                src));
        EXPECT_EQ(src.uuid, 0u);
        ASSERT_EQ(src.records.size(), 1u);
        EXPECT_EQ(src.records[0].tl, "tcp");
        EXPECT_EQ(src.records[0].iface_addr, std::vector<uint8_t>(2, 0)) << "port 0: any";
    }
    EXPECT_EQ(n, 3u);
    // FI_SOURCE: the node is the source; FI_ADDR_STR: the string form, NUL included.
    InfoPtr hints(alloc_info());
    hints->addr_format = FI_ADDR_STR;
    ASSERT_EQ(run(machine_env(), hints.get(), out, why, str.c_str(), {}, FI_SOURCE), 0);
    ASSERT_EQ(out->src_addrlen, str.size() + 1);
    EXPECT_STREQ(static_cast<const char *>(out->src_addr), str.c_str());
    EXPECT_EQ(out->dest_addr, nullptr);
    // A malformed ufi address is reported, not crashed on.
    EXPECT_EQ(run(machine_env(), nullptr, out, why, "fi_ufi://AAAA"), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "node:"));
}

TEST(Getinfo, HintAddressesAreValidatedAndCopied) {
    const auto blob = transports::address::pack(sample_address());
    InfoPtr hints(alloc_info());
    hints->addr_format = FI_ADDR_UCX;
    hints->dest_addrlen = blob.size();
    hints->dest_addr = malloc(blob.size());
    memcpy(hints->dest_addr, blob.data(), blob.size());
    InfoPtr out;
    Explanation why;
    ASSERT_EQ(run(machine_env(), hints.get(), out, why), 0);
    ASSERT_EQ(out->dest_addrlen, 120u);
    EXPECT_EQ(memcmp(out->dest_addr, blob.data(), blob.size()), 0);
    // A padded address (as fi_getname gives it) is the same address.
    InfoPtr padded_hints(alloc_info());
    padded_hints->addr_format = FI_ADDR_UCX;
    padded_hints->dest_addrlen = 120;
    padded_hints->dest_addr = calloc(1, 120);
    memcpy(padded_hints->dest_addr, blob.data(), blob.size());
    ASSERT_EQ(run(machine_env(), padded_hints.get(), out, why), 0);
    EXPECT_EQ(memcmp(out->dest_addr, padded_hints->dest_addr, 120), 0);
    // An address ufi cannot read matches nothing (libfabric's core answers -FI_ENODATA).
    static_cast<uint8_t *>(hints->dest_addr)[0] = 'X';  // not a ufi address any more
    EXPECT_EQ(run(machine_env(), hints.get(), out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "hints->dest_addr"));
    // A malformed socket address (family 0): no match either.
    InfoPtr sin_hints(alloc_info());
    sin_hints->addr_format = FI_SOCKADDR_IN;
    sin_hints->src_addrlen = sizeof(sockaddr_in);
    sin_hints->src_addr = calloc(1, sizeof(sockaddr_in));
    EXPECT_EQ(run(machine_env(), sin_hints.get(), out, why), -FI_ENODATA);
    EXPECT_TRUE(mentions(why, "not an AF_INET socket address"));
    // A real one names a tcp listener: the domains with tcp serve it, in that format.
    auto *sin = static_cast<sockaddr_in *>(sin_hints->src_addr);
    free(sin_hints->src_addr);
    sin_hints->src_addr = nullptr;
    sin_hints->src_addrlen = 0;
    sin_hints->dest_addrlen = sizeof(sockaddr_in);
    sin_hints->dest_addr = calloc(1, sizeof(sockaddr_in));
    sin = static_cast<sockaddr_in *>(sin_hints->dest_addr);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(4567);
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(run(machine_env(), sin_hints.get(), out, why), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0", "lo"})) << "not shm: no tcp";
    for (const fi_info *i = out.get(); i != nullptr; i = i->next) {
        EXPECT_EQ(i->addr_format, uint32_t{FI_SOCKADDR_IN});
        ASSERT_EQ(i->dest_addrlen, sizeof(sockaddr_in));
        EXPECT_EQ(memcmp(i->dest_addr, sin, sizeof(sockaddr_in)), 0);
        ASSERT_EQ(i->src_addrlen, sizeof(sockaddr_in));
        EXPECT_EQ(static_cast<const sockaddr_in *>(i->src_addr)->sin_family, AF_INET);
    }
    EXPECT_TRUE(mentions(why, "has no tcp transport"));
    // An address too long for a domain leaves that domain out, with the reason.
    auto big = sample_address();
    big.records.push_back({"tcp", std::vector<uint8_t>(18, 3), std::vector<uint8_t>(2, 4)});
    big.records.push_back({"sysv", std::vector<uint8_t>(8, 5), std::vector<uint8_t>(32, 6)});
    const auto big_blob = transports::address::pack(big);
    ASSERT_GT(big_blob.size(), 104u);
    ASSERT_LE(big_blob.size(), 120u);
    memcpy(padded_hints->dest_addr, big_blob.data(), big_blob.size());
    ASSERT_EQ(run(machine_env(), padded_hints.get(), out, why), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0", "lo"}));
    EXPECT_TRUE(mentions(why, "longer than this domain's 104-byte addresses"));
}

TEST(Getinfo, ServiceIsValidated) {
    InfoPtr out;
    Explanation why;
    auto run_svc = [&](const char *service, uint64_t flags) {
        fi_info *info = nullptr;
        const int rc = getinfo_with_env(machine_env(), kApi, nullptr, {}, flags, nullptr, &info,
                                        why, service);
        out.reset(info);
        return rc;
    };
    EXPECT_EQ(run_svc("9228", 0), 0);
    EXPECT_EQ(run_svc("65535", FI_SOURCE), 0);
    EXPECT_EQ(run_svc("0", FI_SOURCE), 0) << "a source may ask for any port";
    // A service is a tcp port: the shared-memory domain cannot serve it, with the reason.
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0", "lo"}));
    EXPECT_TRUE(mentions(why, "need a tcp transport"));
    for (const char *bad : {"abc-no-such-service", "-1", "65536", "70000", "", " 80", "+80", "0"}) {
        EXPECT_EQ(run_svc(bad, 0), -FI_ENODATA) << "\"" << bad << "\"";
        EXPECT_FALSE(why.lines.empty());
    }
    EXPECT_TRUE(mentions(why, "port 0"));
}

// The tcp record (device and port) an entry's address names.
std::pair<std::vector<uint8_t>, uint16_t> tcp_of(const void *addr, size_t len) {
    transports::address::EndpointAddress a;
    EXPECT_TRUE(transports::address::unpack(static_cast<const uint8_t *>(addr),
                                            transports::address::content_size(addr, len), a));
    EXPECT_EQ(a.uuid, 0u) << "a host and port, not an identity";
    if (a.records.size() != 1 || a.records[0].tl != "tcp" || a.records[0].iface_addr.size() != 2) {
        ADD_FAILURE() << "not one tcp record";
        return {};
    }
    uint16_t net = 0;
    memcpy(&net, a.records[0].iface_addr.data(), 2);
    return {a.records[0].device_addr, ntohs(net)};
}

std::vector<uint8_t> device_of(const char *ip) {
    sockaddr_storage ss{};
    auto *in = reinterpret_cast<sockaddr_in *>(&ss);
    in->sin_family = AF_INET;
    inet_pton(AF_INET, ip, &in->sin_addr);
    return transports::address::tcp_device_address(reinterpret_cast<const sockaddr *>(&ss));
}

TEST(Getinfo, HostAndPortNameAnEndpoint) {
    InfoPtr out;
    Explanation why;
    auto run_named = [&](const char *node, std::vector<std::string> resolved, const char *service,
                         uint64_t flags) {
        fi_info *info = nullptr;
        // (RDM entries: the host-and-port names of RDM endpoints.)
        InfoPtr hints(alloc_info());
        hints->ep_attr->type = FI_EP_RDM;
        const int rc = getinfo_with_env(machine_env(), kApi, node, resolved, flags, hints.get(),
                                        &info, why, service);
        out.reset(info);
        return rc;
    };
    // The server: its own address and port, only on the domain whose device has the address.
    ASSERT_EQ(run_named("192.0.2.2", {"192.0.2.2"}, "9228", FI_SOURCE), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0"}));
    auto [dev, port] = tcp_of(out->src_addr, out->src_addrlen);
    EXPECT_EQ(dev, device_of("192.0.2.2"));
    EXPECT_EQ(port, 9228);
    EXPECT_EQ(out->src_addrlen, 120u) << "padded to the domain's address length";
    // No node: the service is this side's, on each network domain's own address.
    ASSERT_EQ(run_named(nullptr, {}, "9228", FI_SOURCE), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0", "lo"}));
    EXPECT_EQ(tcp_of(out->next->src_addr, out->next->src_addrlen),
              std::make_pair(device_of("127.0.0.1"), uint16_t{9228}));
    // The client: the server's address and port as the destination, a source of its own.
    ASSERT_EQ(run_named("127.0.0.1", {"127.0.0.1"}, "9228", 0), 0);
    EXPECT_EQ(domains(out.get()), (std::vector<std::string>{"eth0", "lo"}));
    for (fi_info *i = out.get(); i; i = i->next) {
        EXPECT_EQ(tcp_of(i->dest_addr, i->dest_addrlen),
                  std::make_pair(device_of("127.0.0.1"), uint16_t{9228}));
        EXPECT_NE(i->src_addr, nullptr);
    }
    EXPECT_TRUE(mentions(why, "need a tcp transport")) << "shm cannot reach a port";
}

TEST(Getinfo, ResolveNode) {
    std::vector<std::string> addrs;
    std::string why;
    ASSERT_TRUE(resolve_node("127.0.0.1", FI_NUMERICHOST, addrs, why)) << why;
    EXPECT_EQ(addrs, (std::vector<std::string>{"127.0.0.1"}));
    EXPECT_FALSE(resolve_node("not-an-ip", FI_NUMERICHOST, addrs, why));
    EXPECT_NE(why.find("does not resolve"), std::string::npos);
}

}  // namespace
}  // namespace ufi::runtime::info
