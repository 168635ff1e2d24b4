// A peer whose endpoint came back: an endpoint closed and opened again under the name it had
// (fabtests' fi_rdm_multi_client -R sets src_addr to the first client's fi_getname; a service
// restarted with a fixed name). The identity (uuid, endpoint id) is the same, so the peer table
// still holds the old endpoint's peer, connected to lanes that lead nowhere. Two signs tell
// the new endpoint apart: its WIREUP_REQ carries another incarnation (wire.h), and its address
// has other records for a transport (a new shared-memory segment) than the ones the peer had.
// The old peer's operations then fail with FI_ECONNRESET and a fresh peer takes its index,
// so the AV entries and directed receives that named it reach the new endpoint.
#include "runtime/proto/wireup.h"

#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"

#include <rdma/fi_errno.h>

#include <cstring>
#include <new>

namespace ufi::runtime::proto {

namespace address = transports::address;
using log::Subsys;

Peer &Wireup::restart_peer(uint32_t idx, address::EndpointAddress &&a, const char *why) {
    auto fresh = std::make_unique<Peer>();  // first: bad_alloc leaves the old peer as it was
    Peer &old = *dp_.peers_[idx];
    UFI_LOG_INFO(Subsys::EpData,
                 "peer {}: {}: the endpoint it was has gone; what was on its way to or from it "
                 "fails with FI_ECONNRESET, and the new one is connected afresh",
                 address::describe(old.address), why);
    if (old.state != PeerState::kFailed) dp_.fail_peer(old, -FI_ECONNRESET, true);
    dp_.drop_gone_peer(old);  // (old.local_idx == idx)
    fresh->local_idx = idx;
    fresh->src_key = old.src_key;  // (the same slot: the handshake names it afresh)
    fresh->busy = old.busy;  // (still on dp_.busy_: dp_.drain() finds nothing to do)
    fresh->present_key = std::move(old.present_key);
    fresh->next_msg_id = old.next_msg_id;
    fresh->address = std::move(a);
    fresh->report_id = dp_.peers_.report_id_for(fresh->address);
    dp_.peers_[idx] = std::move(fresh);
    ++dp_.stats_.peer_restarts;
    return *dp_.peers_[idx];
}

void Wireup::run_restarts() noexcept {
    std::vector<PendingRestart> todo;
    todo.swap(restarts_);  // handling a request may find another restart
    for (PendingRestart &r : todo) {
        if (r.peer >= dp_.peers_.size()) continue;
        wire::WireupHdr h;
        std::memcpy(&h, r.request.data(), sizeof h);
        const Peer &p = *dp_.peers_[r.peer];
        // (a second request of the same new endpoint finds the restart done)
        if (p.remote_incarnation != 0 && p.remote_incarnation != h.incarnation) {
            try {
                restart_peer(r.peer, std::move(r.address), "its request comes from a new incarnation");
            } catch (const std::bad_alloc &) {
                UFI_LOG_WARN(Subsys::EpData, "out of memory: a restarted peer's request is dropped");
                continue;
            }
        }
        handle_wireup(r.request.data(), r.request.size());
    }
}

}  // namespace ufi::runtime::proto
