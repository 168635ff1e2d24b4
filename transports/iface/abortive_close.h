// A process killed while its peers are connected to a port it listens on (an endpoint on a
// port the application chose: libfabric's client/server flow) closes those connections first,
// by the kernel, and the port then stays in TIME_WAIT for about a minute: UCT's tcp listener
// binds without SO_REUSEADDR, so a server restarted at once cannot listen there
// (fi_enable: -FI_EADDRINUSE). An abortive close leaves no TIME_WAIT: with SO_LINGER {on, 0}
// the kernel resets the connection instead (the peer sees the reset a killed process gives
// anyway). So the connections accepted on such a port are set to close that way as they
// come, and a graceful fi_close that closes them first (its peers kept them past
// UFI_NAMED_CLOSE_WAIT, close_order.h) first waits for what they hold to be sent, since a
// reset drops what is unsent.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>

namespace ufi::transports {

// Sets SO_LINGER {on, 0} on this process's connected tcp sockets whose local port is `port`
// (the connections accepted there: outgoing ones have other local ports). Returns how many.
unsigned close_abortively_on(uint16_t port) noexcept;

// Waits, within `bound`, until those sockets have nothing left to send or unacknowledged
// (SIOCOUTQ); whether that came.
bool wait_for_sent_on(uint16_t port, std::chrono::milliseconds bound) noexcept;

// Resets this process's connected tcp sockets whose local port is `local_port` and whose peer
// is `peer` (connect with AF_UNSPEC: the kernel sends a reset and closes the connection, the
// descriptor staying its owner's until it closes it). A connection ended this way leaves no
// TIME_WAIT on either side, where the side that sends the first FIN keeps one for a minute.
// Returns how many.
unsigned reset_connections(uint16_t local_port, const sockaddr *peer, socklen_t peer_len) noexcept;

}  // namespace ufi::transports
