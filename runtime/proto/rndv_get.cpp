// Rendezvous GET, the receiver's side (rndv_get.h).
#include "runtime/proto/rndv_get.h"

#include "runtime/proto/data_path.h"
#include "runtime/proto/rndv_split.h"
#include "runtime/proto/wire.h"

namespace ufi::runtime::proto {

namespace tx = transports;

bool RndvGet::start(Peer &p, RecvReq *r, RtsInfo &info) noexcept {
    if (info.protocol != wire::kRndvGet || !dp_.zcopy_.open_rma(p, info.transport, tx::RmaKind::kGet) ||
        !dp_.zcopy_.unpack_keys(p, info, r->keys) ||
        (p.rma.iface().md_needs_memh &&
         !dp_.zcopy_.register_buffers(p.rma.iface(), r->iov, r->length, r->regions))) {
        return false;
    }
    r->rndv_protocol = wire::kRndvGet;
    r->segments.swap(info.segments);  // (the record's old capacity becomes the scratch's)
    ++dp_.stats_.rndv_get;
    if (!dp_.rndv_.split().start(p, r, info)) dp_.zcopy_.issue_gets(r);
    return true;
}

}  // namespace ufi::runtime::proto
