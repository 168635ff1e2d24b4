// Who closes a tcp connection first keeps it in TIME_WAIT for about a minute. UCT's tcp iface
// binds its listening socket without SO_REUSEADDR, so if an endpoint listening on a port the
// application chose (a source address with a port: libfabric's client/server flow, fabtests'
// server on 9228) closes its accepted connections first, no endpoint can listen on that port
// again until TIME_WAIT ends. Closing such an endpoint therefore waits, boundedly, for the
// peers connected to that port to close their side first: its own close is then the passive
// one and leaves nothing behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace ufi::transports {

// How many sockets of this host with local tcp port `port` are ESTABLISHED (their peer has not
// closed), counted in /proc/net/tcp and /proc/net/tcp6 (0 where those cannot be read).
unsigned established_on_port(uint16_t port) noexcept;

// The same count in one /proc/net/tcp-format text (the parser, for tests).
unsigned established_on_port_in(std::string_view table, uint16_t port) noexcept;

// Waits until no connection on `port` is ESTABLISHED, or `bound` passed; whether none is.
bool wait_for_peers_to_close(uint16_t port, std::chrono::milliseconds bound) noexcept;

}  // namespace ufi::transports
