// Rendezvous PUT, both sides (rndv_put.h).
#include "runtime/proto/rndv_put.h"

#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/rndv_split.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <cstring>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;
namespace tx = transports;

bool RndvPut::start(Peer &p, RecvReq *r, const RtsInfo &info) noexcept {
    // Only registration happens here: the sender connects and writes.
    const tx::OpenIface *oi = dp_.zcopy_.zcopy_iface(p, info.transport, tx::RmaKind::kPut);
    ControlMsg *m = oi != nullptr ? dp_.ctrl_.make(wire::kAmRtr, 0) : nullptr;
    if (m == nullptr ||
        !dp_.zcopy_.build_rtr_put(p, *oi, r->iov, r->length, r->regions, r->send_id, r->rndv_slot,
                           m->bytes)) {
        dp_.ctrl_.drop(m);
        return false;
    }
    r->rndv_protocol = wire::kRndvPut;
    ++dp_.stats_.rndv_put;
    dp_.ctrl_.send(p, m);
    return true;
}

void RndvPut::on_rtr(Peer &p, SendReq &r, const wire::RtrHdr &h, const uint8_t *data,
                     size_t length) noexcept {
    const bool split = h.protocol == wire::kRndvSplit;
    const bool write = r.op == SendOp::kWrite;
    bool ok = false;
    try {
        const uint8_t *at = data + sizeof h;
        r.remote.resize(h.segments);
        std::memcpy(r.remote.data(), at, h.segments * sizeof(wire::Segment));
        at += h.segments * sizeof(wire::Segment);
        RtsInfo keys;
        keys.segments = r.remote;
        keys.rkey_len = h.rkey_len;
        keys.rkeys.assign(at, data + length);
        uint64_t sum = 0;
        bool sane = true;
        for (const auto &s : r.remote) {
            sane = sane && s.len != 0 && s.len <= h.length - sum;
            if (sane) sum += s.len;
        }
        if (split) {
            // (Segments that do not add up name nothing to write: refused like a mismatch.)
            if (!dp_.rndv_.split().take_rtr(p, r, h, sane ? sum : 0)) return;
        } else {
            r.regions.clear();
            sane = sane && sum == h.length;
        }
        ok = sane && dp_.zcopy_.open_rma(p, h.transport, tx::RmaKind::kPut) &&
             dp_.zcopy_.unpack_keys(p, keys, r.keys) &&
             (!p.rma.iface().md_needs_memh || !r.regions.empty() ||
              dp_.zcopy_.register_buffers(p.rma.iface(), r.iov, r.length, r.regions));
    } catch (const std::bad_alloc &) {
        ok = false;
    }
    if (!ok) {
        UFI_LOG_INFO(Subsys::EpData, "{} to {}: cannot write the {}'s buffers",
                     write ? "RMA write" : "rendezvous", tx::address::describe(p.address),
                     write ? "target" : "receiver");
        r.status = -FI_EIO;
        if (split) {
            dp_.rndv_.split().cannot_put(r);
            return;
        }
        const uint32_t slot = r.rndv_slot;
        dp_.ctrl_.send_ack(p, write ? wire::kAmRmaWriteDone : wire::kAmAtp, r.recv_id, r.status);
        if (dp_.zcopy_.holds(slot, &r)) dp_.zcopy_.finish_send_rndv(&r);  // (else the ack failed the peer)
        return;
    }
    r.offset = r.put_base;
    r.comp.uct.count = 0;
    r.comp.uct.status = transports::Status::kOk;
    r.comp.owner = &dp_.zcopy_;
    r.comp.req = &r;
    dp_.zcopy_.issue_puts(&r);
}

void RndvPut::on_atp(RecvReq &r, int status) noexcept {
    if (status != 0 && r.status == 0) r.status = status;
    if (r.status == 0) r.received = r.length;
    dp_.rndv_.finish_recv(&r);
}

}  // namespace ufi::runtime::proto
