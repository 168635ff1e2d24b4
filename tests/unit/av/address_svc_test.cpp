// transports/address_svc: the tcp addresses ufi synthesizes for fi_av_insertsvc must be byte
// for byte what UCX's tcp transport reports. Opens real tcp ifaces (eth0-like devices and lo,
// IPv4 and, where UCX agrees to, IPv6), reads uct_iface_get_device_address /
// uct_iface_get_address, finds the port the iface listens on independently (/proc/net/tcp*),
// and compares with tcp_device_address / tcp_iface_address for that IP and port.
#include "transports/address.h"
#include "transports/address_svc.h"
#include "transports/iface/discovery.h"
#include "transports/ucx_handles.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace ufi::transports::address {
namespace {

ucs_status_t no_error(void *, uct_ep_h, ucs_status_t) {
    return UCS_OK;
}

// Local ports in LISTEN state (st 0A) in /proc/net/tcp and tcp6.
std::set<unsigned> listening_ports() {
    std::set<unsigned> ports;
    for (const char *path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream f(path);
        std::string line;
        std::getline(f, line);
        while (std::getline(f, line)) {
            std::istringstream in(line);
            std::string sl, local, remote, st;
            in >> sl >> local >> remote >> st;
            if (st != "0A") continue;
            const auto colon = local.rfind(':');
            if (colon != std::string::npos)
                ports.insert(std::stoul(local.substr(colon + 1), nullptr, 16));
        }
    }
    return ports;
}

// The first address of `family` on interface `dev`.
bool interface_address(const std::string &dev, int family, sockaddr_storage &out) {
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) return false;
    bool found = false;
    for (ifaddrs *i = list; i != nullptr && !found; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || dev != i->ifa_name || i->ifa_addr->sa_family != family)
            continue;
        if (family == AF_INET6 &&
            IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6 *>(i->ifa_addr)->sin6_addr)) {
            continue;
        }
        std::memset(&out, 0, sizeof out);
        std::memcpy(&out, i->ifa_addr,
                    family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
        found = true;
    }
    freeifaddrs(list);
    return found;
}

struct Opened {
    std::vector<uint8_t> device;
    std::vector<uint8_t> iface;
    unsigned port = 0;  // found in /proc/net/tcp
    bool ok = false;
    std::string why;
};

// Opens tcp on `dev` and reads its addresses.
Opened open_tcp(const Resource &r) {
    Opened o;
    ComponentList comps;
    if (ComponentList::query(comps) != UCS_OK) return o;
    uct_component_h comp = nullptr;
    for (uct_component_h c : comps.components()) {
        uct_component_attr_t a;
        std::memset(&a, 0, sizeof a);
        a.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if (uct_component_query(c, &a) == UCS_OK && r.component == a.name) comp = c;
    }
    if (comp == nullptr) return o;
    AsyncContext async;
    Worker worker;
    MdConfig mdc;
    Md md;
    IfaceConfig ifc;
    if (AsyncContext::create(AsyncMode::kPoll, async) != UCS_OK ||
        Worker::create(async, ThreadMode::kSingle, worker) != UCS_OK ||
        MdConfig::read(comp, mdc) != UCS_OK || Md::open(comp, r.md.c_str(), mdc, md) != UCS_OK) {
        o.why = "cannot open the md";
        return o;
    }
    if (IfaceConfig::read(md.get(), "tcp", ifc) != UCS_OK) {
        o.why = "cannot read the tcp iface config";
        return o;
    }
    uct_iface_params_t params;
    std::memset(&params, 0, sizeof params);
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = "tcp";
    params.mode.device.dev_name = r.dev.c_str();
    params.err_handler = no_error;
    const auto before = listening_ports();
    Iface iface;
    if (Iface::open(md, worker, params, ifc, iface) != UCS_OK) {
        o.why = "uct_iface_open failed";
        return o;
    }
    uct_iface_attr_t attr;
    if (uct_iface_query(iface.get(), &attr) != UCS_OK) return o;
    o.device.resize(attr.device_addr_len);
    o.iface.resize(attr.iface_addr_len);
    if (uct_iface_get_device_address(
            iface.get(), reinterpret_cast<uct_device_addr_t *>(o.device.data())) != UCS_OK ||
        uct_iface_get_address(iface.get(), reinterpret_cast<uct_iface_addr_t *>(o.iface.data())) !=
            UCS_OK) {
        o.why = "cannot read the addresses";
        return o;
    }
    std::vector<unsigned> fresh;
    for (unsigned p : listening_ports()) {
        if (!before.count(p)) fresh.push_back(p);
    }
    if (fresh.size() != 1) {
        o.why = "cannot tell which port the iface listens on (" + std::to_string(fresh.size()) +
                " new ports)";
        return o;
    }
    o.port = fresh[0];
    o.ok = true;
    return o;
}

std::string hex(const std::vector<uint8_t> &b) {
    std::string s;
    char t[4];
    for (uint8_t x : b) {
        snprintf(t, sizeof t, "%02x ", x);
        s += t;
    }
    return s;
}

void check_device(const Resource &r, int family, int &checked) {
    sockaddr_storage ss;
    if (!interface_address(r.dev, family, ss)) return;
    const Opened o = open_tcp(r);
    if (!o.ok) {
        ADD_FAILURE() << "tcp/" << r.dev << ": " << o.why;
        return;
    }
    if (o.device.size() > 1 && o.device[1] != family) return;  // UCX chose the other family
    if (family == AF_INET) {
        reinterpret_cast<sockaddr_in *>(&ss)->sin_port = htons(static_cast<uint16_t>(o.port));
    } else {
        reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port = htons(static_cast<uint16_t>(o.port));
    }
    const auto *sa = reinterpret_cast<const sockaddr *>(&ss);
    EXPECT_EQ(hex(tcp_device_address(sa)), hex(o.device))
        << "tcp/" << r.dev << " family " << family;
    EXPECT_EQ(hex(tcp_iface_address(static_cast<uint16_t>(o.port))), hex(o.iface))
        << "tcp/" << r.dev;
    // The whole synthesized blob carries exactly those records.
    const auto blob = tcp_peer_address(sa);
    EndpointAddress a;
    ASSERT_TRUE(unpack(blob.data(), blob.size(), a));
    ASSERT_EQ(a.records.size(), 1u);
    EXPECT_EQ(a.records[0].device_addr, o.device);
    EXPECT_EQ(a.records[0].iface_addr, o.iface);
    ++checked;
}

// UCX picks the address family by UCX_TCP_AF_PRIO (inet,inet6 by default); meson runs this
// test a second time with UCX_TCP_AF_PRIO=inet6 so that IPv6 ifaces are compared too.
TEST(AddressSvc, MatchesRealTcpIfaces) {
    int checked4 = 0;
    int checked6 = 0;
    bool has_global_v6 = false;
    for (const Resource &r : discovery().resources) {
        if (r.tl != "tcp") continue;
        sockaddr_storage ss;
        has_global_v6 |= r.dev != "lo" && interface_address(r.dev, AF_INET6, ss);
        check_device(r, AF_INET, checked4);
        check_device(r, AF_INET6, checked6);
    }
    if (checked4 + checked6 == 0) GTEST_SKIP() << "no tcp transport on this machine";
    const char *prio = std::getenv("UCX_TCP_AF_PRIO");
    if (prio != nullptr && std::string(prio).rfind("inet6", 0) == 0 && has_global_v6) {
        EXPECT_GT(checked6, 0)
            << "UCX_TCP_AF_PRIO=inet6 and a global IPv6 address: an IPv6 iface was compared";
    }
    RecordProperty("ipv4_ifaces_checked", checked4);
    RecordProperty("ipv6_ifaces_checked", checked6);
}

TEST(AddressSvc, Layout) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(0x1234);
    inet_pton(AF_INET, "10.1.2.3", &in.sin_addr);
    const auto dev = tcp_device_address(reinterpret_cast<sockaddr *>(&in));
    EXPECT_EQ(dev, (std::vector<uint8_t>{0, AF_INET, 10, 1, 2, 3}));
    EXPECT_EQ(tcp_iface_address(0x1234), (std::vector<uint8_t>{0x12, 0x34}));
    // Loopback: host id and network namespace instead of the IP (18 bytes, flag bit 0).
    inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
    const auto lo = tcp_device_address(reinterpret_cast<sockaddr *>(&in));
    ASSERT_EQ(lo.size(), 18u);
    EXPECT_EQ(lo[0], 1);
    EXPECT_EQ(lo[1], AF_INET);
    inet_pton(AF_INET, "127.0.0.2", &in.sin_addr);  // UCX's loopback test is exact
    EXPECT_EQ(tcp_device_address(reinterpret_cast<sockaddr *>(&in)).size(), 6u);
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_addr = in6addr_loopback;
    EXPECT_EQ(tcp_device_address(reinterpret_cast<sockaddr *>(&in6)).size(), 18u);
    inet_pton(AF_INET6, "fd00::2", &in6.sin6_addr);
    EXPECT_EQ(tcp_device_address(reinterpret_cast<sockaddr *>(&in6)).size(), 18u);
    EXPECT_EQ(tcp_device_address(reinterpret_cast<sockaddr *>(&in6))[0], 0);
    // Every domain's addresses are sized to hold the longest of these (runtime/info/offers.cpp).
    EXPECT_EQ(lo.size(), kTcpDeviceAddressMax);
    EXPECT_LE(dev.size(), kTcpDeviceAddressMax);
    EXPECT_EQ(tcp_iface_address(1).size(), kTcpIfaceAddressLen);
    sockaddr bad{};
    bad.sa_family = AF_UNIX;
    EXPECT_TRUE(tcp_device_address(&bad).empty());
    std::string why;
    EXPECT_TRUE(tcp_peer_address(&bad, &why).empty());
    EXPECT_FALSE(why.empty());
}

TEST(AddressSvc, Resolve) {
    sockaddr_storage ss;
    ASSERT_EQ(resolve("192.0.2.9", "77", ss), ResolveError::None);
    EXPECT_EQ(ss.ss_family, AF_INET);
    EXPECT_EQ(ntohs(reinterpret_cast<sockaddr_in *>(&ss)->sin_port), 77);
    ASSERT_EQ(resolve("fd00::1", "78", ss), ResolveError::None);
    EXPECT_EQ(ss.ss_family, AF_INET6);
    ASSERT_EQ(resolve("localhost", "79", ss), ResolveError::None);
    EXPECT_EQ(ss.ss_family, AF_INET) << "IPv4 first, as UCX_TCP_AF_PRIO=inet,inet6";
    std::string why;
    EXPECT_EQ(resolve("10.0.0.1", "not-a-service-name", ss, &why), ResolveError::BadService);
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(resolve("300.1.1.1.1", "1", ss, &why), ResolveError::NoAddress);
}

}  // namespace
}  // namespace ufi::transports::address
