// fi_cq_open and the completion queue's ops tables. Checks what only the C ABI can get wrong
// (NULL pointers, enum values, flags, sizes); runtime/cq/ does the rest. A CQ without a wait
// object gets a table whose sread/sreadfrom/signal refuse, chosen once at open.
#include "api/export.h"
#include "api/objects.h"
#include "runtime/cq/cq.h"
#include "runtime/cq/error_text.h"
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/c_enum.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::api {

namespace {

using runtime::cq::Cq;

Cq *cq_from(fid_cq *cq) {
    return runtime::object_of<Cq>(cq);
}
Cq *cq_from(fid_t fid) {
    return runtime::object_of<Cq>(reinterpret_cast<fid_cq *>(fid));
}

int cq_close(fid_t fid) {
    return runtime::close_object(cq_from(fid));
}

int cq_bind(fid_t, fid_t, uint64_t) {
    UFI_LOG_WARN(log::Subsys::Cq, "fi_cq bind: nothing binds to a CQ (bind the CQ to an endpoint)");
    return -FI_ENOSYS;
}

int cq_control(fid_t fid, int command, void *arg) {
    return cq_from(fid)->control(command, arg);
}

int cq_ops_open(fid_t, const char *, uint64_t, void **, void *) {
    return -FI_ENOSYS;
}

bool check_buffer(const void *buf, size_t count, const char *call) {
    if (buf == nullptr && count > 0) {
        UFI_LOG_WARN(log::Subsys::Cq, "{}: buf is NULL (count {})", call, count);
        return false;
    }
    return true;
}

ssize_t cq_read(fid_cq *cq, void *buf, size_t count) {
    if (!check_buffer(buf, count, "fi_cq_read")) return -FI_EINVAL;
    return cq_from(cq)->read(buf, count, nullptr);
}

ssize_t cq_readfrom(fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr) {
    if (!check_buffer(buf, count, "fi_cq_readfrom")) return -FI_EINVAL;
    return cq_from(cq)->read(buf, count, src_addr);
}

ssize_t cq_readerr(fid_cq *cq, fi_cq_err_entry *buf, uint64_t flags) {
    if (buf == nullptr) {
        UFI_LOG_WARN(log::Subsys::Cq, "fi_cq_readerr: buf is NULL");
        return -FI_EINVAL;
    }
    if (flags != 0) {
        UFI_LOG_WARN(log::Subsys::Cq, "fi_cq_readerr: flags {:#x} are not defined", flags);
        return -FI_EBADFLAGS;
    }
    return cq_from(cq)->readerr(buf);
}

size_t threshold_of(const Cq *cq, const void *cond) {
    return cq->threshold_cond() && cond != nullptr ? *static_cast<const size_t *>(cond) : 1;
}

ssize_t cq_sreadfrom(fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr, const void *cond,
                     int timeout) {
    if (!check_buffer(buf, count, "fi_cq_sread")) return -FI_EINVAL;
    Cq *c = cq_from(cq);
    return c->sread(buf, count, src_addr, threshold_of(c, cond), timeout);
}

ssize_t cq_sread(fid_cq *cq, void *buf, size_t count, const void *cond, int timeout) {
    return cq_sreadfrom(cq, buf, count, nullptr, cond, timeout);
}

int cq_signal(fid_cq *cq) {
    return cq_from(cq)->signal();
}

// FI_WAIT_NONE: "the application may not call fi_cq_sread or fi_cq_sreadfrom", and
// fi_cq_signal "is only available if the CQ was configured with a wait object".
ssize_t no_wait(const char *call) {
    UFI_LOG_WARN(log::Subsys::Cq, "{}: the CQ was opened with FI_WAIT_NONE", call);
    return -FI_ENOSYS;
}
ssize_t cq_sread_none(fid_cq *, void *, size_t, const void *, int) {
    return no_wait("fi_cq_sread");
}
ssize_t cq_sreadfrom_none(fid_cq *, void *, size_t, fi_addr_t *, const void *, int) {
    return no_wait("fi_cq_sreadfrom");
}
int cq_signal_none(fid_cq *) {
    return static_cast<int>(no_wait("fi_cq_signal"));
}

const char *cq_strerror(fid_cq *, int prov_errno, const void *, char *buf, size_t len) {
    return runtime::errtext::describe(prov_errno, fi_strerror, buf, len);
}

int cq_export_xpu(fid_cq *, uint64_t, fid_xpu_cq *) {
    UFI_LOG_INFO(log::Subsys::Cq, "fi_cq_export_xpu: ufi has no XPU completion queues");
    return -FI_ENOSYS;
}

fi_ops g_cq_fi_ops = {
    .size = sizeof(fi_ops),
    .close = cq_close,
    .bind = cq_bind,
    .control = cq_control,
    .ops_open = cq_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_cq_fi_ops, FI_CLASS_CQ);

fi_ops_cq g_cq_ops = {
    .size = sizeof(fi_ops_cq),
    .read = cq_read,
    .readfrom = cq_readfrom,
    .readerr = cq_readerr,
    .sread = cq_sread,
    .sreadfrom = cq_sreadfrom,
    .signal = cq_signal,
    .strerror = cq_strerror,
    .export_xpu = cq_export_xpu,
};

fi_ops_cq g_cq_ops_no_wait = {
    .size = sizeof(fi_ops_cq),
    .read = cq_read,
    .readfrom = cq_readfrom,
    .readerr = cq_readerr,
    .sread = cq_sread_none,
    .sreadfrom = cq_sreadfrom_none,
    .signal = cq_signal_none,
    .strerror = cq_strerror,
    .export_xpu = cq_export_xpu,
};

// fi_cq_attr -> runtime::cq::Config; 0 or the documented error, with one WARN line.
int parse_attr(const fi_cq_attr &attr, runtime::cq::Config *config) {
    const int format = runtime::raw_enum(attr.format);
    switch (format) {
        case FI_CQ_FORMAT_UNSPEC:
            config->format = runtime::cq::kUnspecFormat;
            break;
        case FI_CQ_FORMAT_CONTEXT:
        case FI_CQ_FORMAT_MSG:
        case FI_CQ_FORMAT_DATA:
        case FI_CQ_FORMAT_TAGGED:
            config->format = format;
            break;
        default:
            UFI_LOG_WARN(log::Subsys::Cq, "fi_cq_open: attr->format {} is not an fi_cq_format",
                         format);
            return -FI_EINVAL;
    }
    // Undefined bits first: FI_XPU among them must not turn a bad flags word into -FI_ENOSYS.
    constexpr uint64_t kKnown = FI_AFFINITY | FI_XPU;
    if (attr.flags & ~kKnown) {
        UFI_LOG_WARN(log::Subsys::Cq, "fi_cq_open: attr->flags {:#x} are not defined for CQs",
                     attr.flags & ~kKnown);
        return -FI_EBADFLAGS;
    }
    if (attr.flags & FI_XPU) {
        UFI_LOG_WARN(log::Subsys::Cq,
                     "fi_cq_open: attr->flags FI_XPU: ufi has no XPU completion queues");
        return -FI_ENOSYS;
    }
    if (attr.flags & FI_AFFINITY) {
        UFI_LOG_DEBUG(log::Subsys::Cq,
                      "fi_cq_open: signaling_vector {} ignored (no interrupt affinity)",
                      attr.signaling_vector);
    }
    const int wait_obj = runtime::raw_enum(attr.wait_obj);
    const int rc = runtime::wait::parse_kind(wait_obj, &config->wait);
    if (rc == -FI_ENOSYS) {
        UFI_LOG_WARN(log::Subsys::Cq,
                     "fi_cq_open: attr->wait_obj {} is not supported (wait sets and mutex/cond "
                     "waits are deprecated; use FI_WAIT_FD or FI_WAIT_UNSPEC)",
                     wait_obj == FI_WAIT_SET ? "FI_WAIT_SET" : "FI_WAIT_MUTEX_COND");
        return rc;
    }
    if (rc != 0) {
        UFI_LOG_WARN(log::Subsys::Cq, "fi_cq_open: attr->wait_obj {} is not an fi_wait_obj",
                     wait_obj);
        return rc;
    }
    if (config->wait != runtime::wait::Kind::None) {  // ignored with FI_WAIT_NONE
        const int cond = runtime::raw_enum(attr.wait_cond);
        if (cond != FI_CQ_COND_NONE && cond != FI_CQ_COND_THRESHOLD) {
            UFI_LOG_WARN(log::Subsys::Cq,
                         "fi_cq_open: attr->wait_cond {} is not an fi_cq_wait_cond", cond);
            return -FI_EINVAL;
        }
        config->threshold_cond = cond == FI_CQ_COND_THRESHOLD;
    }
    config->size = attr.size;
    return 0;
}

}  // namespace

int cq_open(fid_domain *domain, fi_cq_attr *attr, fid_cq **cq, void *context) {
    if (domain == nullptr || domain->fid.fclass != FI_CLASS_DOMAIN || attr == nullptr ||
        cq == nullptr) {
        UFI_LOG_WARN(log::Subsys::Cq, "fi_cq_open: {} is NULL or not a domain",
                     domain == nullptr || domain->fid.fclass != FI_CLASS_DOMAIN ? "domain"
                     : attr == nullptr                                          ? "attr"
                                                                                : "cq");
        return -FI_EINVAL;
    }
    return guarded([&] {
        runtime::cq::Config config;
        int rc = parse_attr(*attr, &config);
        if (rc != 0) return rc;
        auto *d = runtime::object_of<runtime::Domain>(domain);
        Cq *c = nullptr;
        fi_ops_cq *table = config.wait == runtime::wait::Kind::None ? &g_cq_ops_no_wait : &g_cq_ops;
        rc = Cq::open(d, config, context, &g_cq_fi_ops, table, &c);
        if (rc != 0) return rc;
        // Report the provider's choice for FI_CQ_FORMAT_UNSPEC.
        if (runtime::raw_enum(attr->format) == FI_CQ_FORMAT_UNSPEC) {
            runtime::set_raw_enum(attr->format, config.format);
        }
        *cq = c;
        return 0;
    });
}

}  // namespace ufi::api
