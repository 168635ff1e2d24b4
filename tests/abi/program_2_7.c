/* SPDX-License-Identifier: BSD-2-Clause */ /* Part of ufi. */
/*
 * A small program written for libfabric 2.7, as an application would write
 * it: it uses only the public headers and the 2.x calls (fi_endpoint2, the
 * AV auth-key/user-id/lookup2 calls, fi_mr_get_xpu_desc, fi_group_addr,
 * fi_tag_mpi), then sends itself one tagged message.
 *
 * It proves that such a program compiles against ufi's headers and, when
 * linked with libufi, runs. The library is young, so a call that answers
 * "not implemented" (-FI_ENOSYS, -FI_EOPNOTSUPP, -FI_ENODATA) ends the run
 * cleanly with exit status 0. Any other error, a wrong result or a hang of
 * the loopback transfer (bounded) exits with status 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#define API_VERSION FI_VERSION(2, 7)
#define XFER_TIMEOUT_S 10
#define MSG_LEN 64

enum outcome {
    GO_ON, /* call succeeded (or an optional call was skipped) */
    STOP,  /* not implemented yet: end the run, successfully */
    FAIL   /* unexpected error */
};

struct app {
    struct fi_info *hints;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;
    struct fid_mr *mr;
    void *desc;
    fi_addr_t self;
    int av_user_ids;
    char name[256];
    size_t namelen;
    char buf[2][MSG_LEN]; /* [0] sent, [1] received; one registration */
    struct fi_context2 tx_ctx;
    struct fi_context2 rx_ctx;
};

static int not_implemented(int ret)
{
    return ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP || ret == -FI_ENODATA;
}

/* Classifies a return code of a call the program cannot do without. */
static enum outcome required(const char *call, long ret)
{
    if (ret >= 0)
        return GO_ON;
    printf("%s: %s (%ld)\n", call, fi_strerror((int)-ret), ret);
    if (not_implemented((int)ret)) {
        printf("%s is not available yet: stopping here\n", call);
        return STOP;
    }
    return FAIL;
}

/* Classifies a return code of an optional 2.x call: "not implemented" and
 * the answers documented for preconditions this program did not set up
 * (accept1, accept2; 0 for none) are reported and skipped. */
static enum outcome optional(const char *call, int ret, int accept1, int accept2)
{
    if (ret >= 0)
        return GO_ON;
    printf("%s: %s (%d)\n", call, fi_strerror(-ret), ret);
    if (not_implemented(ret) || (accept1 && ret == accept1) ||
        (accept2 && ret == accept2)) {
        printf("%s: skipped\n", call);
        return GO_ON;
    }
    return FAIL;
}

#define TRY(expr)                         \
    do {                                  \
        enum outcome outcome_ = (expr);   \
        if (outcome_ != GO_ON)            \
            return outcome_;              \
    } while (0)

static enum outcome get_info(struct app *app)
{
    int ret;

    app->hints = fi_allocinfo();
    if (!app->hints) {
        printf("fi_allocinfo: out of memory\n");
        return FAIL;
    }
    app->hints->caps = FI_MSG | FI_TAGGED;
    app->hints->mode = FI_CONTEXT | FI_CONTEXT2;
    app->hints->ep_attr->type = FI_EP_RDM;
    app->hints->domain_attr->threading = FI_THREAD_DOMAIN;
    app->hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                                       FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                                       FI_MR_ENDPOINT;

    ret = fi_getinfo(API_VERSION, NULL, NULL, 0, app->hints, &app->info);
    TRY(required("fi_getinfo", ret));
    if (!app->info) {
        printf("fi_getinfo: success but no fi_info\n");
        return FAIL;
    }
    printf("provider %s, fabric %s, domain %s\n",
           app->info->fabric_attr->prov_name ? app->info->fabric_attr->prov_name : "?",
           app->info->fabric_attr->name ? app->info->fabric_attr->name : "?",
           app->info->domain_attr->name ? app->info->domain_attr->name : "?");
    return GO_ON;
}

static enum outcome open_objects(struct app *app)
{
    struct fi_cq_attr cq_attr;
    struct fi_av_attr av_attr;

    TRY(required("fi_fabric", fi_fabric(app->info->fabric_attr, &app->fabric, NULL)));
    TRY(required("fi_domain", fi_domain(app->fabric, app->info, &app->domain, NULL)));

    memset(&cq_attr, 0, sizeof(cq_attr));
    cq_attr.size = 64;
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = FI_WAIT_NONE;
    TRY(required("fi_cq_open", fi_cq_open(app->domain, &cq_attr, &app->cq, NULL)));

    memset(&av_attr, 0, sizeof(av_attr));
    av_attr.type = FI_AV_TABLE;
    av_attr.count = 16;
    app->av_user_ids = (app->info->caps & FI_AV_USER_ID) != 0;
    if (app->av_user_ids)
        av_attr.flags |= FI_AV_USER_ID;
    TRY(required("fi_av_open", fi_av_open(app->domain, &av_attr, &app->av, NULL)));

    /* No flags: the same endpoint fi_endpoint would open, via the 2.x call. */
    TRY(required("fi_endpoint2", fi_endpoint2(app->domain, app->info, &app->ep, 0, NULL)));
    TRY(required("fi_ep_bind(av)", fi_ep_bind(app->ep, &app->av->fid, 0)));
    TRY(required("fi_ep_bind(cq)",
                 fi_ep_bind(app->ep, &app->cq->fid, FI_TRANSMIT | FI_RECV)));
    TRY(required("fi_enable", fi_enable(app->ep)));
    return GO_ON;
}

static enum outcome address_vector(struct app *app)
{
    char found[256];
    unsigned char key[64];
    size_t len;
    fi_addr_t key_addr = FI_ADDR_NOTAVAIL;
    int ret;

    app->namelen = sizeof(app->name);
    TRY(required("fi_getname", fi_getname(&app->ep->fid, app->name, &app->namelen)));

    ret = fi_av_insert(app->av, app->name, 1, &app->self, 0, NULL);
    TRY(required("fi_av_insert", ret));
    if (ret != 1) {
        printf("fi_av_insert: inserted %d of 1 address\n", ret);
        return FAIL;
    }

    /* A user id replaces the fi_addr_t in completions; needs FI_AV_USER_ID. */
    TRY(optional("fi_av_set_user_id", fi_av_set_user_id(app->av, app->self, 42, 0),
                 app->av_user_ids ? 0 : -FI_EINVAL, 0));

    /* Without FI_XPU, fi_av_lookup2 is fi_av_lookup. */
    len = sizeof(found);
    ret = fi_av_lookup2(app->av, app->self, found, &len, 0, NULL);
    TRY(optional("fi_av_lookup2", ret, 0, 0));
    if (ret == 0 && (len == 0 || len > sizeof(found))) {
        printf("fi_av_lookup2: implausible address length %zu\n", len);
        return FAIL;
    }

    /* Auth keys kept in the AV need a domain opened with
     * auth_key_size == FI_AV_AUTH_KEY; the key format is the provider's, so
     * -FI_EINVAL is the documented answer to this made-up key. */
    memset(key, 0x5a, sizeof(key));
    TRY(optional("fi_av_insert_auth_key",
                 fi_av_insert_auth_key(app->av, key, sizeof(key), &key_addr, 0),
                 -FI_EINVAL, 0));
    /* A plain endpoint address may have no key of its own. */
    len = sizeof(key);
    TRY(optional("fi_av_lookup_auth_key",
                 fi_av_lookup_auth_key(app->av, app->self, key, &len), -FI_EINVAL,
                 -FI_ENOKEY));

    /* Group 0 is the address itself; other groups live in the top bits. */
    if (fi_group_addr(app->self, 0) != app->self ||
        fi_group_addr(app->self, 3) != (app->self | (3ULL << 32))) {
        printf("fi_group_addr: wrong result\n");
        return FAIL;
    }
    return GO_ON;
}

static enum outcome memory(struct app *app)
{
    unsigned char xpu_desc[64];
    size_t len;

    TRY(required("fi_mr_reg",
                 fi_mr_reg(app->domain, app->buf, sizeof(app->buf), FI_SEND | FI_RECV,
                           0, 0, 0, &app->mr, NULL)));
    if (app->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        TRY(required("fi_mr_bind", fi_mr_bind(app->mr, &app->ep->fid, 0)));
        TRY(required("fi_mr_enable", fi_mr_enable(app->mr)));
    }
    app->desc = fi_mr_desc(app->mr);

    /* Without FI_XPU and a context there is no device descriptor to give;
     * -FI_EINVAL is the documented answer. */
    len = sizeof(xpu_desc);
    TRY(optional("fi_mr_get_xpu_desc",
                 fi_mr_get_xpu_desc(app->mr, xpu_desc, &len, 0, NULL), -FI_EINVAL, 0));
    return GO_ON;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads what completions there are and notes which of ours finished. */
static enum outcome poll_cq(struct app *app, uint64_t tag, int *sent, int *received)
{
    struct fi_cq_tagged_entry comp[4];
    ssize_t ret;

    ret = fi_cq_read(app->cq, comp, 4);
    if (ret == -FI_EAGAIN)
        return GO_ON;
    if (ret == -FI_EAVAIL) {
        struct fi_cq_err_entry err;
        char text[128];

        memset(&err, 0, sizeof(err));
        if (fi_cq_readerr(app->cq, &err, 0) > 0)
            printf("completion error: %s (%s)\n", fi_strerror(err.err),
                   fi_cq_strerror(app->cq, err.prov_errno, err.err_data, text,
                                  sizeof(text)));
        return FAIL;
    }
    TRY(required("fi_cq_read", (long)ret));
    for (ssize_t i = 0; i < ret; i++) {
        if (comp[i].op_context == &app->tx_ctx) {
            *sent = 1;
        } else if (comp[i].op_context == &app->rx_ctx) {
            *received = 1;
            if (comp[i].tag != tag || comp[i].len != MSG_LEN) {
                printf("receive completion: tag %#llx, len %zu\n",
                       (unsigned long long)comp[i].tag, comp[i].len);
                return FAIL;
            }
        } else {
            printf("completion with an unknown context %p\n", comp[i].op_context);
            return FAIL;
        }
    }
    return GO_ON;
}

/* One tagged message to ourselves, with an MPI-style tag. */
static enum outcome loopback(struct app *app)
{
    uint64_t tag = fi_tag_mpi(7, 1);
    double deadline = now_s() + XFER_TIMEOUT_S;
    int sent = 0, received = 0;
    ssize_t ret;

    memset(app->buf, 0, sizeof(app->buf));
    snprintf(app->buf[0], MSG_LEN, "hello from a libfabric 2.7 program");

    /* Tag 7 from anyone, whatever the payload id. */
    TRY(required("fi_trecv",
                 (long)fi_trecv(app->ep, app->buf[1], MSG_LEN, app->desc, FI_ADDR_UNSPEC,
                                fi_tag_mpi(7, 0), FI_MPI_IGNORE_PAYLOAD, &app->rx_ctx)));
    for (;;) {
        ret = fi_tsend(app->ep, app->buf[0], MSG_LEN, app->desc, app->self, tag,
                       &app->tx_ctx);
        if (ret != -FI_EAGAIN || now_s() > deadline)
            break;
        TRY(poll_cq(app, tag, &sent, &received));
    }
    TRY(required("fi_tsend", (long)ret));

    while ((!sent || !received) && now_s() < deadline)
        TRY(poll_cq(app, tag, &sent, &received));
    if (!sent || !received) {
        printf("loopback: no completion within %d s (sent %d, received %d)\n",
               XFER_TIMEOUT_S, sent, received);
        return FAIL;
    }
    if (memcmp(app->buf[0], app->buf[1], MSG_LEN) != 0) {
        printf("loopback: received data differs\n");
        return FAIL;
    }
    printf("loopback: \"%s\"\n", app->buf[1]);
    return GO_ON;
}

static enum outcome close_fid(const char *what, struct fid *fid)
{
    int ret;

    if (!fid)
        return GO_ON;
    ret = fi_close(fid);
    if (ret && !not_implemented(ret)) {
        printf("fi_close(%s): %s\n", what, fi_strerror(-ret));
        return FAIL;
    }
    return GO_ON;
}

/* Children first, as fi_close requires. */
static enum outcome teardown(struct app *app)
{
    enum outcome result = GO_ON;

    if (close_fid("mr", app->mr ? &app->mr->fid : NULL) == FAIL)
        result = FAIL;
    if (close_fid("ep", app->ep ? &app->ep->fid : NULL) == FAIL)
        result = FAIL;
    if (close_fid("av", app->av ? &app->av->fid : NULL) == FAIL)
        result = FAIL;
    if (close_fid("cq", app->cq ? &app->cq->fid : NULL) == FAIL)
        result = FAIL;
    if (close_fid("domain", app->domain ? &app->domain->fid : NULL) == FAIL)
        result = FAIL;
    if (close_fid("fabric", app->fabric ? &app->fabric->fid : NULL) == FAIL)
        result = FAIL;
    if (app->info)
        fi_freeinfo(app->info);
    if (app->hints)
        fi_freeinfo(app->hints);
    return result;
}

static enum outcome run(struct app *app)
{
    TRY(get_info(app));
    TRY(open_objects(app));
    TRY(address_vector(app));
    TRY(memory(app));
    TRY(loopback(app));
    return GO_ON;
}

int main(void)
{
    static struct app app;
    enum outcome result;
    uint32_t version = fi_version();

    printf("built for API %d.%d, library reports %u.%u\n", FI_MAJOR_VERSION, FI_MINOR_VERSION,
           FI_MAJOR(version), FI_MINOR(version));
    result = run(&app);
    if (teardown(&app) == FAIL)
        result = FAIL;
    if (result == FAIL) {
        printf("program_2_7: FAILED\n");
        return 1;
    }
    printf("program_2_7: %s\n", result == STOP ? "stopped at an unimplemented call" : "completed");
    return 0;
}
