// Rendezvous SPLIT, both sides (rndv_split.h).
#include "runtime/proto/rndv_split.h"

#include "runtime/proto/data_path.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <vector>

namespace ufi::runtime::proto {

namespace tx = transports;

bool RndvSplit::offer(const tx::OpenIface &zcopy) noexcept {
    // The receiver may have us write part where we can write over that transport.
    return zcopy.copies_on_cpu && dp_.zcopy_.rma_iface(zcopy.code, tx::RmaKind::kPut) != nullptr &&
           tx::zcopy_permitted(zcopy);
}

bool RndvSplit::start(Peer &p, RecvReq *r, const RtsInfo &info) noexcept {
    if (dp_.cfg_.rndv_split == 0 || r->length < dp_.cfg_.rndv_split ||
        !(info.flags & wire::kRtsSenderPuts)) {
        return false;
    }
    // Both halves over one transport: the sender writes with the interface we read with, one
    // whose copies the CPU makes.
    const tx::OpenIface *oi = dp_.zcopy_.zcopy_iface(p, info.transport, tx::RmaKind::kPut);
    if (oi == nullptr || oi != &p.rma.iface() || !oi->copies_on_cpu) return false;
    // On a page boundary: no page is pinned by both copies.
    const size_t split = (r->length / 2) & ~size_t{4095};
    if (split == 0) return false;
    std::vector<tx::LocalRegion> regions;
    ControlMsg *m = dp_.ctrl_.make(wire::kAmRtr, 0);
    if (m == nullptr ||
        !dp_.zcopy_.build_rtr_put(p, *oi, r->iov, r->length, regions, r->send_id, r->rndv_slot,
                           m->bytes, split)) {
        dp_.ctrl_.drop(m);
        return false;  // (the GET's own registrations stay)
    }
    r->regions.swap(regions);  // the same interface's: they serve our gets too
    r->rndv_protocol = wire::kRndvSplit;
    r->get_end = split;
    ++dp_.stats_.rndv_split;
    // RTR first: the sender copies its part while we copy ours.
    const uint32_t slot = r->rndv_slot;
    dp_.ctrl_.send(p, m);
    if (!dp_.zcopy_.holds(slot, r)) return true;  // sending failed the peer, which finished it
    dp_.zcopy_.issue_gets(r);
    return true;
}

bool RndvSplit::take_rtr(Peer &p, SendReq &r, const wire::RtrHdr &h, uint64_t sum) noexcept {
    // Ours from the split point on; the receiver reads the rest through the registrations RTS
    // named, which stay.
    r.put_base = h.length - sum;
    if (r.put_base != 0 && sum != 0 && h.transport == dp_.worker_->ifaces()[p.rma_iface]->code) {
        return true;
    }
    // Not an answer to what we offered: dropped, and the send waits on. Its receive, if there
    // is one, fails rather than wait for our half forever.
    dp_.ctrl_.send_ack(p, wire::kAmAtp, h.recv_id, -FI_EIO);
    if (dp_.zcopy_.send_by_id(h.send_id, h.src) != &r) return false;  // the ack failed the peer
    r.recv_id = 0;
    r.length = 0;
    r.rndv_protocol = wire::kRndvGet;
    r.put_base = 0;
    r.remote.clear();
    ++dp_.stats_.dropped_malformed;
    return false;
}

void RndvSplit::cannot_put(SendReq &r) noexcept {
    // The receiver may still be reading our buffers: ATS ends it (puts_done).
    r.rndv_protocol = wire::kRndvSplit;
    r.offset = r.length;
    r.comp.uct.count = 0;
    dp_.zcopy_.puts_done(&r);
}

void RndvSplit::on_ats(SendReq &r, int status) noexcept {
    r.split_acked = true;
    if (status != 0 && r.status == 0) r.status = status;
    if (r.split_copied) dp_.zcopy_.finish_send_rndv(&r);  // else its puts finish it
}

void RndvSplit::on_atp(RecvReq &r, int status) noexcept {
    if (status != 0 && r.status == 0) r.status = status;
    r.split_acked = true;
    if (!r.split_copied) return;  // our gets finish it
    if (r.status == 0) r.received = r.length;
    dp_.rndv_.finish_recv(&r);
}

bool RndvSplit::gets_done(const Peer &p, RecvReq &r) noexcept {
    r.split_copied = true;
    // The sender's puts may still be landing in the buffer: it is the application's again
    // with ATP (or with the sender's failure).
    if (!r.split_acked && p.state != PeerState::kFailed) return false;
    if (r.status == 0) r.received = r.length;
    return true;
}

bool RndvSplit::puts_done(const Peer &p, SendReq &r) noexcept {
    r.split_copied = true;
    // The receiver may still be reading our buffers: its ATS (or its failure) ends it.
    return r.split_acked || p.state == PeerState::kFailed;
}

}  // namespace ufi::runtime::proto
