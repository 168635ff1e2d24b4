// fi_eq_open and the event queue's ops tables. Checks what only the C ABI can get wrong;
// runtime/eq/ does the rest. Tables are chosen once at open: without a wait object sread
// refuses, without FI_WRITE fi_eq_write does.
#include "api/export.h"
#include "api/objects.h"
#include "runtime/cq/error_text.h"
#include "runtime/eq/eq.h"
#include "runtime/fabric/fabric.h"
#include "runtime/fid_cast.h"
#include "runtime/c_enum.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

namespace ufi::api {

namespace {

using runtime::eq::Eq;

// libfabric's util layer writes error events with this flag (UTIL_FLAG_ERROR in ofi_util.h);
// ufi accepts it in fi_eq_write so that code written against that layer keeps working.
constexpr uint64_t kWriteErrorFlag = 1ULL << 60;

Eq *eq_from(fid_eq *eq) {
    return runtime::object_of<Eq>(eq);
}
Eq *eq_from(fid_t fid) {
    return runtime::object_of<Eq>(reinterpret_cast<fid_eq *>(fid));
}

int eq_close(fid_t fid) {
    return runtime::close_object(eq_from(fid));
}

int eq_bind(fid_t, fid_t, uint64_t) {
    UFI_LOG_WARN(log::Subsys::Eq,
                 "fi_eq bind: nothing binds to an EQ (bind the EQ to the other object)");
    return -FI_ENOSYS;
}

int eq_control(fid_t fid, int command, void *arg) {
    return eq_from(fid)->control(command, arg);
}

int eq_ops_open(fid_t, const char *, uint64_t, void **, void *) {
    return -FI_ENOSYS;
}

bool check_read_args(const void *buf, size_t len, uint64_t flags, const char *call) {
    if (buf == nullptr && len > 0) {
        UFI_LOG_WARN(log::Subsys::Eq, "{}: buf is NULL (len {})", call, len);
        return false;
    }
    if (flags & ~static_cast<uint64_t>(FI_PEEK)) {
        UFI_LOG_WARN(log::Subsys::Eq, "{}: flags {:#x} are not defined (only FI_PEEK)", call,
                     flags);
        return false;
    }
    return true;
}

ssize_t eq_read(fid_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags) {
    if (!check_read_args(buf, len, flags, "fi_eq_read"))
        return buf == nullptr ? -FI_EINVAL : -FI_EBADFLAGS;
    return eq_from(eq)->read(event, buf, len, flags);
}

ssize_t eq_readerr(fid_eq *eq, fi_eq_err_entry *buf, uint64_t flags) {
    if (buf == nullptr) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_readerr: buf is NULL");
        return -FI_EINVAL;
    }
    if (!check_read_args(buf, 0, flags, "fi_eq_readerr")) return -FI_EBADFLAGS;
    return eq_from(eq)->readerr(buf, flags);
}

ssize_t eq_write(fid_eq *eq, uint32_t event, const void *buf, size_t len, uint64_t flags) {
    Eq *e = eq_from(eq);
    if (buf == nullptr && len > 0) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_write: buf is NULL (len {})", len);
        return -FI_EINVAL;
    }
    if (len > runtime::eq::kMaxEventSize) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_write: len {} is above ufi's limit of {} bytes", len,
                     runtime::eq::kMaxEventSize);
        return -FI_EINVAL;
    }
    if (flags & ~kWriteErrorFlag) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_write: flags {:#x} are not defined", flags);
        return -FI_EBADFLAGS;
    }
    return guarded([&]() -> int {
        int rc;
        if (flags & kWriteErrorFlag) {
            if (len < sizeof(fi_eq_err_entry)) {
                UFI_LOG_WARN(
                    log::Subsys::Eq,
                    "fi_eq_write: an error event needs a struct fi_eq_err_entry, len is {}", len);
                return -FI_EINVAL;
            }
            rc = e->post_error(*static_cast<const fi_eq_err_entry *>(buf),
                               runtime::eq::Eq::Origin::Application);
        } else {
            rc = e->post(event, buf, len, runtime::eq::Eq::Origin::Application);
        }
        return rc != 0 ? rc : static_cast<int>(len);
    });
}

// Without FI_WRITE "the application may not invoke fi_eq_write".
ssize_t eq_write_refused(fid_eq *, uint32_t, const void *, size_t, uint64_t) {
    UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_write: the EQ was opened without FI_WRITE");
    return -FI_ENOSYS;
}

ssize_t eq_sread(fid_eq *eq, uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags) {
    if (!check_read_args(buf, len, flags, "fi_eq_sread"))
        return buf == nullptr ? -FI_EINVAL : -FI_EBADFLAGS;
    return eq_from(eq)->sread(event, buf, len, timeout, flags);
}

ssize_t eq_sread_none(fid_eq *, uint32_t *, void *, size_t, int, uint64_t) {
    UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_sread: the EQ was opened with FI_WAIT_NONE");
    return -FI_ENOSYS;
}

const char *eq_strerror(fid_eq *, int prov_errno, const void *, char *buf, size_t len) {
    return runtime::errtext::describe(prov_errno, fi_strerror, buf, len);
}

fi_ops g_eq_fi_ops = {
    .size = sizeof(fi_ops),
    .close = eq_close,
    .bind = eq_bind,
    .control = eq_control,
    .ops_open = eq_ops_open,
    .tostr = nullptr,
    .ops_set = nullptr,
};
UFI_REGISTER_FI_OPS(g_eq_fi_ops, FI_CLASS_EQ);

// [wait object?][FI_WRITE?]
fi_ops_eq g_eq_ops[2][2] = {
    {
        {sizeof(fi_ops_eq), eq_read, eq_readerr, eq_write_refused, eq_sread_none, eq_strerror},
        {sizeof(fi_ops_eq), eq_read, eq_readerr, eq_write, eq_sread_none, eq_strerror},
    },
    {
        {sizeof(fi_ops_eq), eq_read, eq_readerr, eq_write_refused, eq_sread, eq_strerror},
        {sizeof(fi_ops_eq), eq_read, eq_readerr, eq_write, eq_sread, eq_strerror},
    },
};

int parse_attr(const fi_eq_attr &attr, runtime::eq::Config *config) {
    constexpr uint64_t kKnown = FI_WRITE | FI_AFFINITY;
    if (attr.flags & ~kKnown) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_open: attr->flags {:#x} are not defined for EQs",
                     attr.flags & ~kKnown);
        return -FI_EBADFLAGS;
    }
    if (attr.flags & FI_AFFINITY) {
        UFI_LOG_DEBUG(log::Subsys::Eq,
                      "fi_eq_open: signaling_vector {} ignored (no interrupt affinity)",
                      attr.signaling_vector);
    }
    const int wait_obj = runtime::raw_enum(attr.wait_obj);
    const int rc = runtime::wait::parse_kind(wait_obj, &config->wait);
    if (rc == -FI_ENOSYS) {
        UFI_LOG_WARN(log::Subsys::Eq,
                     "fi_eq_open: attr->wait_obj {} is not supported (wait sets and mutex/cond "
                     "waits are deprecated; use FI_WAIT_FD or FI_WAIT_UNSPEC)",
                     wait_obj == FI_WAIT_SET ? "FI_WAIT_SET" : "FI_WAIT_MUTEX_COND");
        return rc;
    }
    if (rc != 0) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_open: attr->wait_obj {} is not an fi_wait_obj",
                     wait_obj);
        return rc;
    }
    config->size = attr.size;
    config->writable = (attr.flags & FI_WRITE) != 0;
    return 0;
}

}  // namespace

int eq_open(fid_fabric *fabric, fi_eq_attr *attr, fid_eq **eq, void *context) {
    if (fabric == nullptr || fabric->fid.fclass != FI_CLASS_FABRIC || attr == nullptr ||
        eq == nullptr) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_open: {} is NULL or not a fabric",
                     fabric == nullptr || fabric->fid.fclass != FI_CLASS_FABRIC ? "fabric"
                     : attr == nullptr                                          ? "attr"
                                                                                : "eq");
        return -FI_EINVAL;
    }
    return guarded([&] {
        runtime::eq::Config config;
        int rc = parse_attr(*attr, &config);
        if (rc != 0) return rc;
        Eq *e = nullptr;
        fi_ops_eq *table = &g_eq_ops[config.wait != runtime::wait::Kind::None][config.writable];
        rc = Eq::open(runtime::Fabric::from(fabric), config, context, &g_eq_fi_ops, table, &e);
        if (rc == 0) *eq = e;
        return rc;
    });
}

}  // namespace ufi::api
