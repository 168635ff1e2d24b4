// fi_stx_context and fi_srx_context (fi_endpoint(3), "Shared Contexts") and their ops tables.
// A shared receive context takes fi_recv*/fi_trecv* and fi_cancel; its other calls (sends,
// RMA, atomics, CM) return -FI_ENOSYS as libfabric's fi_no_* do. Everything with state is
// runtime/ep/shared_rx.h and shared_tx.h.
#include "api/ep_data.h"
#include "api/not_supported.h"
#include "api/objects.h"
#include "base/log/log.h"
#include "runtime/domain/domain.h"
#include "runtime/ep/shared_rx.h"
#include "runtime/ep/shared_tx.h"
#include "runtime/fid_cast.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <type_traits>

namespace ufi::api {

namespace {

using runtime::Domain;
using runtime::ep::SharedRx;
using runtime::ep::SharedTx;
using runtime::proto::IovList;
using Subsys = log::Subsys;

// ---- the shared receive context ------------------------------------------------------------

SharedRx *srx_of(fid_ep *ep) { return runtime::ep::shared_rx_of(ep != nullptr ? &ep->fid : nullptr); }

// A shared context's fid calls (both kinds): close, bind (nothing binds to a context: bind it
// to endpoints), control (FI_ENABLE only: usable from the start).
template <typename Context, Context *(*Of)(fid_t) noexcept>
struct ContextFid {
    static const char *what() {
        return std::is_same_v<Context, SharedRx> ? "shared receive context" : "shared transmit context";
    }
    static int close(fid_t fid) {
        Context *c = Of(fid);
        if (c == nullptr) return -FI_EINVAL;
        return runtime::close_object(c);
    }
    static int bind(fid_t fid, fid_t, uint64_t) {
        if (Of(fid) == nullptr) return -FI_EINVAL;
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_ep_bind on a {}: nothing binds to it (bind the context to endpoints, "
                     "and CQs to those endpoints)",
                     what());
        return -FI_EINVAL;
    }
    static int control(fid_t fid, int command, void *) {
        if (Of(fid) == nullptr) return -FI_EINVAL;
        return command == FI_ENABLE ? 0 : -FI_ENOSYS;
    }
};
using RxFid = ContextFid<SharedRx, runtime::ep::shared_rx_of>;
using TxFid = ContextFid<SharedTx, runtime::ep::shared_tx_of>;

fi_ops g_srx_fi_ops = {
    .size = sizeof(fi_ops),
    .close = RxFid::close,
    .bind = RxFid::bind,
    .control = RxFid::control,
    .ops_open = NoOp<decltype(fi_ops::ops_open)>::fn,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_srx_fi_ops, FI_CLASS_SRX_CTX);

ssize_t srx_cancel(fid_t fid, void *context) {
    SharedRx *s = runtime::ep::shared_rx_of(fid);
    if (s == nullptr) return -FI_EINVAL;
    return s->cancel(context);
}

int srx_getopt(fid_t, int, int, void *, size_t *) { return -FI_ENOPROTOOPT; }
int srx_setopt(fid_t, int, int, const void *, size_t) { return -FI_ENOPROTOOPT; }

fi_ops_ep g_srx_ep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = srx_cancel,
    .getopt = srx_getopt,
    .setopt = srx_setopt,
    .tx_ctx = NoOp<decltype(fi_ops_ep::tx_ctx)>::fn,
    .rx_ctx = NoOp<decltype(fi_ops_ep::rx_ctx)>::fn,
    .rx_size_left = NoOp<decltype(fi_ops_ep::rx_size_left)>::fn,
    .tx_size_left = NoOp<decltype(fi_ops_ep::tx_size_left)>::fn,
    .export_xpu = NoOp<decltype(fi_ops_ep::export_xpu)>::fn,
};

// Flags a receive on the context takes: no FI_MULTI_RECV, FI_PEEK or FI_CLAIM (a multi-receive
// buffer or a claim belongs to one endpoint's matching; not offered here yet).
constexpr uint64_t kSrxRecvFlags = FI_COMPLETION | FI_MORE;

ssize_t srx_post(fid_ep *ep, const iovec *iov, size_t count, fi_addr_t src, void *context,
                 uint64_t flags, uint64_t tag, uint64_t ignore, bool tagged, bool given_flags) {
    SharedRx *s = srx_of(ep);
    if (s == nullptr) return -FI_EINVAL;
    if (given_flags && (flags & ~kSrxRecvFlags)) {
        UFI_LOG_INFO(Subsys::EpData,
                     "receive on a shared receive context: flags {:#x} are not offered there "
                     "(FI_MULTI_RECV, FI_PEEK and FI_CLAIM need an endpoint's own receives)",
                     flags & ~kSrxRecvFlags);
        return -FI_EBADFLAGS;
    }
    IovList list;
    if (const int rc = iov_list(s->iov_limit(), iov, count, list); rc != 0) return rc;
    return s->post(list, src, context, given_flags ? flags : s->op_flags(), tag, ignore, tagged);
}

ssize_t srx_recv(fid_ep *ep, void *buf, size_t len, void *, fi_addr_t src, void *context) {
    if (buf == nullptr && len != 0) return -FI_EINVAL;
    const iovec one{buf, len};
    return srx_post(ep, &one, len != 0 ? 1 : 0, src, context, 0, 0, 0, false, false);
}
ssize_t srx_recvv(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t src,
                  void *context) {
    return srx_post(ep, iov, count, src, context, 0, 0, 0, false, false);
}
ssize_t srx_recvmsg(fid_ep *ep, const fi_msg *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    return srx_post(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->context, flags, 0, 0,
                    false, true);
}
ssize_t srx_trecv(fid_ep *ep, void *buf, size_t len, void *, fi_addr_t src, uint64_t tag,
                  uint64_t ignore, void *context) {
    if (buf == nullptr && len != 0) return -FI_EINVAL;
    const iovec one{buf, len};
    return srx_post(ep, &one, len != 0 ? 1 : 0, src, context, 0, tag, ignore, true, false);
}
ssize_t srx_trecvv(fid_ep *ep, const iovec *iov, void **, size_t count, fi_addr_t src,
                   uint64_t tag, uint64_t ignore, void *context) {
    return srx_post(ep, iov, count, src, context, 0, tag, ignore, true, false);
}
ssize_t srx_trecvmsg(fid_ep *ep, const fi_msg_tagged *msg, uint64_t flags) {
    if (msg == nullptr) return -FI_EINVAL;
    return srx_post(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->context, flags, msg->tag,
                    msg->ignore, true, true);
}

fi_ops_msg g_srx_msg_ops = {
    .size = sizeof(fi_ops_msg),
    .recv = srx_recv,
    .recvv = srx_recvv,
    .recvmsg = srx_recvmsg,
    .send = NoOp<decltype(fi_ops_msg::send)>::fn,
    .sendv = NoOp<decltype(fi_ops_msg::sendv)>::fn,
    .sendmsg = NoOp<decltype(fi_ops_msg::sendmsg)>::fn,
    .inject = NoOp<decltype(fi_ops_msg::inject)>::fn,
    .senddata = NoOp<decltype(fi_ops_msg::senddata)>::fn,
    .injectdata = NoOp<decltype(fi_ops_msg::injectdata)>::fn,
};

fi_ops_tagged g_srx_tagged_ops = {
    .size = sizeof(fi_ops_tagged),
    .recv = srx_trecv,
    .recvv = srx_trecvv,
    .recvmsg = srx_trecvmsg,
    .send = NoOp<decltype(fi_ops_tagged::send)>::fn,
    .sendv = NoOp<decltype(fi_ops_tagged::sendv)>::fn,
    .sendmsg = NoOp<decltype(fi_ops_tagged::sendmsg)>::fn,
    .inject = NoOp<decltype(fi_ops_tagged::inject)>::fn,
    .senddata = NoOp<decltype(fi_ops_tagged::senddata)>::fn,
    .injectdata = NoOp<decltype(fi_ops_tagged::injectdata)>::fn,
};

// ---- the shared transmit context -----------------------------------------------------------

fi_ops g_stx_fi_ops = {
    .size = sizeof(fi_ops),
    .close = TxFid::close,
    .bind = TxFid::bind,
    .control = TxFid::control,
    .ops_open = NoOp<decltype(fi_ops::ops_open)>::fn,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_stx_fi_ops, FI_CLASS_STX_CTX);

fi_ops_ep g_stx_ep_ops = {
    .size = sizeof(fi_ops_ep),
    .cancel = NoOp<decltype(fi_ops_ep::cancel)>::fn,
    .getopt = srx_getopt,
    .setopt = srx_setopt,
    .tx_ctx = NoOp<decltype(fi_ops_ep::tx_ctx)>::fn,
    .rx_ctx = NoOp<decltype(fi_ops_ep::rx_ctx)>::fn,
    .rx_size_left = NoOp<decltype(fi_ops_ep::rx_size_left)>::fn,
    .tx_size_left = NoOp<decltype(fi_ops_ep::tx_size_left)>::fn,
    .export_xpu = NoOp<decltype(fi_ops_ep::export_xpu)>::fn,
};

Domain *live_domain(fid_domain *domain) {
    return runtime::object_of<Domain>(domain != nullptr ? &domain->fid : nullptr, FI_CLASS_DOMAIN);
}

}  // namespace

int stx_context(fid_domain *domain, fi_tx_attr *attr, fid_stx **stx, void *context) {
    Domain *d = live_domain(domain);
    if (d == nullptr || stx == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_stx_context: domain or stx is NULL, or not ufi's");
        return -FI_EINVAL;
    }
    SharedTx *s = nullptr;
    if (const int rc = SharedTx::open(d, attr, context, &g_stx_fi_ops, &g_stx_ep_ops, &s); rc != 0) {
        return rc;
    }
    *stx = s;
    return 0;
}

int srx_context(fid_domain *domain, fi_rx_attr *attr, fid_ep **rx_ep, void *context) {
    Domain *d = live_domain(domain);
    if (d == nullptr || rx_ep == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_srx_context: domain or rx_ep is NULL, or not ufi's");
        return -FI_EINVAL;
    }
    runtime::ep::SharedRxOps ops;
    ops.fid = &g_srx_fi_ops;
    ops.ep = &g_srx_ep_ops;
    ops.msg = &g_srx_msg_ops;
    ops.tagged = &g_srx_tagged_ops;
    ops.rma = &g_no_rma_ops;
    ops.atomic = &g_no_atomic_ops;
    ops.cm = &g_no_cm_ops;
    SharedRx *s = nullptr;
    if (const int rc = SharedRx::open(d, attr, context, ops, &s); rc != 0) return rc;
    *rx_ep = s;
    return 0;
}

}  // namespace ufi::api
