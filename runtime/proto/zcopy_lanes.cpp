// The zero-copy lanes (get and put over a transport that reaches the peer's memory: cma, tcp,
// InfiniBand): opened on first use per transport and kind, reached per peer, and the
// registration of a message's buffers on them.
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

tx::OpenIface *ZcopyTransfers::rma_iface(tx::TransportCode transport, tx::RmaKind kind) noexcept {
    for (const auto &oi : dp_.worker_->ifaces()) {
        const bool can = kind == tx::RmaKind::kGet ? oi->caps.get_zcopy : oi->caps.put_zcopy;
        if (oi->code == transport && can && oi->md_can_register) {
            return oi.get();
        }
    }
    return nullptr;
}

const tx::OpenIface *ZcopyTransfers::zcopy_iface(const Peer &p, tx::TransportCode transport,
                                           tx::RmaKind kind) noexcept {
    if (tx::lane_serves_rma(p.lane, kind) && p.lane.iface().code == transport) {
        return &p.lane.iface();
    }
    return rma_iface(transport, kind);
}

bool ZcopyTransfers::open_rma(Peer &p, tx::TransportCode transport, tx::RmaKind kind) noexcept {
    if (transport == tx::kNoTransport) return false;
    if (p.rma.connected() && p.rma.iface().code == transport) return true;
    if (tx::lane_serves_rma(p.lane, kind) && p.lane.iface().code == transport) {
        // The AM lane's own endpoint: rc's only way, and on tcp one connection fewer (and
        // faster: the puts and the messages around them share one stream).
        tx::RmaLane::share(p.lane, p.rma);
        return true;
    }
    tx::OpenIface *oi = rma_iface(transport, kind);
    if (oi == nullptr || !tx::zcopy_permitted(*oi)) return false;
    for (const auto &rec : p.address.records) {
        if (!tx::is_transport(rec, transport)) continue;
        dp_.worker_->activate(*oi);  // its completions come from its progress
        const tx::Status s = tx::RmaLane::connect(*oi, rec, p.rma);
        if (s == transports::Status::kOk) return true;
        UFI_LOG_INFO(Subsys::EpData, "peer {}: cannot connect {} for rendezvous: {}",
                     tx::address::describe(p.address), oi->resource->label(), tx::to_string(s));
    }
    return false;
}

bool ZcopyTransfers::register_buffers(const tx::OpenIface &iface, const IovList &iov, size_t length,
                                std::vector<tx::LocalRegion> &out) noexcept {
    try {
        out.clear();
        out.resize(iov.count);
        size_t covered = 0;
        for (size_t i = 0; i < iov.count && covered < length; ++i) {
            const size_t len = std::min(iov.v[i].len, length - covered);
            if (len == 0) continue;
            const tx::Status s = tx::LocalRegion::create(iface, iov.v[i].base, len, out[i]);
            if (s != transports::Status::kOk) {
                UFI_LOG_INFO(Subsys::EpData, "rendezvous: cannot register {} bytes on {}: {}", len,
                             iface.resource->label(), tx::to_string(s));
                out.clear();
                return false;
            }
            covered += len;
        }
        return true;
    } catch (const std::bad_alloc &) {
        out.clear();
        return false;
    }
}

}  // namespace ufi::runtime::proto
