// Rendezvous AM, both sides (rndv_am.h).
#include "runtime/proto/rndv_am.h"

#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

namespace ufi::runtime::proto {

namespace tx = transports;

void RndvAm::start(Peer &p, RecvReq *r) noexcept {
    r->rndv_protocol = wire::kRndvAm;
    ++dp_.stats_.rndv_am;
    wire::RtrHdr h{};
    h.src = p.remote_idx;
    h.protocol = wire::kRndvAm;
    h.send_id = r->send_id;
    h.recv_id = r->rndv_slot;
    h.length = r->length;
    if (ControlMsg *m = dp_.ctrl_.make(wire::kAmRtr, sizeof h)) {
        std::memcpy(m->bytes.data() + 1, &h, sizeof h);
        dp_.ctrl_.send(p, m);
    } else {
        r->status = -FI_ENOMEM;
        const uint32_t slot = r->rndv_slot;
        dp_.ctrl_.send_ack(p, wire::kAmAts, r->send_id, r->status);
        if (dp_.zcopy_.holds(slot, r)) dp_.rndv_.finish_recv(r);  // (else the ack failed the peer)
    }
}

void RndvAm::on_rtr(Peer &p, SendReq &r) noexcept {
    r.streaming = true;
    r.offset = 0;
    if (r.announcing) return;  // still at the queue's front: the RTS call goes on with it
    p.queue.push_back(&r);
    dp_.mark_busy(p);
}

tx::Status RndvAm::push_data(Peer &p, SendReq &r) noexcept {
    struct Args {
        wire::DataHdr h;
        const IovList *iov;
        size_t len;
    };
    const size_t chunk = p.lane.max_bcopy() - sizeof(wire::DataHdr);
    while (r.offset < r.length) {
        Args a{{p.remote_idx, 0, r.recv_id, r.offset}, &r.iov, std::min(r.length - r.offset, chunk)};
        const ssize_t rc = p.lane.send_bcopy(
            wire::kAmRndvData,
            [](void *dest, void *arg) -> size_t {
                const auto *x = static_cast<const Args *>(arg);
                std::memcpy(dest, &x->h, sizeof x->h);
                x->iov->copy_out(x->h.offset, static_cast<uint8_t *>(dest) + sizeof x->h, x->len);
                return sizeof x->h + x->len;
            },
            &a);
        if (rc < 0) return static_cast<tx::Status>(rc);
        r.offset += a.len;
    }
    return tx::kOk;
}

void RndvAm::handle_data(const uint8_t *data, size_t length) noexcept {
    wire::DataHdr h;
    if (length < sizeof h) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    std::memcpy(&h, data, sizeof h);
    if (!dp_.from_connected(h.src, wire::kAmRndvData, data, length)) return;
    RecvReq *r = dp_.zcopy_.recv_by_id(h.recv_id, h.src);
    const size_t len = length - sizeof h;
    if (r == nullptr || r->rndv_protocol != wire::kRndvAm || h.offset != r->received || len == 0 ||
        len > r->length - r->received) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    r->iov.copy_in(h.offset, data + sizeof h, len);
    r->received += len;
    if (r->received == r->length) dp_.rndv_.finish_recv(r);
}

}  // namespace ufi::runtime::proto
