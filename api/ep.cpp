// fi_endpoint / fi_endpoint2 and the endpoint's ops tables: control (fi_ops, fi_ops_ep),
// names (fi_ops_cm) and the data-transfer tables, whose operations return -FI_ENOSYS until
// the data path lands (their sizes are set, so libfabric's inline wrappers work). Argument
// checks that only the C ABI can get wrong live here; the rest is runtime/ep/endpoint.h.
#include "api/ep_data.h"
#include "api/export.h"
#include "api/objects.h"
#include "runtime/domain/domain.h"
#include "runtime/ep/alias.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"
#include "runtime/fid_cast.h"
#include "base/log/log.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <mutex>

namespace ufi::api {

namespace {

using runtime::ep::Endpoint;
using Subsys = log::Subsys;

using runtime::ep::EndpointAlias;
using runtime::ep::EndpointFace;

// The endpoint behind a handle: an endpoint's own, or an alias's (fi_ep_alias), whose calls
// other than fi_close and the operation flags act on its endpoint.
Endpoint *ep_of(fid_t fid) {
    EndpointFace *face = runtime::ep::face_of(fid);
    return face != nullptr ? face->endpoint : nullptr;
}
Endpoint *ep_of(fid_ep *ep) {
    return ep_of(ep != nullptr ? &ep->fid : nullptr);
}

// A data-transfer operation of an endpoint without a data path yet: -FI_ENOSYS for any
// signature of the ops tables.
template <typename F>
struct NotYet;
template <typename R, typename... A>
struct NotYet<R (*)(A...)> {
    static R fn(A...) { return -FI_ENOSYS; }
};
#define UFI_NOT_YET(table, member) NotYet<decltype(table::member)>::fn

// ---- fi_ops ------------------------------------------------------------------------------

int ep_close(fid_t fid) {
    Endpoint *ep = ep_of(fid);
    if (ep == nullptr || static_cast<EndpointFace *>(ep) != runtime::ep::face_of(fid)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_close: fid is not an endpoint");
        return -FI_EINVAL;
    }
    return runtime::close_object(ep);
}

int ep_bind(fid_t fid, fid_t bfid, uint64_t flags) {
    Endpoint *ep = ep_of(fid);
    if (ep == nullptr || bfid == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind: {} is NULL",
                     ep == nullptr ? "ep" : "the object to bind");
        return -FI_EINVAL;
    }
    return ep->bind(bfid, flags);
}

int alias_close(fid_t fid) {
    EndpointFace *face = runtime::ep::face_of(fid);
    if (face == nullptr || static_cast<EndpointFace *>(face->endpoint) == face) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_close: fid is not an endpoint alias");
        return -FI_EINVAL;
    }
    return runtime::close_object(static_cast<EndpointAlias *>(face));
}

extern fi_ops g_alias_fi_ops;

// An endpoint's and an alias's: the operation flags are the handle's own, the rest acts on the
// endpoint behind it (an alias of an alias is one more alias of that endpoint).
int ep_control(fid_t fid, int command, void *arg) {
    EndpointFace *face = runtime::ep::face_of(fid);
    Endpoint *ep = face != nullptr ? face->endpoint : nullptr;
    if (ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_control: fid is not an endpoint");
        return -FI_EINVAL;
    }
    switch (command) {
        case FI_ENABLE:
            return guarded([&] { return ep->enable(); });
        case FI_GETOPSFLAG:
        case FI_SETOPSFLAG:
            if (arg == nullptr) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_control({}): arg is NULL",
                             command == FI_GETOPSFLAG ? "FI_GETOPSFLAG" : "FI_SETOPSFLAG");
                return -FI_EINVAL;
            }
            return command == FI_GETOPSFLAG ? face->get_ops_flags(static_cast<uint64_t *>(arg))
                                            : face->set_ops_flags(*static_cast<uint64_t *>(arg));
        case FI_ALIAS: {
            auto *request = static_cast<struct fi_alias *>(arg);
            if (request == nullptr || request->fid == nullptr) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_alias: {} is NULL",
                             request == nullptr ? "the fi_alias argument" : "alias_ep");
                return -FI_EINVAL;
            }
            EndpointAlias *alias = nullptr;
            const int rc = ep->make_alias(request->flags, fid->context, &g_alias_fi_ops, &alias);
            if (rc == 0) *request->fid = &alias->fid;
            return rc;
        }
        default:
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_control: command {} is not supported on endpoints",
                         command);
            return -FI_ENOSYS;
    }
}

int ep_ops_open(fid_t, const char *name, uint64_t, void **, void *) {
    UFI_LOG_INFO(Subsys::EpCtrl, "fi_open_ops(endpoint, {}): ufi has no endpoint extensions",
                 name ? name : "(null)");
    return -FI_ENOSYS;
}

fi_ops g_ep_fi_ops = {
    .size = sizeof(fi_ops),
    .close = ep_close,
    .bind = ep_bind,
    .control = ep_control,
    .ops_open = ep_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_ep_fi_ops, FI_CLASS_EP);

// An alias's: its own close, the endpoint's bind and control.
fi_ops g_alias_fi_ops = {
    .size = sizeof(fi_ops),
    .close = alias_close,
    .bind = ep_bind,
    .control = ep_control,
    .ops_open = ep_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_alias_fi_ops, FI_CLASS_EP);

// ---- fi_ops_ep ---------------------------------------------------------------------------

// fi_cancel: a pending receive with this context completes with FI_ECANCELED; anything else
// (completed already, never posted, a send) reports normally. Always "submitted" (0).
ssize_t ep_cancel(fid_t fid, void *context) {
    Endpoint *ep = ep_of(fid);
    if (ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_cancel: fid is not an endpoint");
        return -FI_EINVAL;
    }
    runtime::proto::DataPath *dp = ep->data_path();
    if (dp == nullptr) return 0;  // nothing can be pending before fi_enable
    std::lock_guard<runtime::OptionalMutex> lock(ep->worker_lock());
    return dp->cancel(context);
}

int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen) {
    Endpoint *ep = ep_of(fid);
    if (ep == nullptr || optlen == nullptr || (optval == nullptr && *optlen != 0)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_getopt: {} is NULL",
                     ep == nullptr       ? "the endpoint"
                     : optlen == nullptr ? "optlen"
                                         : "optval");
        return -FI_EINVAL;
    }
    return ep->getopt(level, optname, optval, optlen);
}

int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen) {
    Endpoint *ep = ep_of(fid);
    if (ep == nullptr || optval == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt: {} is NULL",
                     ep == nullptr ? "the endpoint" : "optval");
        return -FI_EINVAL;
    }
    return ep->setopt(level, optname, optval, optlen);
}

int ep_tx_ctx(fid_ep *, int, fi_tx_attr *, fid_ep **, void *) {
    UFI_LOG_INFO(Subsys::EpCtrl,
                 "fi_tx_context: not a scalable endpoint (open one with fi_scalable_ep)");
    return -FI_ENOSYS;
}

int ep_rx_ctx(fid_ep *, int, fi_rx_attr *, fid_ep **, void *) {
    UFI_LOG_INFO(Subsys::EpCtrl,
                 "fi_rx_context: not a scalable endpoint (open one with fi_scalable_ep)");
    return -FI_ENOSYS;
}

ssize_t ep_rx_size_left(fid_ep *fep) {
    Endpoint *ep = ep_of(fep);
    return ep != nullptr ? ep->rx_size_left() : -FI_EINVAL;
}

ssize_t ep_tx_size_left(fid_ep *fep) {
    Endpoint *ep = ep_of(fep);
    return ep != nullptr ? ep->tx_size_left() : -FI_EINVAL;
}

fi_ops_ep g_ep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = ep_cancel,
    .getopt = ep_getopt,
    .setopt = ep_setopt,
    .tx_ctx = ep_tx_ctx,
    .rx_ctx = ep_rx_ctx,
    .rx_size_left = ep_rx_size_left,
    .tx_size_left = ep_tx_size_left,
    .export_xpu = UFI_NOT_YET(fi_ops_ep, export_xpu),
};

// ---- fi_ops_cm ---------------------------------------------------------------------------

int cm_setname(fid_t fid, void *addr, size_t addrlen) {
    Endpoint *ep = ep_of(fid);
    if (ep == nullptr || addr == nullptr || addrlen == 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_setname: {}",
                     ep == nullptr ? "fid is not an endpoint" : "addr is NULL or addrlen is 0");
        return -FI_EINVAL;
    }
    return ep->setname(addr, addrlen);
}

int cm_getname(fid_t fid, void *addr, size_t *addrlen) {
    Endpoint *ep = ep_of(fid);
    if (ep == nullptr || addrlen == nullptr || (addr == nullptr && *addrlen != 0)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_getname: {}",
                     ep == nullptr        ? "fid is not an endpoint"
                     : addrlen == nullptr ? "addrlen is NULL"
                                          : "addr is NULL");
        return -FI_EINVAL;
    }
    return ep->getname(addr, addrlen);
}

// Connected (FI_EP_MSG) endpoints: runtime/ep/connection.h. On RDM and DGRAM endpoints,
// which have no connection, -FI_EOPNOTSUPP.
int cm_getpeer(fid_ep *fep, void *addr, size_t *addrlen) {
    Endpoint *ep = ep_of(fep);
    if (ep == nullptr || addrlen == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_getpeer: {}", ep == nullptr ? "not an endpoint" : "addrlen is NULL");
        return -FI_EINVAL;
    }
    return ep->getpeer(addr, addrlen);
}

int cm_connect(fid_ep *fep, const void *addr, const void *param, size_t paramlen) {
    Endpoint *ep = ep_of(fep);
    if (ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: not an endpoint");
        return -FI_EINVAL;
    }
    return guarded([&] { return ep->connect(addr, param, paramlen); });  // (addr NULL: the info's)
}

int cm_accept(fid_ep *fep, const void *param, size_t paramlen) {
    Endpoint *ep = ep_of(fep);
    if (ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_accept: not an endpoint");
        return -FI_EINVAL;
    }
    return guarded([&] { return ep->accept(param, paramlen); });
}

int cm_shutdown(fid_ep *fep, uint64_t flags) {
    Endpoint *ep = ep_of(fep);
    if (ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_shutdown: not an endpoint");
        return -FI_EINVAL;
    }
    return ep->shutdown(flags);
}

fi_ops_cm g_ep_cm_ops = {
    .size = sizeof(fi_ops_cm),
    .setname = cm_setname,
    .getname = cm_getname,
    .getpeer = cm_getpeer,
    .connect = cm_connect,
    .listen = UFI_NOT_YET(fi_ops_cm, listen),  // (passive endpoints: api/pep.cpp)
    .accept = cm_accept,
    .reject = UFI_NOT_YET(fi_ops_cm, reject),
    .shutdown = cm_shutdown,
    .join = UFI_NOT_YET(fi_ops_cm, join),
};

// ---- data-transfer tables without a data path yet (fi_msg/fi_tagged/fi_rma: api/ep_data.h) ----

fi_ops_collective g_ep_collective_ops = {
    .size = sizeof(fi_ops_collective),
    .barrier = UFI_NOT_YET(fi_ops_collective, barrier),
    .broadcast = UFI_NOT_YET(fi_ops_collective, broadcast),
    .alltoall = UFI_NOT_YET(fi_ops_collective, alltoall),
    .allreduce = UFI_NOT_YET(fi_ops_collective, allreduce),
    .allgather = UFI_NOT_YET(fi_ops_collective, allgather),
    .reduce_scatter = UFI_NOT_YET(fi_ops_collective, reduce_scatter),
    .reduce = UFI_NOT_YET(fi_ops_collective, reduce),
    .scatter = UFI_NOT_YET(fi_ops_collective, scatter),
    .gather = UFI_NOT_YET(fi_ops_collective, gather),
    .msg = UFI_NOT_YET(fi_ops_collective, msg),
    .barrier2 = UFI_NOT_YET(fi_ops_collective, barrier2),
};

const runtime::ep::EndpointOps g_tables = {
    .fid = &g_ep_fi_ops,
    .ep = &g_ep_ops,
    .cm = &g_ep_cm_ops,
    .locked = {.msg = msg_ops(true), .rma = rma_ops(true), .tagged = tagged_ops(true),
               .atomic = atomic_ops(true)},
    .lock_free = {.msg = msg_ops(false), .rma = rma_ops(false), .tagged = tagged_ops(false),
                  .atomic = atomic_ops(false)},
    .collective = &g_ep_collective_ops,
};

int open(fid_domain *domain, fi_info *info, fid_ep **ep, uint64_t flags, void *context) {
    if (domain == nullptr || domain->fid.fclass != FI_CLASS_DOMAIN || info == nullptr ||
        ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_endpoint: {} is NULL",
                     domain == nullptr || domain->fid.fclass != FI_CLASS_DOMAIN
                         ? "domain (or not a domain)"
                     : info == nullptr ? "info"
                                       : "ep");
        return -FI_EINVAL;
    }
    return guarded([&] {
        Endpoint *e = nullptr;
        const int rc = runtime::ep::open_endpoint(runtime::object_of<runtime::Domain>(domain), info,
                                                  flags, context, g_tables, &e);
        if (rc == 0) *ep = e;
        return rc;
    });
}

}  // namespace

const runtime::ep::EndpointOps &endpoint_tables() {
    return g_tables;
}

int endpoint_control(fid_t fid, int command, void *arg) {
    return ep_control(fid, command, arg);
}

int endpoint(fid_domain *domain, fi_info *info, fid_ep **ep, void *context) {
    return open(domain, info, ep, 0, context);
}

int endpoint2(fid_domain *domain, fi_info *info, fid_ep **ep, uint64_t flags, void *context) {
    return open(domain, info, ep, flags, context);
}

}  // namespace ufi::api
