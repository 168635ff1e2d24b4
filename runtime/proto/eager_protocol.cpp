// Eager messages, the sending side of one protocol module (eager_protocol.h).
#include "runtime/proto/eager_protocol.h"

#include "runtime/av/binding.h"
#include "runtime/av/socket_format.h"
#include "runtime/cntr/binding.h"
#include "runtime/cq/cq.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/fast_path.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"
#include "transports/address_name.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

using log::Subsys;

namespace {

// The most iovs a short message takes (header + data buffers); longer lists go by bcopy.
constexpr size_t kMaxShortIov = 8;

struct PackArgs {
    const uint8_t *hdr;
    size_t hdr_len;
    const IovList *iov;
    size_t from;
    size_t len;
};

size_t pack_message(void *dest, void *arg) {
    const auto *a = static_cast<const PackArgs *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, a->hdr, a->hdr_len);
    a->iov->copy_out(a->from, d + a->hdr_len, a->len);
    return a->hdr_len + a->len;
}

}  // namespace

bool EagerProtocol::fits_single(const Peer &p, size_t total, size_t iovcnt,
                           uint32_t wire_flags) noexcept {
    const size_t hdr_len =
        sizeof(wire::EagerHdr) + ((wire_flags & wire::kHasData) ? sizeof(uint64_t) : 0);
    const size_t single = hdr_len + total;
    if (single <= p.lane.max_short() &&
        ((iovcnt <= 1 && single <= kStagedShort) || iovcnt + 1 <= kMaxShortIov)) {
        return true;
    }
    return single <= p.lane.max_bcopy();
}

transports::Status EagerProtocol::send_single(Peer &p, const IovList &iov, uint64_t tag,
                                         uint32_t wire_flags, uint64_t data) noexcept {
    const bool has_data = (wire_flags & wire::kHasData) != 0;
    dp_.note_sent(p);
    uint8_t hdr[sizeof(wire::EagerHdr) + sizeof(uint64_t)];
    const wire::EagerHdr h{tag, p.remote_idx, wire_flags};
    std::memcpy(hdr, &h, sizeof h);
    size_t hdr_len = sizeof h;
    if (has_data) {
        std::memcpy(hdr + hdr_len, &data, sizeof data);
        hdr_len += sizeof data;
    }
    const size_t single = hdr_len + iov.total;
    if (single <= p.lane.max_short() && iov.count <= 1 && single <= kStagedShort) {
        uint8_t staged[kStagedShort];
        const size_t n = stage_eager_short(staged, p.remote_idx, wire_flags, data,
                                           iov.count != 0 ? iov.v[0].base : nullptr, iov.total);
        return p.lane.send_short(wire::kAmEager, tag, staged, static_cast<unsigned>(n));
    }
    if (single <= p.lane.max_short() && iov.count + 1 <= kMaxShortIov) {
        transports::Iov iovs[kMaxShortIov];
        iovs[0] = transports::make_iov(hdr, hdr_len);
        for (size_t i = 0; i < iov.count; ++i) {
            iovs[i + 1] = transports::make_iov(iov.v[i].base, iov.v[i].len);
        }
        return p.lane.send_short(wire::kAmEager, iovs, iov.count + 1);
    }
    // (fits_single: the bcopy size takes it.)
    PackArgs a{hdr, hdr_len, &iov, 0, iov.total};
    return status_of_bcopy(p.lane.send_bcopy(wire::kAmEager, pack_message, &a));
}

transports::Status EagerProtocol::send_zcopy(Peer &p, SendReq &r) noexcept {
    const bool has_data = (r.wire_flags & wire::kHasData) != 0;
    uint8_t hdr[sizeof(wire::EagerHdr) + sizeof(uint64_t)];
    const wire::EagerHdr h{r.tag, p.remote_idx, r.wire_flags};
    std::memcpy(hdr, &h, sizeof h);
    size_t hdr_len = sizeof h;
    if (has_data) {
        std::memcpy(hdr + hdr_len, &r.data, sizeof r.data);
        hdr_len += sizeof r.data;
    }
    transports::Iov iov[kMaxIov];
    size_t n = 0;
    for (size_t i = 0; i < r.iov.count; ++i) {
        if (r.iov.v[i].len != 0) iov[n++] = transports::make_iov(r.iov.v[i].base, r.iov.v[i].len);
    }
    r.comp.uct.func = [](transports::Completion *c) {
        auto *rc = reinterpret_cast<RndvCompletion *>(c);
        auto *sr = static_cast<SendReq *>(rc->req);
        if (c->status != transports::Status::kOk && sr->status == 0) sr->status = transports::fi_errno_of(c->status);
        rc->owner->finish_send_rndv(sr);
    };
    r.comp.uct.count = 1;
    r.comp.uct.status = transports::Status::kOk;
    r.comp.owner = &dp_.zcopy_;
    r.comp.req = &r;
    r.recv_id = 1;  // an operation in flight: a failure of the peer waits for its completion
    const transports::Status s =
        p.lane.send_zcopy(wire::kAmEager, hdr, static_cast<unsigned>(hdr_len), iov, n, &r.comp.uct);
    if (s == transports::kOk || s == transports::kInProgress) {
        ++dp_.stats_.eager_zcopy;
        r.started = true;
        r.offset = r.iov.total;
        if (s == transports::kInProgress) return kHandedOff;  // the completion finishes it
    }
    r.comp.uct.count = 0;
    r.recv_id = 0;
    dp_.zcopy_.release_send_slot(r);
    return s;  // kOk (complete), kNoResource (retried from the queue), or the lane's error
}

transports::Status EagerProtocol::push(Peer &p, SendReq &r, MessageWay way) noexcept {
    const size_t total = r.iov.total;
    if (!r.started) {
        if (way == MessageWay::kSingle) {
            const transports::Status s = send_single(p, r.iov, r.tag, r.wire_flags, r.data);
            if (s == transports::kOk) {
                r.started = true;
                r.offset = total;
            }
            return s;
        }
        // One zero-copy message where the lane sends from our buffers (tcp, RDMA).
        if (way == MessageWay::kZeroCopy) return send_zcopy(p, r);
        // Fragments: the first carries the headers and as much as fits.
        const bool has_data = (r.wire_flags & wire::kHasData) != 0;
        uint8_t hdr[sizeof(wire::EagerHdr) + sizeof(wire::FirstHdr) + sizeof(uint64_t)];
        const wire::EagerHdr h{r.tag, p.remote_idx, r.wire_flags};
        const uint64_t msg_id = p.next_msg_id;
        const wire::FirstHdr f{total, msg_id};
        std::memcpy(hdr, &h, sizeof h);
        std::memcpy(hdr + sizeof h, &f, sizeof f);
        size_t hdr_len = sizeof h + sizeof f;
        if (has_data) {
            std::memcpy(hdr + hdr_len, &r.data, sizeof r.data);
            hdr_len += sizeof r.data;
        }
        if (p.lane.max_bcopy() <= hdr_len) return transports::Status::kUnsupported;
        const size_t chunk = std::min(total, p.lane.max_bcopy() - hdr_len);
        PackArgs a{hdr, hdr_len, &r.iov, 0, chunk};
        const transports::Status first =
            status_of_bcopy(p.lane.send_bcopy(wire::kAmEagerFirst, pack_message, &a));
        if (first != transports::kOk) return first;
        ++p.next_msg_id;
        r.msg_id = msg_id;
        r.started = true;
        r.offset = chunk;
    }
    while (r.offset < total) {
        wire::MiddleHdr m{p.remote_idx, 0, r.msg_id, r.offset};
        const size_t chunk = std::min(total - r.offset, p.lane.max_bcopy() - sizeof m);
        PackArgs a{reinterpret_cast<const uint8_t *>(&m), sizeof m, &r.iov, r.offset, chunk};
        const transports::Status s =
            status_of_bcopy(p.lane.send_bcopy(wire::kAmEagerMiddle, pack_message, &a));
        if (s != transports::kOk) return s;
        r.offset += chunk;
    }
    return transports::kOk;
}

}  // namespace ufi::runtime::proto
