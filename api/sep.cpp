// fi_scalable_ep and the ops tables of a scalable endpoint and of its contexts. The scalable
// endpoint itself carries no traffic (its data calls return -FI_ENOSYS, as fi_endpoint(3)
// says it "cannot be used directly for communication"); its contexts are endpoints with the
// endpoint's tables, except their fi_ops: close through the scalable endpoint, no AV of their
// own (the scalable endpoint's), and fi_enable binding that AV first. Everything with state is
// runtime/ep/scalable.h.
#include "api/export.h"
#include "api/not_supported.h"
#include "api/objects.h"
#include "base/log/log.h"
#include "runtime/domain/domain.h"
#include "runtime/ep/endpoint.h"
#include "runtime/ep/endpoint_face.h"
#include "runtime/ep/scalable.h"
#include "runtime/fid_cast.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

namespace ufi::api {

namespace {

using runtime::Domain;
using runtime::ep::Endpoint;
using runtime::ep::ScalableEndpoint;
using Subsys = log::Subsys;

// ---- the scalable endpoint ------------------------------------------------------------------

ScalableEndpoint *sep_of(fid_t fid) { return runtime::ep::scalable_of(fid); }

int sep_close(fid_t fid) {
    ScalableEndpoint *s = sep_of(fid);
    if (s == nullptr) return -FI_EINVAL;
    return runtime::close_object(s);
}

int sep_bind(fid_t fid, fid_t bfid, uint64_t flags) {
    ScalableEndpoint *s = sep_of(fid);
    if (s == nullptr || bfid == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep_bind: {} is NULL",
                     s == nullptr ? "sep" : "the object to bind");
        return -FI_EINVAL;
    }
    return s->bind(bfid, flags);
}

int sep_control(fid_t fid, int command, void *) {
    ScalableEndpoint *s = sep_of(fid);
    if (s == nullptr) return -FI_EINVAL;
    if (command == FI_ENABLE) return s->enable();
    UFI_LOG_WARN(Subsys::EpCtrl,
                 "fi_control: command {} is not supported on scalable endpoints (use it on a context)",
                 command);
    return -FI_ENOSYS;
}

fi_ops g_sep_fi_ops = {
    .size = sizeof(fi_ops),
    .close = sep_close,
    .bind = sep_bind,
    .control = sep_control,
    .ops_open = NoOp<decltype(fi_ops::ops_open)>::fn,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_sep_fi_ops, FI_CLASS_SEP);

int sep_tx_ctx(fid_ep *sep, int index, fi_tx_attr *attr, fid_ep **tx_ep, void *context) {
    ScalableEndpoint *s = sep_of(sep != nullptr ? &sep->fid : nullptr);
    if (s == nullptr || tx_ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_tx_context: {} is NULL", s == nullptr ? "sep" : "tx_ep");
        return -FI_EINVAL;
    }
    return guarded([&] { return s->open_context(false, index, attr, context, tx_ep); });
}

int sep_rx_ctx(fid_ep *sep, int index, fi_rx_attr *attr, fid_ep **rx_ep, void *context) {
    ScalableEndpoint *s = sep_of(sep != nullptr ? &sep->fid : nullptr);
    if (s == nullptr || rx_ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_rx_context: {} is NULL", s == nullptr ? "sep" : "rx_ep");
        return -FI_EINVAL;
    }
    return guarded([&] { return s->open_context(true, index, attr, context, rx_ep); });
}

int sep_getopt(fid_t, int, int, void *, size_t *) { return -FI_ENOPROTOOPT; }
int sep_setopt(fid_t, int, int, const void *, size_t) { return -FI_ENOPROTOOPT; }

fi_ops_ep g_sep_ep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = NoOp<decltype(fi_ops_ep::cancel)>::fn,
    .getopt = sep_getopt,
    .setopt = sep_setopt,
    .tx_ctx = sep_tx_ctx,
    .rx_ctx = sep_rx_ctx,
    .rx_size_left = NoOp<decltype(fi_ops_ep::rx_size_left)>::fn,
    .tx_size_left = NoOp<decltype(fi_ops_ep::tx_size_left)>::fn,
    .export_xpu = NoOp<decltype(fi_ops_ep::export_xpu)>::fn,
};

int sep_getname(fid_t fid, void *addr, size_t *addrlen) {
    ScalableEndpoint *s = sep_of(fid);
    if (s == nullptr || addrlen == nullptr || (addr == nullptr && *addrlen != 0)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_getname(scalable endpoint): {}",
                     s == nullptr ? "not a scalable endpoint" : "addrlen or addr is NULL");
        return -FI_EINVAL;
    }
    return s->getname(addr, addrlen);
}

fi_ops_cm g_sep_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = NoOp<decltype(fi_ops_cm::setname)>::fn,
    .getname = sep_getname,
    .getpeer = NoOp<decltype(fi_ops_cm::getpeer)>::fn,
    .connect = NoOp<decltype(fi_ops_cm::connect)>::fn,
    .listen = NoOp<decltype(fi_ops_cm::listen)>::fn,
    .accept = NoOp<decltype(fi_ops_cm::accept)>::fn,
    .reject = NoOp<decltype(fi_ops_cm::reject)>::fn,
    .shutdown = NoOp<decltype(fi_ops_cm::shutdown)>::fn,
    .join = NoOp<decltype(fi_ops_cm::join)>::fn,
};

// ---- its contexts -----------------------------------------------------------------------------

// The context behind a handle (a context's handle is its endpoint's own, never an alias's).
Endpoint *context_of(fid_t fid) {
    runtime::ep::EndpointFace *face = runtime::ep::face_of(fid);
    if (face == nullptr || static_cast<runtime::ep::EndpointFace *>(face->endpoint) != face ||
        face->endpoint->scalable() == nullptr) {
        return nullptr;
    }
    return face->endpoint;
}

int ctx_close(fid_t fid) {
    Endpoint *ep = context_of(fid);
    if (ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_close: fid is not a context of a scalable endpoint");
        return -FI_EINVAL;
    }
    return ep->scalable()->close_context(ep);
}

int ctx_bind(fid_t fid, fid_t bfid, uint64_t flags) {
    Endpoint *ep = context_of(fid);
    if (ep == nullptr || bfid == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind: {}",
                     ep == nullptr ? "not a context" : "the object to bind is NULL");
        return -FI_EINVAL;
    }
    if (bfid->fclass == FI_CLASS_AV) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_ep_bind(AV) on a context: bind the AV to the scalable endpoint "
                     "(fi_scalable_ep_bind); its contexts take it");
        return -FI_EINVAL;
    }
    return ep->bind(bfid, flags);
}

int ctx_control(fid_t fid, int command, void *arg) {
    Endpoint *ep = context_of(fid);
    if (ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_control: fid is not a context of a scalable endpoint");
        return -FI_EINVAL;
    }
    if (command == FI_ENABLE) return guarded([&] { return ep->scalable()->enable_context(ep); });
    return endpoint_control(fid, command, arg);
}

fi_ops g_tx_ctx_fi_ops = {
    .size = sizeof(fi_ops),
    .close = ctx_close,
    .bind = ctx_bind,
    .control = ctx_control,
    .ops_open = NoOp<decltype(fi_ops::ops_open)>::fn,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_tx_ctx_fi_ops, FI_CLASS_TX_CTX);

fi_ops g_rx_ctx_fi_ops = g_tx_ctx_fi_ops;
UFI_REGISTER_FI_OPS(g_rx_ctx_fi_ops, FI_CLASS_RX_CTX);

Domain *live_domain(fid_domain *domain) {
    return runtime::object_of<Domain>(domain != nullptr ? &domain->fid : nullptr, FI_CLASS_DOMAIN);
}

}  // namespace

int scalable_ep(fid_domain *domain, fi_info *info, fid_ep **sep, void *context) {
    Domain *d = live_domain(domain);
    if (d == nullptr || info == nullptr || sep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep: {} is NULL",
                     d == nullptr ? "domain (or not ufi's)" : info == nullptr ? "info" : "sep");
        return -FI_EINVAL;
    }
    runtime::ep::ScalableOps ops;
    ops.fid = &g_sep_fi_ops;
    ops.ep = &g_sep_ep_ops;
    ops.cm = &g_sep_cm_ops;
    ops.msg = &g_no_msg_ops;
    ops.rma = &g_no_rma_ops;
    ops.tagged = &g_no_tagged_ops;
    ops.atomic = &g_no_atomic_ops;
    ops.context = endpoint_tables();
    ops.tx_context_fid = &g_tx_ctx_fi_ops;
    ops.rx_context_fid = &g_rx_ctx_fi_ops;
    return guarded([&] {
        ScalableEndpoint *s = nullptr;
        const int rc = ScalableEndpoint::open(d, info, context, ops, &s);
        if (rc == 0) *sep = s;
        return rc;
    });
}

}  // namespace ufi::api
