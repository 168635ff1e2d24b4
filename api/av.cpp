// fi_av_open and the AV's ops tables (fi_ops, fi_ops_av): the C ABI checks (NULL pointers,
// unknown flags, sizes), then runtime/av/.
#include "api/export.h"
#include "api/objects.h"
#include "runtime/av/av.h"
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

#include <climits>

namespace ufi::api {

namespace {

using log::Subsys;
using runtime::av::Av;

Av *av_from(fid_av *av) {
    return runtime::av::av_of(av);
}

// One WARN line for an argument only the C ABI can get wrong.
int bad(const char *call, const char *what, int rc = -FI_EINVAL) {
    UFI_LOG_WARN(Subsys::Av, "{}: {}", call, what);
    return rc;
}

// Checks shared by the insert calls.
int check_insert(const char *call, uint64_t flags, const fi_addr_t *fi_addr, const void *context) {
    if (flags & ~runtime::av::kInsertFlags) {
        UFI_LOG_WARN(Subsys::Av, "{}: flags {:#x} are not defined for AV insertion", call,
                     flags & ~runtime::av::kInsertFlags);
        return -FI_EBADFLAGS;
    }
    if ((flags & FI_SYNC_ERR) && context == nullptr) {
        return bad(call, "flags FI_SYNC_ERR needs context: the int array of per-address status");
    }
    if ((flags & (FI_AV_USER_ID | FI_AUTH_KEY)) && fi_addr == nullptr) {
        return bad(call, "fi_addr is NULL, but FI_AV_USER_ID / FI_AUTH_KEY read it as input");
    }
    return 0;
}

int av_close(fid_t fid) {
    Av *av = runtime::av::av_of(fid);
    if (av == nullptr) return bad("fi_close(av)", "fid is not an AV");
    return runtime::av::close_av(av);
}

int av_bind(fid_t fid, fid_t bfid, uint64_t flags) {
    Av *av = runtime::av::av_of(fid);
    if (av == nullptr) return bad("fi_av_bind", "av is not an AV");
    if (bfid == nullptr || bfid->fclass != FI_CLASS_EQ)
        return bad("fi_av_bind", "eq is NULL or not an EQ");
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_bind: flags {:#x}: flags are reserved and must be 0",
                     flags);
        return -FI_EBADFLAGS;
    }
    return runtime::av::bind_eq(av, bfid);
}

int av_control(fid_t fid, int command, void *) {
    if (runtime::av::av_of(fid) == nullptr) return bad("fi_control(av)", "fid is not an AV");
    UFI_LOG_INFO(Subsys::Av, "fi_control(av): command {} is not supported on AVs", command);
    return -FI_ENOSYS;
}

int av_ops_open(fid_t, const char *name, uint64_t, void **, void *) {
    UFI_LOG_INFO(Subsys::Av, "fi_open_ops(av, {}): ufi has no AV extensions", name ? name : "NULL");
    return -FI_ENOSYS;
}

int av_insert(fid_av *fav, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
              void *context) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_insert", "av is not an AV");
    if (int rc = check_insert("fi_av_insert", flags, fi_addr, context); rc != 0) return rc;
    if (count == 0) return 0;
    if (addr == nullptr) return bad("fi_av_insert", "addr is NULL");
    if (count > INT_MAX) {
        return bad("fi_av_insert", "count exceeds INT_MAX, the most one call can report");
    }
    if (av->str_format) {
        return runtime::av::insert_str(av, addr, count, fi_addr, flags, context);
    }
    if (av->socket_format != 0) {
        return runtime::av::insert_socket(av, addr, count, fi_addr, flags, context);
    }
    return runtime::av::insert_ucx(av, addr, count, fi_addr, flags, context);
}

int av_insertsvc(fid_av *fav, const char *node, const char *service, fi_addr_t *fi_addr,
                 uint64_t flags, void *context) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_insertsvc", "av is not an AV");
    if (node == nullptr) return bad("fi_av_insertsvc", "node is NULL");
    if (int rc = check_insert("fi_av_insertsvc", flags, fi_addr, context); rc != 0) return rc;
    return runtime::av::insert_svc(av, node, service, fi_addr, flags, context);
}

int av_insertsym(fid_av *fav, const char *node, size_t nodecnt, const char *service, size_t svccnt,
                 fi_addr_t *fi_addr, uint64_t flags, void *context) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_insertsym", "av is not an AV");
    if (node == nullptr) return bad("fi_av_insertsym", "node is NULL");
    if (service == nullptr) return bad("fi_av_insertsym", "service is NULL");
    if (int rc = check_insert("fi_av_insertsym", flags, fi_addr, context); rc != 0) return rc;
    return runtime::av::insert_sym(av, node, nodecnt, service, svccnt, fi_addr, flags, context);
}

int av_remove(fid_av *fav, fi_addr_t *fi_addr, size_t count, uint64_t flags) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_remove", "av is not an AV");
    if (flags & ~(FI_AUTH_KEY | FI_AV_USER_ID)) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_remove: flags {:#x} are not defined for fi_av_remove",
                     flags & ~(FI_AUTH_KEY | FI_AV_USER_ID));
        return -FI_EBADFLAGS;
    }
    if (count == 0) return 0;
    if (fi_addr == nullptr) return bad("fi_av_remove", "fi_addr is NULL");
    return runtime::av::remove(av, fi_addr, count, flags);
}

int av_lookup(fid_av *fav, fi_addr_t fi_addr, void *addr, size_t *addrlen) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_lookup", "av is not an AV");
    if (addrlen == nullptr) return bad("fi_av_lookup", "addrlen is NULL");
    if (addr == nullptr && *addrlen != 0)
        return bad("fi_av_lookup", "addr is NULL but *addrlen is not 0");
    return runtime::av::lookup(av, fi_addr, addr, addrlen, false);
}

int av_lookup2(fid_av *fav, fi_addr_t fi_addr, void *buf, size_t *len, uint64_t flags,
               fid_xpu_ctx *ctx) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_lookup2", "av is not an AV");
    if (flags & ~FI_XPU) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_lookup2: flags {:#x} are not defined (only FI_XPU)",
                     flags & ~FI_XPU);
        return -FI_EBADFLAGS;
    }
    if (flags & FI_XPU) {
        return bad("fi_av_lookup2",
                   ctx == nullptr ? "FI_XPU without an XPU context (ctx is NULL)"
                                  : "ctx is not an XPU context of this domain (ufi has none)");
    }
    if (ctx != nullptr) return bad("fi_av_lookup2", "ctx is set but flags lack FI_XPU");
    if (len == nullptr) return bad("fi_av_lookup2", "len is NULL");
    if (buf == nullptr && *len != 0) return bad("fi_av_lookup2", "buf is NULL but *len is not 0");
    return runtime::av::lookup(av, fi_addr, buf, len, true);
}

const char *av_straddr(fid_av *fav, const void *addr, char *buf, size_t *len) {
    Av *av = av_from(fav);
    if (av == nullptr || addr == nullptr || len == nullptr || (buf == nullptr && *len != 0)) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_straddr: {}",
                     av == nullptr     ? "av is not an AV"
                     : addr == nullptr ? "addr is NULL"
                     : len == nullptr  ? "len is NULL"
                                       : "buf is NULL but *len is not 0");
        return nullptr;
    }
    return runtime::av::straddr(av, addr, buf, len);
}

int av_set(fid_av *, fi_av_set_attr *, fid_av_set **, void *) {
    UFI_LOG_INFO(Subsys::Av, "fi_av_set: AV sets (collectives) are not implemented");
    return -FI_ENOSYS;
}

int av_insert_auth_key(fid_av *fav, const void *auth_key, size_t auth_key_size, fi_addr_t *fi_addr,
                       uint64_t flags) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_insert_auth_key", "av is not an AV");
    if (auth_key == nullptr) return bad("fi_av_insert_auth_key", "auth_key is NULL");
    if (fi_addr == nullptr) return bad("fi_av_insert_auth_key", "fi_addr is NULL");
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::Av,
                     "fi_av_insert_auth_key: flags {:#x}: flags are reserved and must be 0", flags);
        return -FI_EBADFLAGS;
    }
    return runtime::av::insert_auth_key(av, auth_key, auth_key_size, fi_addr);
}

int av_lookup_auth_key(fid_av *fav, fi_addr_t fi_addr, void *auth_key, size_t *auth_key_size) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_lookup_auth_key", "av is not an AV");
    if (auth_key_size == nullptr) return bad("fi_av_lookup_auth_key", "auth_key_size is NULL");
    if (auth_key == nullptr && *auth_key_size != 0) {
        return bad("fi_av_lookup_auth_key", "auth_key is NULL but *auth_key_size is not 0");
    }
    return runtime::av::lookup_auth_key(av, fi_addr, auth_key, auth_key_size);
}

int av_set_user_id(fid_av *fav, fi_addr_t fi_addr, fi_addr_t user_id, uint64_t flags) {
    Av *av = av_from(fav);
    if (av == nullptr) return bad("fi_av_set_user_id", "av is not an AV");
    if (flags & ~FI_AUTH_KEY) {
        UFI_LOG_WARN(Subsys::Av,
                     "fi_av_set_user_id: flags {:#x} are not defined (only FI_AUTH_KEY)",
                     flags & ~FI_AUTH_KEY);
        return -FI_EBADFLAGS;
    }
    return runtime::av::set_user_id(av, fi_addr, user_id, flags);
}

fi_ops g_av_fi_ops = {
    .size = sizeof(fi_ops),
    .close = [](fid_t fid) { return guarded([&] { return av_close(fid); }); },
    .bind = [](fid_t fid, fid_t bfid,
               uint64_t flags) { return guarded([&] { return av_bind(fid, bfid, flags); }); },
    .control = [](fid_t fid, int command,
                  void *arg) { return guarded([&] { return av_control(fid, command, arg); }); },
    .ops_open =
        [](fid_t fid, const char *name, uint64_t flags, void **ops, void *context) {
            return guarded([&] { return av_ops_open(fid, name, flags, ops, context); });
        },
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_av_fi_ops, FI_CLASS_AV);

fi_ops_av g_av_ops = {
    .size = sizeof(fi_ops_av),
    .insert =
        [](fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
           void *context) {
            return guarded([&] { return av_insert(av, addr, count, fi_addr, flags, context); });
        },
    .insertsvc =
        [](fid_av *av, const char *node, const char *service, fi_addr_t *fi_addr, uint64_t flags,
           void *context) {
            return guarded(
                [&] { return av_insertsvc(av, node, service, fi_addr, flags, context); });
        },
    .insertsym =
        [](fid_av *av, const char *node, size_t nodecnt, const char *service, size_t svccnt,
           fi_addr_t *fi_addr, uint64_t flags, void *context) {
            return guarded([&] {
                return av_insertsym(av, node, nodecnt, service, svccnt, fi_addr, flags, context);
            });
        },
    .remove =
        [](fid_av *av, fi_addr_t *fi_addr, size_t count, uint64_t flags) {
            return guarded([&] { return av_remove(av, fi_addr, count, flags); });
        },
    .lookup =
        [](fid_av *av, fi_addr_t fi_addr, void *addr, size_t *addrlen) {
            return guarded([&] { return av_lookup(av, fi_addr, addr, addrlen); });
        },
    .straddr = [](fid_av *av, const void *addr, char *buf, size_t *len) -> const char * {
        try {
            return av_straddr(av, addr, buf, len);
        } catch (...) {
            return nullptr;
        }
    },
    .av_set = [](fid_av *av, fi_av_set_attr *attr, fid_av_set **set,
                 void *context) { return guarded([&] { return av_set(av, attr, set, context); }); },
    .insert_auth_key =
        [](fid_av *av, const void *key, size_t size, fi_addr_t *fi_addr, uint64_t flags) {
            return guarded([&] { return av_insert_auth_key(av, key, size, fi_addr, flags); });
        },
    .lookup_auth_key =
        [](fid_av *av, fi_addr_t fi_addr, void *key, size_t *size) {
            return guarded([&] { return av_lookup_auth_key(av, fi_addr, key, size); });
        },
    .set_user_id =
        [](fid_av *av, fi_addr_t fi_addr, fi_addr_t user_id, uint64_t flags) {
            return guarded([&] { return av_set_user_id(av, fi_addr, user_id, flags); });
        },
    .lookup2 =
        [](fid_av *av, fi_addr_t fi_addr, void *buf, size_t *len, uint64_t flags,
           fid_xpu_ctx *ctx) {
            return guarded([&] { return av_lookup2(av, fi_addr, buf, len, flags, ctx); });
        },
};

}  // namespace

int av_open(fid_domain *domain, fi_av_attr *attr, fid_av **av, void *context) {
    auto *d = runtime::object_of<runtime::Domain>(domain == nullptr ? nullptr : &domain->fid,
                                                  FI_CLASS_DOMAIN);
    if (d == nullptr) return bad("fi_av_open", "domain is NULL or not a domain");
    if (attr == nullptr) return bad("fi_av_open", "attr is NULL");
    if (av == nullptr) return bad("fi_av_open", "av is NULL");
    if (attr->flags & ~runtime::av::kOpenFlags) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_open: attr->flags {:#x} are not defined for fi_av_open",
                     attr->flags & ~runtime::av::kOpenFlags);
        return -FI_EBADFLAGS;
    }
    return guarded([&] {
        Av *out = nullptr;
        const int rc = runtime::av::open_av(d, attr, context, &g_av_fi_ops, &g_av_ops, &out);
        if (rc == 0) *av = out;
        return rc;
    });
}

}  // namespace ufi::api
