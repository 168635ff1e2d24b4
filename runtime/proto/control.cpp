// Control messages (control_channel.h), and the answers' parsing the modules share
// (DataPath::answered).
#include "runtime/proto/control_channel.h"

#include "runtime/cntr/binding.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;
namespace tx = transports;

ControlMsg *ControlChannel::make(uint8_t id, size_t payload) noexcept {
    ControlMsg *m = nullptr;
    try {
        m = pool_.get();
        m->bytes.resize(1 + payload);  // (within the kept capacity once the pool is warm)
    } catch (const std::bad_alloc &) {
        drop(m);
        return nullptr;
    }
    m->bytes[0] = id;
    return m;
}

void ControlChannel::drop(ControlMsg *m) noexcept {
    if (m != nullptr) pool_.put(m);
}

void ControlChannel::drop_queued(Peer &p) noexcept {
    while (ControlMsg *m = p.ctrl.pop_front()) pool_.put(m);
}

void ControlChannel::send(Peer &p, ControlMsg *m) noexcept {
    if (p.state == PeerState::kFailed) return drop(m);
    if (p.ctrl.empty()) {
        const tx::Status s = status_of_bcopy(p.lane.send_bcopy(m->bytes[0], pack_after_id, &m->bytes));
        if (s != tx::kNoResource) {
            drop(m);
            if (s != tx::kOk) dp_.fail_peer(p, transports::fi_errno_of(s));
            return;
        }
    }
    p.ctrl.push_back(m);
    dp_.mark_busy(p);
}

void ControlChannel::send_ack(Peer &p, uint8_t id, uint64_t which, int status) noexcept {
    if (p.state == PeerState::kFailed) return;
    const wire::AckHdr a{p.remote_idx, status, which};
    if (p.ctrl.empty() && sizeof a <= p.lane.max_short()) {
        // One short message (no queue, no allocation): UCT's 8-byte header is the header's
        // first half.
        uint64_t head;
        std::memcpy(&head, &a, sizeof head);
        dp_.note_sent(p);
        const tx::Status s = p.lane.send_short(id, head, &a.id, sizeof a.id);
        if (s == tx::kOk) return;
        if (s != tx::kNoResource) {
            dp_.fail_peer(p, transports::fi_errno_of(s));
            return;
        }
    }
    ControlMsg *m = make(id, sizeof a);
    if (m == nullptr) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: a rendezvous acknowledgement is lost");
        return;
    }
    std::memcpy(m->bytes.data() + 1, &a, sizeof a);
    send(p, m);
}

tx::Status DataPath::send_packed(Peer &p, uint8_t id, tx::PackFn pack, void *arg,
                                 size_t len) noexcept {
    if (len <= kStagedPacked && len <= p.lane.max_short()) {
        uint8_t staged[kStagedPacked];
        pack(staged, arg);
        return send_staged(p, id, staged, len);
    }
    return status_of_bcopy(p.lane.send_bcopy(id, pack, arg));
}

bool ControlChannel::drain(Peer &p) noexcept {
    while (ControlMsg *m = p.ctrl.front()) {
        const tx::Status s =
            status_of_bcopy(p.lane.send_bcopy(m->bytes[0], pack_after_id, &m->bytes));
        if (s == tx::kNoResource) return false;
        if (s != tx::kOk) {
            dp_.fail_peer(p, transports::fi_errno_of(s));  // (returns the queue to the pool)
            return false;
        }
        p.ctrl.pop_front();
        drop(m);
    }
    dp_.refresh_eager_gate(p);
    return true;
}

SendReq *DataPath::answered(const uint8_t *data, size_t length, SendOp op,
                            wire::RmaRespHdr &h) noexcept {
    if (length < sizeof h) {
        ++stats_.dropped_malformed;
        return nullptr;
    }
    std::memcpy(&h, data, sizeof h);
    const uint8_t id = op == SendOp::kRead ? wire::kAmRmaReadResp : wire::kAmAtomicResp;
    if (!from_connected(h.src, id, data, length)) return nullptr;
    SendReq *r = zcopy_.send_by_id(h.id, h.src);
    if (r == nullptr || r->op != op || !r->started) {
        ++stats_.dropped_malformed;
        return nullptr;
    }
    return r;
}

bool ControlChannel::parse_ack(uint8_t id, const uint8_t *data, size_t length, wire::AckHdr &a) noexcept {
    if (length != sizeof a) {
        ++dp_.stats_.dropped_malformed;
        return false;
    }
    std::memcpy(&a, data, sizeof a);
    return dp_.from_connected(a.src, id, data, length);
}

}  // namespace ufi::runtime::proto
