#include "transports/address_svc.h"

#include "transports/address.h"

#include <ucs/sys/sock.h>
#include <ucs/sys/uid.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <cstring>
#include <string_view>

namespace ufi::transports::address {

namespace {

constexpr size_t kMaxServiceLength = 255;  // longer than any /etc/services name
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

bool parse_service(const char *service, bool allow_zero, uint16_t &port, std::string *why) {
    const auto fail = [&](const std::string &text) {
        if (why != nullptr) *why = text;
        return false;
    };
    if (service == nullptr) return fail("service is NULL");
    const std::string_view s(service, strnlen(service, kMaxServiceLength + 1));
    if (s.empty()) return fail("service is an empty string");
    if (s.size() > kMaxServiceLength) return fail("service is longer than " + std::to_string(kMaxServiceLength) + " characters");
    if (s.find_first_not_of("0123456789") == std::string_view::npos) {
        // Decimal, refused past 65535 rather than wrapped (getaddrinfo truncates 70000 to 4464).
        unsigned long v = 0;
        for (char c : s) {
            v = v * 10 + static_cast<unsigned long>(c - '0');
            if (v > 65535) return fail("service \"" + std::string(s) + "\" is beyond the largest port, 65535");
        }
        if (v == 0 && !allow_zero) return fail("service \"" + std::string(s) + "\" is port 0, which no peer listens on");
        port = static_cast<uint16_t>(v);
        return true;
    }
    servent entry;
    servent *found = nullptr;
    char buf[1024];
    if (getservbyname_r(std::string(s).c_str(), "tcp", &entry, buf, sizeof buf, &found) != 0 || found == nullptr) {
        return fail("service \"" + std::string(s) + "\" is neither a port number (1-65535) nor a tcp service name of /etc/services");
    }
    port = ntohs(static_cast<uint16_t>(found->s_port));
    return true;
}

ResolveError resolve(const char *node, const char *service, sockaddr_storage &out,
                     std::string *why) {
    uint16_t port = 0;
    if (!parse_service(service, false, port, why)) return ResolveError::BadService;
    addrinfo hints;
    std::memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *res = nullptr;
    const int rc = getaddrinfo(node, nullptr, &hints, &res);
    if (rc != 0) {
        if (why != nullptr) *why = std::string("getaddrinfo(") + (node ? node : "NULL") + "): " + gai_strerror(rc);
        return ResolveError::NoAddress;
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
    if (out.ss_family == AF_INET) reinterpret_cast<sockaddr_in *>(&out)->sin_port = htons(port);
    else reinterpret_cast<sockaddr_in6 *>(&out)->sin6_port = htons(port);
    return ResolveError::None;
}

namespace {

// The socket address one tcp record names (see tcp_socket_address); false when the record is
// not a tcp one of `family` (and of the loopback kind asked for).
bool socket_of_record(std::string_view tl, const uint8_t *dev, size_t dev_len,
                      const uint8_t *iface, size_t iface_len, int family,
                      std::optional<bool> only_loopback, sockaddr_storage &out,
                      socklen_t &len) noexcept {
    if (tl != "tcp" || dev_len < 2 || iface_len != sizeof(uint16_t)) return false;
    const bool loopback = (dev[0] & kFlagLoopback) != 0;
    if (only_loopback.has_value() && loopback != *only_loopback) return false;
    const int af = dev[1];
    if ((af != AF_INET && af != AF_INET6) || (family != AF_UNSPEC && af != family)) return false;
    uint16_t port = 0;  // network byte order, as the iface address holds it
    std::memcpy(&port, iface, sizeof port);
    if (af == AF_INET) {
        sockaddr_in in{};
        if (!loopback && dev_len != 2 + sizeof(in.sin_addr)) return false;
        in.sin_family = AF_INET;
        in.sin_port = port;
        if (loopback) in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else std::memcpy(&in.sin_addr, dev + 2, sizeof(in.sin_addr));
        std::memcpy(&out, &in, sizeof in);  // the caller reads `len` bytes
        len = sizeof(sockaddr_in);
    } else {
        sockaddr_in6 in6{};
        if (!loopback && dev_len != 2 + sizeof(in6.sin6_addr)) return false;
        in6.sin6_family = AF_INET6;
        in6.sin6_port = port;
        if (loopback) in6.sin6_addr = in6addr_loopback;
        else std::memcpy(&in6.sin6_addr, dev + 2, sizeof(in6.sin6_addr));
        std::memcpy(&out, &in6, sizeof in6);
        len = sizeof(sockaddr_in6);
    }
    return true;
}

}  // namespace

bool tcp_socket_address(const EndpointAddress &a, int family, sockaddr_storage &out,
                        socklen_t &len, std::optional<bool> only_loopback) {
    for (const TransportRecord &r : a.records) {
        if (socket_of_record(r.tl, r.device_addr.data(), r.device_addr.size(), r.iface_addr.data(),
                             r.iface_addr.size(), family, only_loopback, out, len)) {
            return true;
        }
    }
    return false;
}

bool tcp_socket_address(const void *blob, size_t blob_len, int family, sockaddr_storage &out,
                        socklen_t &len) noexcept {
    struct Want {
        int family;
        sockaddr_storage &out;
        socklen_t &len;
    } want{family, out, len};
    return find_record(
        blob, blob_len,
        [](const RecordView &r, void *ctx) {
            auto *w = static_cast<Want *>(ctx);
            return socket_of_record(r.tl, r.device_addr, r.device_addr_len, r.iface_addr,
                                    r.iface_addr_len, w->family, std::nullopt, w->out, w->len);
        },
        &want);
}

size_t socket_address_length(const void *addr, size_t avail, int family_wanted, std::string *why) {
    const auto fail = [&](const char *what) {
        if (why != nullptr) *why = what;
        return size_t{0};
    };
    if (addr == nullptr || avail < sizeof(sa_family_t)) return fail("no socket address");
    sa_family_t family = 0;
    std::memcpy(&family, addr, sizeof family);
    const bool v4_ok = family_wanted != AF_INET6;
    const bool v6_ok = family_wanted != AF_INET;
    if (family == AF_INET && v4_ok) {
        return avail >= sizeof(sockaddr_in) ? sizeof(sockaddr_in) : fail("shorter than sockaddr_in");
    }
    if (family == AF_INET6 && v6_ok) {
        return avail >= sizeof(sockaddr_in6) ? sizeof(sockaddr_in6) : fail("shorter than sockaddr_in6");
    }
    return fail(family_wanted == AF_INET    ? "not an AF_INET socket address"
                : family_wanted == AF_INET6 ? "not an AF_INET6 socket address"
                                            : "not an AF_INET or AF_INET6 socket address");
}

bool shares_tcp_listener(const EndpointAddress &a, const EndpointAddress &b) noexcept {
    for (const TransportRecord &x : a.records) {
        if (x.tl != "tcp") continue;
        for (const TransportRecord &y : b.records) {
            if (y.tl == "tcp" && x.device_addr == y.device_addr && x.iface_addr == y.iface_addr) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace ufi::transports::address
