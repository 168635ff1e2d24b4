/* SPDX-License-Identifier: BSD-2-Clause */ /* Part of ufi. */
/*
 * rdma/fi_trigger.h: triggered and deferred operations.
 *
 * A triggered operation is posted with FI_TRIGGER and a context that is a
 * struct fi_triggered_context(2) instead of the usual fi_context(2): it runs
 * when its condition (a counter threshold, or a device-side variable) holds.
 * Deferred work (fi_control FI_QUEUE_WORK) describes the operation fully in
 * a struct fi_deferred_work. Layouts are libfabric 2.x's (unchanged since
 * 1.x).
 */
#ifndef FI_TRIGGER_H
#define FI_TRIGGER_H

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_atomic.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fi_trigger_event {
    FI_TRIGGER_THRESHOLD,
    FI_TRIGGER_XPU
};

/* Kind of operation a deferred work item performs. */
enum fi_op_type {
    FI_OP_RECV,
    FI_OP_SEND,
    FI_OP_TRECV,
    FI_OP_TSEND,
    FI_OP_READ,
    FI_OP_WRITE,
    FI_OP_ATOMIC,
    FI_OP_FETCH_ATOMIC,
    FI_OP_COMPARE_ATOMIC,
    FI_OP_CNTR_SET,
    FI_OP_CNTR_ADD
};

/* Fire when `cntr` reaches `threshold`. */
struct fi_trigger_threshold {
    struct fid_cntr *cntr;
    size_t threshold;
};

/* A variable a device writes to release the operation. */
struct fi_trigger_var {
    enum fi_datatype datatype;
    int count;
    void *addr;
    union {
        uint8_t val8;
        uint16_t val16;
        uint32_t val32;
        uint64_t val64;
        uint8_t *data;
    } value;
};

/* Condition set by FI_OPT_XPU_TRIGGER / FI_TRIGGER_XPU. */
struct fi_trigger_xpu {
    int count;
    enum fi_hmem_iface iface;
    union {
        uint64_t reserved;
        int cuda;
        int ze;
    } device;
    struct fi_trigger_var *var;
};

/* One operation of each kind, as deferred work refers to it. */
struct fi_op_msg {
    struct fid_ep *ep;
    struct fi_msg msg;
    uint64_t flags;
};

struct fi_op_tagged {
    struct fid_ep *ep;
    struct fi_msg_tagged msg;
    uint64_t flags;
};

struct fi_op_rma {
    struct fid_ep *ep;
    struct fi_msg_rma msg;
    uint64_t flags;
};

struct fi_op_atomic {
    struct fid_ep *ep;
    struct fi_msg_atomic msg;
    uint64_t flags;
};

struct fi_op_fetch_atomic {
    struct fid_ep *ep;
    struct fi_msg_atomic msg;
    struct fi_msg_fetch fetch;
    uint64_t flags;
};

struct fi_op_compare_atomic {
    struct fid_ep *ep;
    struct fi_msg_atomic msg;
    struct fi_msg_fetch fetch;
    struct fi_msg_compare compare;
    uint64_t flags;
};

struct fi_op_cntr {
    struct fid_cntr *cntr;
    uint64_t value;
};

/* Passed as the operation context with FI_TRIGGER; the same size as
 * struct fi_context, which it stands in for. */
struct fi_triggered_context {
    enum fi_trigger_event event_type;
    union {
        struct fi_trigger_threshold threshold;
        struct fi_trigger_xpu xpu;
        void *internal[3];
    } trigger;
};

/* The same, standing in for struct fi_context2 (FI_CONTEXT2 mode). */
struct fi_triggered_context2 {
    enum fi_trigger_event event_type;
    union {
        struct fi_trigger_threshold threshold;
        struct fi_trigger_xpu xpu;
        void *internal[7];
    } trigger;
};

/* Argument of FI_QUEUE_WORK / FI_CANCEL_WORK: when triggering_cntr reaches
 * threshold, run `op` and count it on completion_cntr. */
struct fi_deferred_work {
    struct fi_context2 context;

    uint64_t threshold;
    struct fid_cntr *triggering_cntr;
    struct fid_cntr *completion_cntr;

    enum fi_op_type op_type;

    union {
        struct fi_op_msg *msg;
        struct fi_op_tagged *tagged;
        struct fi_op_rma *rma;
        struct fi_op_atomic *atomic;
        struct fi_op_fetch_atomic *fetch_atomic;
        struct fi_op_compare_atomic *compare_atomic;
        struct fi_op_cntr *cntr;
    } op;
};

#ifdef __cplusplus
}
#endif

#endif /* FI_TRIGGER_H */
