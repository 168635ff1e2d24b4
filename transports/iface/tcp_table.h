// The kernel's table of this network namespace's tcp sockets (/proc/net/tcp and tcp6), read
// for what UCT does not tell: whether the peers of an endpoint that listens on a port the
// application chose have closed their side (close_order.h), and whether a peer's host still
// acknowledges what is sent to it (a host gone silent: link cut, host frozen). UCT's tcp
// transport reports a connection the peer closed, but a silent host only after the kernel
// gives up retransmitting (tcp_retries2, about 15 minutes); the table shows the
// retransmissions long before.
#pragma once

#include "transports/address.h"
#include "transports/resource.h"

#include <sys/socket.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace ufi::transports {

struct TcpSocketRow {
    // Addresses as the kernel holds them: IPv4 as an IPv4-mapped IPv6 address (tcp rows),
    // IPv6 as is (tcp6 rows, where an IPv4 peer of a dual-stack socket is mapped too).
    uint8_t local_ip[16] = {};
    uint16_t local_port = 0;
    uint8_t remote_ip[16] = {};
    uint16_t remote_port = 0;
    unsigned state = 0;          // TCP_ESTABLISHED = 1, ...
    uint32_t tx_queue = 0;       // bytes sent and not yet acknowledged (or not yet sent)
    uint32_t retransmits = 0;    // unacknowledged retransmissions of the oldest segment
};

inline constexpr unsigned kTcpEstablished = 1;

// The rows of a table in /proc/net/tcp's or /proc/net/tcp6's format (either per line: 8 or
// 32 hex digits per address); lines that do not parse are skipped, and a line that stops
// after the state has no queue or retransmission counts (0).
std::vector<TcpSocketRow> parse_tcp_table(std::string_view text);

// Both tables of this process's network namespace; empty where they cannot be read.
std::vector<TcpSocketRow> read_tcp_tables();

// `sa` (AF_INET or AF_INET6) in the rows' 16-byte form; false for another family.
bool row_address_of(const sockaddr *sa, uint8_t (&out)[16]) noexcept;

// Whether an established socket towards `host` (the rows' 16-byte form) has data its peer
// has not acknowledged after at least one retransmission: the host does not answer now. (One
// lost segment also counts until it is acknowledged: callers look for a stall that lasts.)
bool stalled_towards(const std::vector<TcpSocketRow> &rows, const uint8_t (&host)[16]) noexcept;

// Whether traffic to `peer` over a lane of `lane` goes through this host's kernel tcp to
// another host (UCT's tcp transport, and the peer's tcp record not a loopback one: a peer on
// this host is no host that can go silent), and the host's address in the rows' form.
bool tcp_host_of(const Resource &lane, const address::EndpointAddress &peer,
                 uint8_t (&host)[16]) noexcept;

}  // namespace ufi::transports
