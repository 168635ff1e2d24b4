/* SPDX-License-Identifier: BSD-2-Clause */ /* Part of ufi. */
/*
 * rdma/fi_ext.h: extensions outside the core API, as libfabric 2.x has them.
 *
 * - Provider-specific value ranges and the provider options that generic
 *   code refers to (negative FI_OPT_* names). ufi has no such provider; the
 *   names exist so that code using them compiles.
 * - Exporting/importing fids (fi_export_fid, fi_import_fid).
 * - Importing a memory monitor or a log handler into the library
 *   (fi_import, fi_import_log).
 *
 * The peer-provider interfaces that libfabric 1.x kept here moved to
 * rdma/providers/fi_peer.h in 2.0 and are not part of ufi's public headers.
 */
#ifndef FI_EXT_H
#define FI_EXT_H

#include <stdbool.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_endpoint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Provider-specific ranges                                                  */
/* ------------------------------------------------------------------------ */

/* Each provider owns a 12-bit code, shifted left by 16; the low 16 bits are
 * its values. Option names are the negated range start, counting up. */
#define FI_PROV_SPECIFIC_EFA (0xefa << 16)
#define FI_PROV_SPECIFIC_TCP (0x7cb << 16)

/* EFA endpoint options (fi_getopt/fi_setopt at FI_OPT_ENDPOINT). */
enum {
    FI_OPT_EFA_RNR_RETRY = -FI_PROV_SPECIFIC_EFA,
    FI_OPT_EFA_EMULATED_READ,                       /* bool */
    FI_OPT_EFA_EMULATED_WRITE,                      /* bool */
    FI_OPT_EFA_EMULATED_ATOMICS,                    /* bool */
    FI_OPT_EFA_USE_DEVICE_RDMA,                     /* bool */
    FI_OPT_EFA_SENDRECV_IN_ORDER_ALIGNED_128_BYTES, /* bool */
    FI_OPT_EFA_WRITE_IN_ORDER_ALIGNED_128_BYTES,    /* bool */
    FI_OPT_EFA_HOMOGENEOUS_PEERS,                   /* bool */
    FI_OPT_EFA_USE_UNSOLICITED_WRITE_RECV           /* bool */
};

/* ------------------------------------------------------------------------ */
/* Exporting and importing fids                                              */
/* ------------------------------------------------------------------------ */

/* Argument of FI_EXPORT_FID. */
struct fi_fid_export {
    struct fid **fid;
    uint64_t flags;
    void *context;
};

static inline int fi_export_fid(struct fid *fid, uint64_t flags,
                                struct fid **expfid, void *context)
{
    struct fi_fid_export exp;

    exp.fid = expfid;
    exp.flags = flags;
    exp.context = context;
    return fi_control(fid, FI_EXPORT_FID, &exp);
}

/* Importing is binding the exported fid to the importing one. */
static inline int fi_import_fid(struct fid *fid, struct fid *expfid,
                                uint64_t flags)
{
    return fid->ops->bind(fid, expfid, flags);
}

/* ------------------------------------------------------------------------ */
/* Memory monitor import: open the "mr_cache" fid and import a monitor       */
/* ------------------------------------------------------------------------ */

struct fid_mem_monitor;

/* Implemented by the application, called by the library. */
struct fi_ops_mem_monitor {
    size_t size;
    int (*start)(struct fid_mem_monitor *monitor);
    void (*stop)(struct fid_mem_monitor *monitor);
    int (*subscribe)(struct fid_mem_monitor *monitor, const void *addr,
                     size_t len);
    void (*unsubscribe)(struct fid_mem_monitor *monitor, const void *addr,
                        size_t len);
    bool (*valid)(struct fid_mem_monitor *monitor, const void *addr,
                  size_t len);
};

/* Implemented by the library, called by the application's monitor. */
struct fi_ops_mem_notify {
    size_t size;
    void (*notify)(struct fid_mem_monitor *monitor, const void *addr,
                   size_t len);
};

struct fid_mem_monitor {
    struct fid fid;
    struct fi_ops_mem_monitor *export_ops;
    struct fi_ops_mem_notify *import_ops;
};

/* ------------------------------------------------------------------------ */
/* Log handler import: open the "logging" fid and import a handler           */
/* ------------------------------------------------------------------------ */

/* libfabric declares these in rdma/providers/fi_prov.h and fi_log.h, which
 * its fi_ext.h includes; ufi ships no provider headers, so the pieces the
 * handler's signature needs are declared here. A provider fi_log.h included
 * first (it defines FI_LOG_H) supplies the same enums instead. */
struct fi_provider;

#ifndef FI_LOG_H
enum fi_log_subsys {
    FI_LOG_CORE,
    FI_LOG_FABRIC,
    FI_LOG_DOMAIN,
    FI_LOG_EP_CTRL,
    FI_LOG_EP_DATA,
    FI_LOG_AV,
    FI_LOG_CQ,
    FI_LOG_EQ,
    FI_LOG_MR,
    FI_LOG_CNTR,
    FI_LOG_SUBSYS_MAX
};

enum fi_log_level {
    FI_LOG_WARN,
    FI_LOG_TRACE,
    FI_LOG_INFO,
    FI_LOG_DEBUG,
    FI_LOG_MAX
};
#endif

/* Flag the library passes to a handler's enabled()/ready(): the FI_LOG_PROV
 * filter excludes this provider. */
#define FI_LOG_PROV_FILTERED (1ULL << 0)

struct fi_ops_log {
    size_t size;
    int (*enabled)(const struct fi_provider *prov, enum fi_log_level level,
                   enum fi_log_subsys subsys, uint64_t flags);
    int (*ready)(const struct fi_provider *prov, enum fi_log_level level,
                 enum fi_log_subsys subsys, uint64_t flags,
                 uint64_t *showtime);
    void (*log)(const struct fi_provider *prov, enum fi_log_level level,
                enum fi_log_subsys subsys, const char *func, int line,
                const char *msg);
};

struct fid_logging {
    struct fid fid;
    struct fi_ops_log *ops;
};

/* Open the library object `name` and bind `fid` to it. */
static inline int fi_import(uint32_t version, const char *name, void *attr,
                            size_t attr_len, uint64_t flags, struct fid *fid,
                            void *context)
{
    struct fid *open_fid;
    int ret;

    ret = fi_open(version, name, attr, attr_len, flags, &open_fid, context);
    if (ret != FI_SUCCESS)
        return ret;
    ret = fi_import_fid(open_fid, fid, flags);
    fi_close(open_fid);
    return ret;
}

/* Route the library's log output through log_fid->ops. */
static inline int fi_import_log(uint32_t version, uint64_t flags,
                                struct fid_logging *log_fid)
{
    log_fid->fid.fclass = FI_CLASS_LOG;
    log_fid->ops->size = sizeof(struct fi_ops_log);
    return fi_import(version, "logging", NULL, 0, flags, &log_fid->fid,
                     log_fid);
}

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_H */
