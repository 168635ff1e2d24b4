// UCT's tcp transport, made safe to drive from ufi: the events one progress call handles.
//
// Why: UCT's tcp progress (UCX 1.13.1, src/uct/tcp/tcp_iface.c:300-340) takes up to MAX_POLL
// (16) ready sockets from one epoll_wait and handles them in turn. When handling one of them
// closes another endpoint of the same batch (a message from a peer that just died makes us
// answer it; the answer fails on our connection to that peer, and UCT marks that endpoint
// CLOSED), the batch's later entry for it still runs, and UCT aborts the process on its own
// assertion (`ep->conn_state != UCT_TCP_EP_CONN_STATE_CLOSED`, tcp_iface.c:307; Debian builds
// UCX with assertions). The soak found it twice (a server killed inside UCX after 90 and
// 595 s of clients dying at random). One event per epoll_wait leaves no stale entry to run,
// whoever closed the endpoint; measured on loopback, latency and bandwidth did not move
// (docs/reliability.md).
#pragma once

#include "transports/ucx_fwd.h"

#include <string>

namespace ufi::transports {

// For a tcp iface configuration: the ready sockets one progress call takes from epoll
// (UCT's MAX_POLL) as UFI_TCP_MAX_POLL says (default 1; 0 leaves UCX's setting, 16 unless
// UCX_TCP_MAX_POLL says otherwise). Other transports' configurations are left alone. A value
// UCT refuses is logged once and left at UCX's.
void tune_tcp_events(uct_iface_config_t *config, const std::string &tl);

}  // namespace ufi::transports
