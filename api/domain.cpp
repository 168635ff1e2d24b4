// fi_domain / fi_domain2 and the domain's ops tables.
#include "api/ep_data.h"
#include "api/export.h"
#include "api/objects.h"
#include "runtime/domain/domain.h"
#include "runtime/eq/binding.h"
#include "runtime/fid_cast.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::api {

namespace {

using runtime::Domain;

Domain *domain_of(fid_t fid) { return runtime::object_of<Domain>(fid, FI_CLASS_DOMAIN); }

int domain_close(fid_t fid) { return runtime::close_domain(domain_of(fid)); }

// fi_domain_bind: an EQ for (deprecated) asynchronous registration events.
int domain_bind(fid_t fid, fid_t bfid, uint64_t flags) {
    Domain *d = domain_of(fid);
    runtime::eq::Eq *eq = runtime::eq::eq_of(bfid);
    if (eq == nullptr) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain_bind: only a ufi EQ can be bound to a domain");
        return -FI_EINVAL;
    }
    if (flags & ~static_cast<uint64_t>(FI_REG_MR)) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain_bind: flags {:#x} are not defined", flags);
        return -FI_EBADFLAGS;
    }
    std::lock_guard<std::mutex> lock(d->mutex);
    if (d->bound_eq != nullptr) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain_bind: an EQ is already bound to this domain");
        return -FI_EINVAL;
    }
    runtime::eq::attach(eq);  // fi_close(eq) is -FI_EBUSY while the domain holds it
    d->bound_eq = reinterpret_cast<fid_eq *>(bfid);
    d->bound_eq_flags = flags;
    if (flags & FI_REG_MR) d->reg_mr_eq.store(d->bound_eq, std::memory_order_release);
    return 0;
}

int domain_control(fid_t fid, int command, void *arg) {
    if (command == FI_MAP_RAW_MR || command == FI_UNMAP_KEY) return mr_domain_control(fid, command, arg);
    return -FI_ENOSYS;
}
int domain_ops_open(fid_t, const char *, uint64_t, void **, void *) { return -FI_ENOSYS; }

int not_yet(const char *what) {
    UFI_LOG_INFO(log::Subsys::Domain, "{} is not implemented yet", what);
    return -FI_ENOSYS;
}

int poll_open(fid_domain *, fi_poll_attr *, fid_poll **) { return not_yet("fi_poll_open"); }
int query_collective(fid_domain *, fi_collective_op, fi_collective_attr *, uint64_t) {
    return not_yet("fi_query_collective");
}
int xpu_ctx(fid_domain *, fi_xpu_attr *, fid_xpu_ctx **, void *) { return not_yet("fi_xpu_ctx"); }

fi_ops g_domain_fi_ops = {
    .size = sizeof(fi_ops),
    .close = domain_close,
    .bind = domain_bind,
    .control = domain_control,
    .ops_open = domain_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_domain_fi_ops, FI_CLASS_DOMAIN);

fi_ops_domain g_domain_ops = {
    .size = sizeof(fi_ops_domain),
    .av_open = av_open,
    .cq_open = cq_open,
    .endpoint = endpoint,
    .scalable_ep = scalable_ep,
    .cntr_open = cntr_open,
    .poll_open = poll_open,
    .stx_ctx = stx_context,
    .srx_ctx = srx_context,
    .query_atomic = query_atomic,
    .query_collective = query_collective,
    .endpoint2 = endpoint2,
    .xpu_ctx = xpu_ctx,
};

}  // namespace

int open_domain(fid_fabric *fabric, fi_info *info, fid_domain **domain, uint64_t flags, void *context) {
    if (fabric == nullptr || fabric->fid.fclass != FI_CLASS_FABRIC ||
        !runtime::is_ufi_fi_ops(fabric->fid.ops) || domain == nullptr) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain: fabric or domain is NULL or not a ufi fabric");
        return -FI_EINVAL;
    }
    return guarded([&] {
        Domain *d = nullptr;
        const int rc = runtime::open_domain(runtime::Fabric::from(fabric), info, flags, context,
                                            &g_domain_fi_ops, &g_domain_ops, &g_mr_ops, &d);
        if (rc == 0) *domain = d;
        return rc;
    });
}

}  // namespace ufi::api
