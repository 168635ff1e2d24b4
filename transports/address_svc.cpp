#include "transports/address_svc.h"

#include "transports/address.h"

#include <ucs/sys/sock.h>
#include <ucs/sys/uid.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <cstring>

namespace ufi::transports::address {

namespace {

constexpr uint8_t kFlagLoopback = 1;               // UCT_TCP_DEVICE_ADDR_FLAG_LOOPBACK
constexpr uint64_t kLocalAddrFlagNs = 1ULL << 63;  // UCT_IFACE_LOCAL_ADDR_FLAG_NS
// UCS's default network namespace inode (UCS_PROCESS_NS_NET_DFLT): a process whose
// /proc/self/ns/net has another inode is in a non-default namespace.
constexpr uint64_t kDefaultNetNs = 0xF0000080u;

uint64_t net_namespace() {
    struct stat st;
    if (stat("/proc/self/ns/net", &st) != 0) return kDefaultNetNs;  // as ucs_sys_get_ns
    return static_cast<uint64_t>(st.st_ino);
}

void put_u64_host(std::vector<uint8_t> &b, uint64_t v) {
    uint8_t raw[8];
    std::memcpy(raw, &v, sizeof raw);  // UCX writes these fields in host order
    b.insert(b.end(), raw, raw + sizeof raw);
}

}  // namespace

std::vector<uint8_t> tcp_device_address(const sockaddr *sa) {
    if (sa == nullptr || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) return {};
    std::vector<uint8_t> b;
    const bool loopback = ucs_sockaddr_is_inaddr_loopback(sa) != 0;
    b.push_back(loopback ? kFlagLoopback : 0);
    b.push_back(static_cast<uint8_t>(sa->sa_family));
    if (loopback) {
        const uint64_t ns = net_namespace();
        uint64_t id = ucs_get_system_id() & ~kLocalAddrFlagNs;
        const bool default_ns = ns == kDefaultNetNs;
        if (!default_ns) id |= kLocalAddrFlagNs;
        put_u64_host(b, id);
        put_u64_host(b, default_ns ? 0 : ns);
    } else if (sa->sa_family == AF_INET) {
        const auto *in = reinterpret_cast<const sockaddr_in *>(sa);
        const auto *p = reinterpret_cast<const uint8_t *>(&in->sin_addr);
        b.insert(b.end(), p, p + sizeof(in->sin_addr));
    } else {
        const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(sa);
        const auto *p = reinterpret_cast<const uint8_t *>(&in6->sin6_addr);
        b.insert(b.end(), p, p + sizeof(in6->sin6_addr));
    }
    return b;
}

std::vector<uint8_t> tcp_iface_address(uint16_t port_host_order) {
    const uint16_t net = htons(port_host_order);
    std::vector<uint8_t> b(sizeof net);
    std::memcpy(b.data(), &net, sizeof net);
    return b;
}

std::vector<uint8_t> tcp_peer_address(const sockaddr *sa, std::string *why) {
    if (sa == nullptr || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
        if (why != nullptr) *why = "not an IPv4 or IPv6 address";
        return {};
    }
    const uint16_t port = sa->sa_family == AF_INET
                              ? ntohs(reinterpret_cast<const sockaddr_in *>(sa)->sin_port)
                              : ntohs(reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_port);
    EndpointAddress a;
    a.uuid = 0;  // identity learned at wireup
    a.endpoint_id = 0;
    a.records.push_back(TransportRecord{"tcp", tcp_device_address(sa), tcp_iface_address(port)});
    return pack(a, why);
}

ResolveError resolve(const char *node, const char *service, sockaddr_storage &out,
                     std::string *why) {
    addrinfo hints;
    std::memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *res = nullptr;
    const int rc = getaddrinfo(node, service, &hints, &res);
    if (rc != 0) {
        if (why != nullptr) {
            *why = std::string("getaddrinfo(") + (node ? node : "NULL") + ", " +
                   (service ? service : "NULL") + "): " + gai_strerror(rc);
        }
        return rc == EAI_SERVICE ? ResolveError::BadService : ResolveError::NoAddress;
    }
    const addrinfo *pick = nullptr;
    for (const addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
        if (ai->ai_family == AF_INET6 && pick == nullptr) pick = ai;
    }
    if (pick == nullptr || pick->ai_addrlen > sizeof out) {
        freeaddrinfo(res);
        if (why != nullptr)
            *why = std::string(node ? node : "NULL") + " has no IPv4 or IPv6 address";
        return ResolveError::NoAddress;
    }
    std::memset(&out, 0, sizeof out);
    std::memcpy(&out, pick->ai_addr, pick->ai_addrlen);
    freeaddrinfo(res);
    return ResolveError::None;
}

}  // namespace ufi::transports::address
