// fi_fabric, fi_fabric2 and the fabric's ops tables.
#include "api/export.h"
#include "api/loader.h"
#include "runtime/fid_cast.h"
#include "api/objects.h"
#include "runtime/wait/trywait.h"
#include "runtime/fabric/fabric.h"
#include "base/log/log.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

namespace {

using ufi::runtime::Fabric;

int fabric_close(fid_t fid) { return ufi::runtime::close_fabric(Fabric::from(fid)); }

int fabric_bind(fid_t, fid_t, uint64_t) { return -FI_ENOSYS; }
int fabric_control(fid_t, int, void *) { return -FI_ENOSYS; }
int fabric_ops_open(fid_t, const char *, uint64_t, void **, void *) { return -FI_ENOSYS; }

int not_yet(const char *what) {
    UFI_LOG_INFO(ufi::log::Subsys::Fabric, "{} is not implemented yet", what);
    return -FI_ENOSYS;
}

int fabric_domain(fid_fabric *fabric, fi_info *info, fid_domain **domain, void *context) {
    return ufi::api::open_domain(fabric, info, domain, 0, context);
}
int fabric_domain2(fid_fabric *fabric, fi_info *info, fid_domain **domain, uint64_t flags, void *context) {
    return ufi::api::open_domain(fabric, info, domain, flags, context);
}
int fabric_passive_ep(fid_fabric *fabric, fi_info *info, fid_pep **pep, void *context) {
    return ufi::api::passive_ep(fabric, info, pep, context);
}
int fabric_eq_open(fid_fabric *fabric, fi_eq_attr *attr, fid_eq **eq, void *context) {
    return ufi::api::eq_open(fabric, attr, eq, context);
}
int fabric_wait_open(fid_fabric *, fi_wait_attr *, fid_wait **) { return not_yet("fi_wait_open"); }
// fi_trywait: may the application sleep on these objects' FI_GETWAIT fds now?
int fabric_trywait(fid_fabric *, fid **fids, int count) {
    return ufi::runtime::wait::trywait(fids, count);
}

fi_ops g_fabric_fi_ops = {
    .size = sizeof(fi_ops),
    .close = fabric_close,
    .bind = fabric_bind,
    .control = fabric_control,
    .ops_open = fabric_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_fabric_fi_ops, FI_CLASS_FABRIC);

fi_ops_fabric g_fabric_ops = {
    .size = sizeof(fi_ops_fabric),
    .domain = fabric_domain,
    .passive_ep = fabric_passive_ep,
    .eq_open = fabric_eq_open,
    .wait_open = fabric_wait_open,
    .trywait = fabric_trywait,
    .domain2 = fabric_domain2,
};

int open(const char *call, const fi_fabric_attr *attr, fid_fabric **fabric, void *context) {
    // The runtime sees only a local's address: the caller's output pointer is checked here.
    if (fabric == nullptr) {
        UFI_LOG_WARN(ufi::log::Subsys::Fabric, "{}: fabric is NULL", call);
        return -FI_EINVAL;
    }
    Fabric *f = nullptr;
    const int rc = ufi::runtime::open_fabric(attr, &g_fabric_fi_ops, &g_fabric_ops, context, &f);
    if (rc == 0) *fabric = &f->fid;
    return rc;
}

}  // namespace

UFI_EXPORT int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context) {
    return ufi::api::guarded([&] { return open("fi_fabric", attr, fabric, context); });
}

UFI_EXPORT int fi_fabric2(struct fi_info *info, struct fid_fabric **fabric, uint64_t flags,
                          void *context) {
    if (info == nullptr || info->fabric_attr == nullptr) {
        UFI_LOG_WARN(ufi::log::Subsys::Fabric, "fi_fabric2: info or info->fabric_attr is NULL");
        return -FI_EINVAL;
    }
    if (flags != 0) {
        UFI_LOG_WARN(ufi::log::Subsys::Fabric, "fi_fabric2: flags {:#x} are not defined", flags);
        return -FI_EBADFLAGS;
    }
    return ufi::api::guarded([&] { return open("fi_fabric2", info->fabric_attr, fabric, context); });
}

namespace ufi::api {

int loader_fabric(fi_fabric_attr *attr, fid_fabric **fabric, void *context) {
    return guarded([&] { return open("fi_fabric (loaded as a provider)", attr, fabric, context); });
}

}  // namespace ufi::api
