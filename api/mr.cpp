// fi_mr_reg / fi_mr_regv / fi_mr_regattr (the domain's fi_ops_mr), the MR's fid ops (fi_close,
// fi_mr_bind, fi_mr_enable, fi_mr_refresh, fi_mr_raw_attr, fi_mr_get_xpu_desc) and the
// domain's raw-key controls (fi_mr_map_raw, fi_mr_unmap_key). Checks what only the C ABI
// can get wrong - NULL pointers, undefined flag bits, fields the caller's API version does
// not have - and leaves the semantics to runtime/mr.
#include "api/export.h"
#include "api/objects.h"
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/c_enum.h"
#include "base/log/log.h"
#include "runtime/mr/binding.h"
#include "runtime/mr/mr.h"

#include <rdma/fi_errno.h>

namespace ufi::api {

namespace {

using log::Subsys;
using runtime::Domain;
using runtime::mr::Mr;
using runtime::mr::RegRequest;

Domain *domain_of(fid *fid) {
    return runtime::object_of<Domain>(fid, FI_CLASS_DOMAIN);
}

int bad_domain(const char *call) {
    UFI_LOG_WARN(Subsys::Mr, "{}: domain is NULL or not a ufi domain", call);
    return -FI_EINVAL;
}

int check_common(const char *call, fid_mr **mr, uint64_t flags) {
    if (mr == nullptr) {
        UFI_LOG_WARN(Subsys::Mr, "{}: mr is NULL", call);
        return -FI_EINVAL;
    }
    if (flags & ~runtime::mr::kKnownRegFlags) {
        UFI_LOG_WARN(Subsys::Mr, "{}: flags {:#x} has undefined bits {:#x}", call, flags,
                     flags & ~runtime::mr::kKnownRegFlags);
        return -FI_EBADFLAGS;
    }
    return 0;
}

// ---- the MR's fid ops ------------------------------------------------------------------------

Mr *checked_mr(fid_t fid, const char *call) {
    Mr *m = runtime::mr::mr_of(fid);
    if (m == nullptr) UFI_LOG_WARN(Subsys::Mr, "{}: not a ufi memory region", call);
    return m;
}

int mr_close(fid_t fid) {
    Mr *m = checked_mr(fid, "fi_close");
    if (m == nullptr) return -FI_EINVAL;
    return runtime::mr::close_mr(m);
}

int mr_bind(fid_t fid, fid_t bfid, uint64_t flags) {
    Mr *m = checked_mr(fid, "fi_mr_bind");
    if (m == nullptr) return -FI_EINVAL;
    if (bfid == nullptr) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_bind: bfid is NULL");
        return -FI_EINVAL;
    }
    return guarded([&] { return runtime::mr::bind_mr(m, bfid, flags); });
}

int mr_control(fid_t fid, int command, void *arg) {
    Mr *m = checked_mr(fid, "fi_control(mr)");
    if (m == nullptr) return -FI_EINVAL;
    switch (command) {
        case FI_GET_RAW_MR: {
            auto *a = static_cast<struct fi_mr_raw_attr *>(arg);
            if (a == nullptr || a->key_size == nullptr || a->base_addr == nullptr) {
                UFI_LOG_WARN(Subsys::Mr, "fi_mr_raw_attr: {} is NULL",
                             a == nullptr ? "the argument"
                                          : (a->key_size == nullptr ? "key_size" : "base_addr"));
                return -FI_EINVAL;
            }
            return guarded([&] {
                return runtime::mr::raw_attr(m, a->base_addr, a->raw_key, a->key_size, a->flags);
            });
        }
        case FI_ENABLE:
            return guarded([&] { return runtime::mr::enable_mr(m); });
        case FI_REFRESH: {
            auto *mod = static_cast<fi_mr_modify *>(arg);
            if (mod == nullptr) {
                UFI_LOG_WARN(Subsys::Mr, "fi_mr_refresh: the argument is NULL");
                return -FI_EINVAL;
            }
            if (mod->attr.mr_iov == nullptr && mod->attr.iov_count != 0) {
                UFI_LOG_WARN(Subsys::Mr, "fi_mr_refresh: iov is NULL with count {}",
                             mod->attr.iov_count);
                return -FI_EINVAL;
            }
            const std::span<const iovec> iov(mod->attr.mr_iov, mod->attr.iov_count);
            return guarded([&] { return runtime::mr::refresh_mr(m, iov, mod->flags); });
        }
        case FI_GET_MR_XPU_DESC: {
            auto *x = static_cast<fi_mr_xpu_desc *>(arg);
            if (x == nullptr || x->len == nullptr) {
                UFI_LOG_WARN(Subsys::Mr, "fi_mr_get_xpu_desc: {} is NULL",
                             x == nullptr ? "the argument" : "len");
                return -FI_EINVAL;
            }
            return runtime::mr::xpu_desc(m, x->buf, x->len, x->flags, x->ctx);
        }
        default:
            UFI_LOG_WARN(Subsys::Mr,
                         "fi_control(mr): command {} is not supported on memory regions", command);
            return -FI_ENOSYS;
    }
}

int mr_ops_open(fid_t, const char *, uint64_t, void **, void *) {
    return -FI_ENOSYS;
}

fi_ops g_mr_fi_ops = {
    .size = sizeof(fi_ops),
    .close = mr_close,
    .bind = mr_bind,
    .control = mr_control,
    .ops_open = mr_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_mr_fi_ops, FI_CLASS_MR);

// ---- registration ----------------------------------------------------------------------------

int do_register(Domain *d, const RegRequest &req, fid_mr **mr) {
    return guarded([&] {
        Mr *m = nullptr;
        const int rc = runtime::mr::register_mr(d, req, &g_mr_fi_ops, &m);
        if (rc == 0) {
            *mr = m;
            runtime::mr::post_reg_event(d, m, req.context);
        }
        return rc;
    });
}

// Each call's request starts as a copy of this rather than being built field by field: GCC
// zeroes a fresh one with `rep stos`, which cost more than the rest of fi_mr_reg on a
// registration-cache hit (AMD EPYC; docs/performance-history.md, "MR cache hit: no zeroing").
constexpr RegRequest kFreshRequest{};

int reg(fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
        uint64_t requested_key, uint64_t flags, fid_mr **mr, void *context) {
    Domain *d = domain_of(fid);
    if (d == nullptr) return bad_domain("fi_mr_reg");
    if (int rc = check_common("fi_mr_reg", mr, flags)) return rc;
    if (flags & FI_MR_DMABUF) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_reg: FI_MR_DMABUF needs fi_mr_regattr (attr->dmabuf)");
        return -FI_EINVAL;
    }
    const iovec iov{const_cast<void *>(buf), len};
    RegRequest req = kFreshRequest;
    req.call = RegRequest::Call::Reg;
    req.iov = std::span<const iovec>(&iov, 1);
    req.access = access;
    req.offset = offset;
    req.requested_key = requested_key;
    req.context = context;
    req.flags = flags;
    return do_register(d, req, mr);
}

int regv(fid *fid, const iovec *iov, size_t count, uint64_t access, uint64_t offset,
         uint64_t requested_key, uint64_t flags, fid_mr **mr, void *context) {
    Domain *d = domain_of(fid);
    if (d == nullptr) return bad_domain("fi_mr_regv");
    if (int rc = check_common("fi_mr_regv", mr, flags)) return rc;
    if (flags & FI_MR_DMABUF) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_regv: FI_MR_DMABUF needs fi_mr_regattr (attr->dmabuf)");
        return -FI_EINVAL;
    }
    if (iov == nullptr && count != 0) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_regv: iov is NULL with count {}", count);
        return -FI_EINVAL;
    }
    RegRequest req = kFreshRequest;
    req.call = RegRequest::Call::Regv;
    req.iov = std::span<const iovec>(iov, count);
    req.access = access;
    req.offset = offset;
    req.requested_key = requested_key;
    req.context = context;
    req.flags = flags;
    return do_register(d, req, mr);
}

int regattr(fid *fid, const fi_mr_attr *attr, uint64_t flags, fid_mr **mr) {
    Domain *d = domain_of(fid);
    if (d == nullptr) return bad_domain("fi_mr_regattr");
    if (int rc = check_common("fi_mr_regattr", mr, flags)) return rc;
    if (attr == nullptr) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_regattr: attr is NULL");
        return -FI_EINVAL;
    }
    RegRequest req = kFreshRequest;
    req.call = RegRequest::Call::Regattr;
    const bool dmabuf = (flags & FI_MR_DMABUF) != 0;
    const void *first =
        dmabuf ? static_cast<const void *>(attr->dmabuf) : static_cast<const void *>(attr->mr_iov);
    if (first == nullptr && attr->iov_count != 0) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_regattr: attr->{} is NULL with iov_count {}",
                     dmabuf ? "dmabuf" : "mr_iov", attr->iov_count);
        return -FI_EINVAL;
    }
    if (dmabuf) {
        req.dmabuf = std::span<const fi_mr_dmabuf>(attr->dmabuf, attr->iov_count);
    } else {
        req.iov = std::span<const iovec>(attr->mr_iov, attr->iov_count);
    }
    req.access = attr->access;
    req.offset = attr->offset;
    req.requested_key = attr->requested_key;
    req.context = attr->context;
    // Fields by the caller's API version (its struct may end earlier): auth keys from 1.5,
    // iface/device only with FI_HMEM (as libfabric), the 2.x tail from 2.0.
    if (FI_VERSION_GE(d->api_version, FI_VERSION(1, 5))) {
        req.auth_key_size = attr->auth_key_size;
        req.auth_key = attr->auth_key;
    }
    if (d->caps & FI_HMEM) {
        req.iface = runtime::raw_enum(attr->iface);
        req.device = attr->device.reserved;
    }
    if (FI_VERSION_GE(d->api_version, FI_VERSION(2, 0))) {
        req.hmem_data = attr->hmem_data;
        req.page_size = attr->page_size;
        req.base_mr = attr->base_mr;
        req.sub_mr_cnt = attr->sub_mr_cnt;
    }
    req.flags = flags;
    return do_register(d, req, mr);
}

}  // namespace

// ---- the domain's raw-key controls (fi_mr_map_raw / fi_mr_unmap_key) -------------------------

int mr_domain_control(fid_t fid, int command, void *arg) {
    Domain *d = domain_of(fid);
    if (d == nullptr) return bad_domain("fi_control(domain)");
    if (command == FI_MAP_RAW_MR) {
        auto *map = static_cast<struct fi_mr_map_raw *>(arg);
        if (map == nullptr || map->raw_key == nullptr || map->key == nullptr) {
            UFI_LOG_WARN(
                Subsys::Mr, "fi_mr_map_raw: {} is NULL",
                map == nullptr ? "the argument" : (map->raw_key == nullptr ? "raw_key" : "key"));
            return -FI_EINVAL;
        }
        return guarded([&] {
            return runtime::mr::map_raw(d, map->base_addr, map->raw_key, map->key_size, map->key,
                                        map->flags);
        });
    }
    if (command == FI_UNMAP_KEY) {
        if (arg == nullptr) {
            UFI_LOG_WARN(Subsys::Mr, "fi_mr_unmap_key: the key argument is NULL");
            return -FI_EINVAL;
        }
        return guarded(
            [&] { return runtime::mr::unmap_key(d, *static_cast<const uint64_t *>(arg)); });
    }
    return -FI_ENOSYS;
}

fi_ops_mr g_mr_ops = {
    .size = sizeof(fi_ops_mr),
    .reg = reg,
    .regv = regv,
    .regattr = regattr,
};

}  // namespace ufi::api
