// Hosts that go silent. UCT's tcp transport reports a connection its peer closed (a process
// that died on a live host: its kernel closes the sockets), but not a host that stops
// answering (a link cut, a host frozen or powered off): the kernel retransmits for about 15
// minutes (tcp_retries2) before it gives up, and until then every operation towards the peer
// waits. So while operations or receives wait and a peer is reached over tcp, each peer check
// (UFI_PEER_CHECK_INTERVAL) sends the peer a keepalive, so that its host has something to
// acknowledge, and looks in the kernel's tcp table whether the sockets towards that host hold
// data it has not acknowledged after retransmissions. A stall that lasts UFI_PEER_TIMEOUT
// fails the peer with FI_ETIMEDOUT. A peer process that is alive but does not progress is not
// failed: its kernel acknowledges what arrives. A link that comes back within the bound loses
// nothing: tcp retransmits what was in flight. Peers on this host (shared memory, loopback)
// are never watched, and the shared-memory path pays nothing: the check runs on the clock
// of the existing peer checks.
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "transports/iface/tcp_table.h"

#include <rdma/fi_errno.h>

#include <chrono>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;

void DataPath::on_connected_lane(Peer &p) noexcept {
    if (cfg_.peer_timeout_ms <= 0 || cfg_.datagrams || !p.lane.connected()) return;
    if (!transports::tcp_host_of(p.lane.resource(), p.address, p.host_ip)) return;
    p.host_watched = true;
    p.stalled_since = {};
    watch_hosts_ = true;
}

void DataPath::watch_hosts() noexcept {
    if (!watch_hosts_ || cfg_.peer_timeout_ms <= 0) return;
    const auto now = std::chrono::steady_clock::now();
    const auto timeout = std::chrono::milliseconds(cfg_.peer_timeout_ms);
    std::vector<transports::TcpSocketRow> rows;
    bool read = false;
    // By index: failing a peer runs no handler that adds peers, but stay safe.
    for (size_t i = 0; i < peers_.size(); ++i) {
        Peer &p = *peers_[i];
        if (!p.host_watched || p.state != PeerState::kConnected || !p.lane.connected()) continue;
        // Something in flight for the host to acknowledge (a full lane has data in flight
        // already).
        if (wireup_.send_keepalive(p) == transports::kOk) ++stats_.keepalives_sent;
        if (!read) {
            try {
                rows = transports::read_tcp_tables();
            } catch (const std::bad_alloc &) {
                return;  // (the next check)
            }
            read = true;
        }
        if (!transports::stalled_towards(rows, p.host_ip)) {
            p.stalled_since = {};
            continue;
        }
        if (p.stalled_since == std::chrono::steady_clock::time_point{}) {
            p.stalled_since = now;
            continue;
        }
        if (now - p.stalled_since < timeout) continue;
        UFI_LOG_WARN(Subsys::EpData,
                     "peer {}: its host has acknowledged nothing sent to it for {} ms (link "
                     "down, host frozen or gone; UFI_PEER_TIMEOUT): its operations complete "
                     "with FI_ETIMEDOUT",
                     transports::address::describe(p.address),
                     std::chrono::duration_cast<std::chrono::milliseconds>(now - p.stalled_since)
                         .count());
        ++stats_.hosts_timed_out;
        fail_peer(p, -FI_ETIMEDOUT);
        drop_gone_peer(p);  // its lanes go: a link that comes back finds the connection closed
    }
}

}  // namespace ufi::runtime::proto
