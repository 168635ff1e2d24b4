// Addresses made from a host and a port (fi_av_insertsvc / fi_av_insertsym): a ufi address
// blob with one "tcp" record whose device and iface addresses are what UCX 1.13's tcp
// transport reports for a peer listening on that IP and port, so that such an entry needs no
// address exchange. The uuid and endpoint id are 0: the peer's identity is learned at wireup.
//
// UCX 1.13 tcp layouts (verified byte for byte against real tcp ifaces in
// tests/unit/transports/address_svc_test.cpp):
//   device address  u8 flags, u8 sa_family, then
//                   - not loopback: the raw in_addr (4 bytes) or in6_addr (16 bytes);
//                   - loopback (flags bit 0; 127.0.0.1 or ::1 exactly, as
//                     ucs_sockaddr_is_inaddr_loopback): uct_iface_local_addr_ns_t, i.e.
//                     u64 system id (ucs_get_system_id(), bit 63 set when the network
//                     namespace is not the default one) and u64 namespace inode (0 when default).
//   iface address   u16 port, network byte order (the iface's listening port).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ufi::transports::address {

// The longest tcp device address of these layouts (loopback or IPv6: 2 + 16 bytes) and the
// iface address (the port): what a host-and-port address's one record holds at most.
inline constexpr size_t kTcpDeviceAddressMax = 18;
inline constexpr size_t kTcpIfaceAddressLen = 2;

// Device address of UCX 1.13's tcp transport for an AF_INET or AF_INET6 socket address; empty
// for another family.
std::vector<uint8_t> tcp_device_address(const sockaddr *sa);

// Iface address of UCX 1.13's tcp transport: the port in network byte order.
std::vector<uint8_t> tcp_iface_address(uint16_t port_host_order);

// The ufi address blob (transports/address.h) of a tcp-only peer at `sa` (AF_INET/AF_INET6,
// port taken from it). Empty with *why set for another family.
std::vector<uint8_t> tcp_peer_address(const sockaddr *sa, std::string *why = nullptr);

// The socket address a tcp record of `a` names (its IP and listening port; a loopback record
// names 127.0.0.1 or ::1): the first record of `family` (AF_INET, AF_INET6, or AF_UNSPEC for
// either). *len is sizeof(sockaddr_in) or sizeof(sockaddr_in6). false when `a` has none.
// `loopback` (when given): only a record that is (true) or is not (false) a loopback one, as
// an iface on lo (or on another device) reaches.
struct EndpointAddress;
bool tcp_socket_address(const EndpointAddress &a, int family, sockaddr_storage &out,
                        socklen_t &len, std::optional<bool> loopback = std::nullopt);
// The same from a blob validated before (an AV entry, an endpoint's own name), without
// unpacking it: nothing allocated (fi_av_lookup on socket-address AVs).
bool tcp_socket_address(const void *blob, size_t blob_len, int family, sockaddr_storage &out,
                        socklen_t &len) noexcept;

// Whether a and b have a tcp record naming the same listener (device and iface address bytes
// equal): a host-and-port address and the full address of the endpoint listening there.
bool shares_tcp_listener(const EndpointAddress &a, const EndpointAddress &b) noexcept;

// A socket address as applications pass FI_SOCKADDR_IN / FI_SOCKADDR_IN6 / FI_SOCKADDR
// addresses: its length by its family (`family` AF_INET or AF_INET6 takes only that one,
// AF_UNSPEC either), within `avail` bytes. 0 with *why when it is none of these.
size_t socket_address_length(const void *addr, size_t avail, int family,
                             std::string *why = nullptr);

// A service as ufi reads it (fi_getinfo, fi_av_insertsvc, fi_av_insertsym's first port): a
// decimal port number 1..65535 (0 too when `allow_zero`: a source address asking for any
// port), or a name /etc/services knows for tcp ("http"). Empty strings, signs, spaces and
// numbers beyond 65535 are refused, never truncated. false with *why.
bool parse_service(const char *service, bool allow_zero, uint16_t &port, std::string *why = nullptr);

// How resolving a node/service pair failed.
enum class ResolveError {
    None,
    BadService,  // not a port number or service name getaddrinfo knows
    NoAddress,   // the host does not resolve to an IPv4 or IPv6 address
};

// Resolves node (numeric IPv4/IPv6 or a host name) with getaddrinfo and service with
// parse_service (port 0 refused). Of the results, the first IPv4 address wins, else the first IPv6 one, as
// UCX's tcp transport prefers (UCX_TCP_AF_PRIO=inet,inet6). *why says why on failure.
ResolveError resolve(const char *node, const char *service, sockaddr_storage &out,
                     std::string *why = nullptr);

}  // namespace ufi::transports::address
