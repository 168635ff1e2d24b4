// fi_passive_ep and the passive endpoint's ops tables (fid_pep): close, bind (an EQ), control
// (FI_BACKLOG), getopt (FI_OPT_CM_DATA_SIZE), and the CM calls setname, getname, listen,
// reject. Everything with state is runtime/ep/passive_endpoint.h.
#include "api/export.h"
#include "api/not_supported.h"
#include "api/objects.h"
#include "base/log/log.h"
#include "runtime/ep/passive_endpoint.h"
#include "runtime/fabric/fabric.h"
#include "runtime/fid_cast.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

namespace ufi::api {

namespace {

using runtime::ep::PassiveEndpoint;
using Subsys = log::Subsys;

PassiveEndpoint *pep_of(fid_t fid) {
    return runtime::object_of<PassiveEndpoint>(fid, FI_CLASS_PEP);
}
PassiveEndpoint *pep_of(fid_pep *pep) {
    return pep_of(pep != nullptr ? &pep->fid : nullptr);
}

int pep_close(fid_t fid) {
    PassiveEndpoint *p = pep_of(fid);
    if (p == nullptr) return -FI_EINVAL;
    return runtime::close_object(p);
}

int pep_bind(fid_t fid, fid_t bfid, uint64_t flags) {
    PassiveEndpoint *p = pep_of(fid);
    if (p == nullptr || bfid == nullptr) return -FI_EINVAL;
    return p->bind(bfid, flags);
}

int pep_control(fid_t fid, int command, void *arg) {
    PassiveEndpoint *p = pep_of(fid);
    if (p == nullptr) return -FI_EINVAL;
    if (command == FI_BACKLOG) {
        if (arg == nullptr) return -FI_EINVAL;
        return p->set_backlog(*static_cast<int *>(arg));
    }
    UFI_LOG_WARN(Subsys::EpCtrl, "fi_control: command {} is not supported on passive endpoints", command);
    return -FI_ENOSYS;
}

int pep_ops_open(fid_t, const char *, uint64_t, void **, void *) {
    return -FI_ENOSYS;
}

fi_ops g_pep_fi_ops = {
    .size = sizeof(fi_ops),
    .close = pep_close,
    .bind = pep_bind,
    .control = pep_control,
    .ops_open = pep_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_pep_fi_ops, FI_CLASS_PEP);

int pep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen) {
    PassiveEndpoint *p = pep_of(fid);
    if (p == nullptr || optlen == nullptr || (optval == nullptr && *optlen != 0)) return -FI_EINVAL;
    return p->getopt(level, optname, optval, optlen);
}

int pep_setopt(fid_t fid, int, int optname, const void *, size_t) {
    if (pep_of(fid) == nullptr) return -FI_EINVAL;
    UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt: option {} cannot be set on a passive endpoint", optname);
    return -FI_ENOPROTOOPT;
}

fi_ops_ep g_pep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = NoOp<decltype(fi_ops_ep::cancel)>::fn,
    .getopt = pep_getopt,
    .setopt = pep_setopt,
    .tx_ctx = NoOp<decltype(fi_ops_ep::tx_ctx)>::fn,
    .rx_ctx = NoOp<decltype(fi_ops_ep::rx_ctx)>::fn,
    .rx_size_left = NoOp<decltype(fi_ops_ep::rx_size_left)>::fn,
    .tx_size_left = NoOp<decltype(fi_ops_ep::tx_size_left)>::fn,
    .export_xpu = NoOp<decltype(fi_ops_ep::export_xpu)>::fn,
};

int pep_setname(fid_t fid, void *addr, size_t addrlen) {
    PassiveEndpoint *p = pep_of(fid);
    if (p == nullptr || addr == nullptr) return -FI_EINVAL;
    return p->setname(addr, addrlen);
}

int pep_getname(fid_t fid, void *addr, size_t *addrlen) {
    PassiveEndpoint *p = pep_of(fid);
    if (p == nullptr || addrlen == nullptr) return -FI_EINVAL;
    return p->getname(addr, addrlen);
}

int pep_listen(fid_pep *pep) {
    PassiveEndpoint *p = pep_of(pep);
    if (p == nullptr) return -FI_EINVAL;
    return guarded([&] { return p->listen(); });
}

int pep_reject(fid_pep *pep, fid_t handle, const void *param, size_t paramlen) {
    PassiveEndpoint *p = pep_of(pep);
    if (p == nullptr) return -FI_EINVAL;
    return guarded([&] { return p->reject(handle, param, paramlen); });
}

fi_ops_cm g_pep_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = pep_setname,
    .getname = pep_getname,
    .getpeer = NoOp<decltype(fi_ops_cm::getpeer)>::fn,
    .connect = NoOp<decltype(fi_ops_cm::connect)>::fn,
    .listen = pep_listen,
    .accept = NoOp<decltype(fi_ops_cm::accept)>::fn,
    .reject = pep_reject,
    .shutdown = NoOp<decltype(fi_ops_cm::shutdown)>::fn,
    .join = NoOp<decltype(fi_ops_cm::join)>::fn,
};

}  // namespace

int passive_ep(fid_fabric *fabric, fi_info *info, fid_pep **pep, void *context) {
    auto *f = runtime::Fabric::from(fabric);
    if (fabric == nullptr || pep == nullptr || !runtime::is_ufi_fi_ops(fabric->fid.ops)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_passive_ep: fabric or pep is NULL, or not ufi's");
        return -FI_EINVAL;
    }
    const runtime::ep::PassiveEndpointOps ops{&g_pep_fi_ops, &g_pep_ops, &g_pep_cm_ops};
    PassiveEndpoint *p = nullptr;
    const int rc = guarded([&] { return PassiveEndpoint::open(f, info, context, ops, &p); });
    if (rc == 0) *pep = p;
    return rc;
}

}  // namespace ufi::api
