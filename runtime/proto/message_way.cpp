// A message's way (wire.h): decided from its size, its flags and the peer's lane and
// rendezvous choice before anything is sent (way_of: rendezvous, rndv_protocol.h, or one of the
// eager ways, eager_protocol.h), and push_message(), which the scheduler calls for a message
// and which hands it to that protocol.
#include "runtime/proto/data_path.h"
#include "runtime/proto/eager_protocol.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

namespace ufi::runtime::proto {


bool DataPath::rts_fits(const Peer &p, const SendReq &r) const noexcept {
    size_t n = sizeof(wire::EagerHdr) + ((r.wire_flags & wire::kHasData) ? sizeof(uint64_t) : 0) +
               sizeof(wire::RtsHdr);
    // GET names each buffer and its key (start_rndv_send); AM and PUT name none. (A GET whose
    // buffers do not register goes as AM: smaller still.)
    if (p.rndv_protocol == wire::kRndvGet && r.iov.total != 0) {
        const size_t key = worker_->ifaces()[p.rma_iface]->rkey_packed_size;
        for (size_t i = 0; i < r.iov.count; ++i) {
            if (r.iov.v[i].len != 0) n += sizeof(wire::Segment) + key;
        }
    }
    return n <= p.lane.max_bcopy();
}

MessageWay DataPath::way_of(const Peer &p, const SendReq &r) const noexcept {
    const size_t total = r.iov.total;
    // (An injected message goes eager at any size: its sender need not progress for it.
    // Confirmation asked for wins: its completion is awaited, so its sender progresses.)
    if (((total > p.rndv_thresh && !r.injected) || r.confirm) && rts_fits(p, r)) {
        return MessageWay::kRendezvous;
    }
    if (eager_.fits_single(p, total, r.iov.count, r.wire_flags)) return MessageWay::kSingle;
    const size_t hdr_len =
        sizeof(wire::EagerHdr) + ((r.wire_flags & wire::kHasData) ? sizeof(uint64_t) : 0);
    size_t buffers = 0;
    for (size_t i = 0; i < r.iov.count; ++i) buffers += r.iov.v[i].len != 0;
    if (p.lane.fits_zcopy(hdr_len, total, buffers)) return MessageWay::kZeroCopy;
    return MessageWay::kFragments;
}

transports::Status DataPath::push_message(Peer &p, SendReq &r) noexcept {
    MessageWay way = MessageWay::kFragments;
    if (!r.started) {
        way = way_of(p, r);
        // (A zero-copy message is in a send slot while in flight, where a failed peer's
        // transfers are found; without one it goes as fragments.)
        if (way == MessageWay::kZeroCopy && r.rndv_slot == 0 && !zcopy_.take_send_slot(r)) {
            way = MessageWay::kFragments;
        }
    }
    if (!r.started && way == MessageWay::kRendezvous) {
        r.announcing = true;
        const transports::Status s = rndv_.start_send(p, r);
        r.announcing = false;
        if (s != transports::kOk) return s;  // kNoResource keeps the slot for the retry
        r.started = true;
        if (r.done) return transports::kOk;  // over self, all of it ran inside the call
        if (!r.streaming) return kHandedOff;
        // AM protocol over self: RTR came back inside the call; the data goes now.
    }
    if (r.streaming) return rndv_.push_data(p, r);
    return eager_.push(p, r, way);
}


}  // namespace ufi::runtime::proto
