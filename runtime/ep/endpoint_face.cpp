// An endpoint's or alias's handle: its default operation flags (runtime/ep/endpoint_face.h).
#include "runtime/ep/endpoint_face.h"

#include "base/log/log.h"
#include "runtime/fid_cast.h"

#include <rdma/fi_errno.h>

namespace ufi::runtime::ep {

using log::Subsys;

namespace {

// FI_TRANSMIT or FI_RECV, not both: 0, or -FI_EINVAL (logged for `call`).
int one_direction(uint64_t dir, const char *call) {
    if (dir == FI_TRANSMIT || dir == FI_RECV) return 0;
    UFI_LOG_WARN(Subsys::EpCtrl, "{}: the flags must hold FI_TRANSMIT or FI_RECV, not {}", call,
                 dir == 0 ? "neither" : "both");
    return -FI_EINVAL;
}

}  // namespace

int EndpointFace::get_ops_flags(uint64_t *flags) noexcept {
    const uint64_t dir = *flags & (FI_TRANSMIT | FI_RECV);
    if (const int rc = one_direction(dir, "fi_control(FI_GETOPSFLAG)"); rc != 0) return rc;
    *flags = dir == FI_TRANSMIT ? tx_op_flags() : rx_op_flags();
    return 0;
}

int EndpointFace::set_ops_flags(uint64_t flags) noexcept {
    const uint64_t dir = flags & (FI_TRANSMIT | FI_RECV);
    if (const int rc = one_direction(dir, "fi_control(FI_SETOPSFLAG)"); rc != 0) return rc;
    const uint64_t op = flags & ~dir;
    if (op & ~kOpFlags) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_control(FI_SETOPSFLAG): {:#x} are not operation flags",
                     op & ~kOpFlags);
        return -FI_EBADFLAGS;
    }
    (dir == FI_TRANSMIT ? tx_op_flags_ : rx_op_flags_).store(op, std::memory_order_relaxed);
    return 0;
}

EndpointFace *face_of(fid_t fid) noexcept {
    // (Endpoints and aliases register their fi_ops tables under FI_CLASS_EP; a scalable
    // endpoint's contexts, endpoints too, under FI_CLASS_TX_CTX and FI_CLASS_RX_CTX.)
    if (fid != nullptr && (fid->fclass == FI_CLASS_TX_CTX || fid->fclass == FI_CLASS_RX_CTX)) {
        return object_of<EndpointFace>(fid, fid->fclass);
    }
    return object_of<EndpointFace>(fid, FI_CLASS_EP);
}

}  // namespace ufi::runtime::ep
