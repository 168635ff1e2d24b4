// fi_cntr_open and the counter's ops tables. Checks what only the C ABI can get wrong;
// runtime/cntr/ does the rest. A counter without a wait object gets a table whose
// fi_cntr_wait refuses, chosen once at open.
#include "api/export.h"
#include "api/objects.h"
#include "runtime/cntr/cntr.h"
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/c_enum.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::api {

namespace {

using runtime::cntr::Cntr;

Cntr *cntr_from(fid_cntr *c) {
    return runtime::object_of<Cntr>(c);
}
Cntr *cntr_from(fid_t fid) {
    return runtime::object_of<Cntr>(reinterpret_cast<fid_cntr *>(fid));
}

int cntr_close(fid_t fid) {
    return runtime::close_object(cntr_from(fid));
}

int cntr_bind(fid_t, fid_t, uint64_t) {
    UFI_LOG_WARN(log::Subsys::Cntr,
                 "fi_cntr bind: nothing binds to a counter (bind it to an endpoint or MR)");
    return -FI_ENOSYS;
}

int cntr_control(fid_t fid, int command, void *arg) {
    return cntr_from(fid)->control(command, arg);
}

int cntr_ops_open(fid_t, const char *, uint64_t, void **, void *) {
    return -FI_ENOSYS;
}

uint64_t cntr_read(fid_cntr *c) {
    return cntr_from(c)->read();
}
uint64_t cntr_readerr(fid_cntr *c) {
    return cntr_from(c)->readerr();
}

int cntr_add(fid_cntr *c, uint64_t value) {
    cntr_from(c)->add(value);
    return 0;
}
int cntr_adderr(fid_cntr *c, uint64_t value) {
    cntr_from(c)->adderr(value);
    return 0;
}
int cntr_set(fid_cntr *c, uint64_t value) {
    cntr_from(c)->set(value);
    return 0;
}
int cntr_seterr(fid_cntr *c, uint64_t value) {
    cntr_from(c)->seterr(value);
    return 0;
}

int cntr_wait(fid_cntr *c, uint64_t threshold, int timeout) {
    return cntr_from(c)->wait(threshold, timeout);
}

// "It is invalid for applications to call this function if the counter has been configured
// with a wait object of FI_WAIT_NONE".
int cntr_wait_none(fid_cntr *, uint64_t, int) {
    UFI_LOG_WARN(log::Subsys::Cntr, "fi_cntr_wait: the counter was opened with FI_WAIT_NONE");
    return -FI_ENOSYS;
}

int cntr_export_xpu(fid_cntr *, uint64_t, fid_xpu_cntr *) {
    UFI_LOG_INFO(log::Subsys::Cntr, "fi_cntr_export_xpu: ufi has no XPU counters");
    return -FI_ENOSYS;
}

fi_ops g_cntr_fi_ops = {
    .size = sizeof(fi_ops),
    .close = cntr_close,
    .bind = cntr_bind,
    .control = cntr_control,
    .ops_open = cntr_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_cntr_fi_ops, FI_CLASS_CNTR);

fi_ops_cntr g_cntr_ops = {
    .size = sizeof(fi_ops_cntr),
    .read = cntr_read,
    .readerr = cntr_readerr,
    .add = cntr_add,
    .set = cntr_set,
    .wait = cntr_wait,
    .adderr = cntr_adderr,
    .seterr = cntr_seterr,
    .export_xpu = cntr_export_xpu,
};

fi_ops_cntr g_cntr_ops_no_wait = {
    .size = sizeof(fi_ops_cntr),
    .read = cntr_read,
    .readerr = cntr_readerr,
    .add = cntr_add,
    .set = cntr_set,
    .wait = cntr_wait_none,
    .adderr = cntr_adderr,
    .seterr = cntr_seterr,
    .export_xpu = cntr_export_xpu,
};

int parse_attr(const fi_cntr_attr &attr, runtime::cntr::Config *config) {
    const int events = runtime::raw_enum(attr.events);
    if (events != FI_CNTR_EVENTS_COMP && events != FI_CNTR_EVENTS_BYTES) {
        UFI_LOG_WARN(log::Subsys::Cntr, "fi_cntr_open: attr->events {} is not an fi_cntr_events",
                     events);
        return -FI_EINVAL;
    }
    // "Flags are reserved for future use, and must be set to 0." Other bits first: FI_XPU
    // among them must not turn a bad flags word into -FI_ENOSYS.
    if (attr.flags & ~FI_XPU) {
        UFI_LOG_WARN(log::Subsys::Cntr, "fi_cntr_open: attr->flags {:#x} must be 0",
                     attr.flags & ~FI_XPU);
        return -FI_EBADFLAGS;
    }
    if (attr.flags & FI_XPU) {
        UFI_LOG_WARN(log::Subsys::Cntr,
                     "fi_cntr_open: attr->flags FI_XPU: ufi has no XPU counters");
        return -FI_ENOSYS;
    }
    const int wait_obj = runtime::raw_enum(attr.wait_obj);
    const int rc = runtime::wait::parse_kind(wait_obj, &config->wait);
    if (rc == -FI_ENOSYS) {
        UFI_LOG_WARN(log::Subsys::Cntr,
                     "fi_cntr_open: attr->wait_obj {} is not supported (wait sets and "
                     "mutex/cond waits are deprecated; use FI_WAIT_FD or FI_WAIT_UNSPEC)",
                     wait_obj == FI_WAIT_SET ? "FI_WAIT_SET" : "FI_WAIT_MUTEX_COND");
        return rc;
    }
    if (rc != 0) {
        UFI_LOG_WARN(log::Subsys::Cntr, "fi_cntr_open: attr->wait_obj {} is not an fi_wait_obj",
                     wait_obj);
        return rc;
    }
    config->count_bytes = events == FI_CNTR_EVENTS_BYTES;
    return 0;
}

}  // namespace

int cntr_open(fid_domain *domain, fi_cntr_attr *attr, fid_cntr **cntr, void *context) {
    if (domain == nullptr || domain->fid.fclass != FI_CLASS_DOMAIN || cntr == nullptr) {
        UFI_LOG_WARN(log::Subsys::Cntr, "fi_cntr_open: {} is NULL or not a domain",
                     cntr == nullptr ? "cntr" : "domain");
        return -FI_EINVAL;
    }
    return guarded([&] {
        runtime::cntr::Config config;  // attr NULL: FI_CNTR_EVENTS_COMP, FI_WAIT_NONE
        if (attr != nullptr) {
            const int rc = parse_attr(*attr, &config);
            if (rc != 0) return rc;
        }
        Cntr *c = nullptr;
        fi_ops_cntr *table =
            config.wait == runtime::wait::Kind::None ? &g_cntr_ops_no_wait : &g_cntr_ops;
        const int rc = Cntr::open(runtime::object_of<runtime::Domain>(domain), config, context,
                                  &g_cntr_fi_ops, table, &c);
        if (rc == 0) *cntr = c;
        return rc;
    });
}

}  // namespace ufi::api
