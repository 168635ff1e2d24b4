/* Two "jobs" told apart by their authorization keys (auth_job_multihost.sh). The server (one
 * job: key argv[4]) listens on host:port with a 64-byte region open to remote reads, writes
 * and atomics (requested key 0x42, offsets) and receives for any source, for argv[5] seconds,
 * then prints what reached it: "received <n> messages, region word <value>". A client (key
 * argv[4]) reaches it by host and port and tries a message, a write of argv[5] (a number) and
 * a fetch-add of 1 at the region's first word; "expect ok" wants each to complete, "expect
 * refused" each to fail with FI_EACCES (at the call or by its error completion). Exit 0: as
 * expected; 1 otherwise.
 * Usage: auth_job server <ip> <port> <key> <seconds>
 *        auth_job client <ip> <port> <key> <value> ok|refused */
#define _POSIX_C_SOURCE 200809L
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRY(call)                                                                      \
    do {                                                                               \
        int rc_ = (int)(call);                                                         \
        if (rc_ != 0) {                                                                \
            fprintf(stderr, "%s: %s\n", #call, fi_strerror(-rc_));                     \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static struct fid_cq *cq;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* One completion within 20 s: 0 for success, the error otherwise (ETIMEDOUT: none came). */
static int one_completion(void) {
    const double until = now() + 20;
    while (now() < until) {
        struct fi_cq_tagged_entry e;
        ssize_t rc = fi_cq_read(cq, &e, 1);
        if (rc == 1) return 0;
        if (rc == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(cq, &err, 0) == 1) return err.err;
        } else if (rc != -FI_EAGAIN) {
            return (int)-rc;
        }
    }
    return FI_ETIMEDOUT;
}

/* What an operation gave: the call's error, else its completion's. */
static int outcome(ssize_t posted) {
    return posted < 0 ? (int)-posted : one_completion();
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: see the comment at the top of auth_job.c\n");
        return 1;
    }
    const int server = strcmp(argv[1], "server") == 0;
    alarm(120);
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
    hints->domain_attr->mr_mode = FI_MR_ALLOCATED;
    hints->domain_attr->auth_key = (uint8_t *)argv[4];
    hints->domain_attr->auth_key_size = strlen(argv[4]);
    TRY(fi_getinfo(FI_VERSION(1, 17), argv[2], argv[3], server ? FI_SOURCE : 0, hints, &info));
    hints->domain_attr->auth_key = NULL; /* (not ours to free) */
    hints->domain_attr->auth_key_size = 0;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_ep *ep;
    TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
    TRY(fi_domain(fabric, info, &domain, NULL));
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    TRY(fi_av_open(domain, &av_attr, &av, NULL));
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
    TRY(fi_cq_open(domain, &cq_attr, &cq, NULL));
    TRY(fi_endpoint(domain, info, &ep, NULL));
    TRY(fi_ep_bind(ep, &av->fid, 0));
    TRY(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    TRY(fi_enable(ep));
    static uint64_t region[8];
    int failures = 0;
    if (server) {
        struct fid_mr *mr;
        TRY(fi_mr_reg(domain, region, sizeof region, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0x42,
                      0, &mr, NULL));
        static uint64_t in[4];
        long received = 0;
        TRY(fi_trecv(ep, in, sizeof in, NULL, FI_ADDR_UNSPEC, 1, 0, NULL));
        const double until = now() + atof(argv[5]);
        while (now() < until) {
            struct fi_cq_tagged_entry e;
            ssize_t rc = fi_cq_read(cq, &e, 1);
            if (rc == 1) {
                ++received;
                TRY(fi_trecv(ep, in, sizeof in, NULL, FI_ADDR_UNSPEC, 1, 0, NULL));
            } else if (rc == -FI_EAVAIL) {
                struct fi_cq_err_entry err = {0};
                (void)fi_cq_readerr(cq, &err, 0);
            }
        }
        printf("received %ld messages, region word %llu\n", received,
               (unsigned long long)region[0]);
        fi_close(&ep->fid);
        fi_close(&mr->fid);
    } else {
        const int want_ok = strcmp(argv[6], "ok") == 0;
        fi_addr_t peer;
        if (fi_av_insert(av, info->dest_addr, 1, &peer, 0, NULL) != 1) return 1;
        uint64_t msg = 7, value = strtoull(argv[5], NULL, 0), one = 1, old = 0;
        const char *what[3] = {"message", "write", "fetch-add"};
        int got[3];
        got[0] = outcome(fi_tsend(ep, &msg, sizeof msg, NULL, peer, 1, NULL));
        got[1] = outcome(fi_write(ep, &value, sizeof value, NULL, peer, 0, 0x42, NULL));
        got[2] = outcome(fi_fetch_atomic(ep, &one, 1, NULL, &old, NULL, peer, 0, 0x42, FI_UINT64,
                                         FI_SUM, NULL));
        for (int i = 0; i < 3; ++i) {
            const int as_expected = want_ok ? got[i] == 0 : got[i] == FI_EACCES;
            printf("%s: %s%s\n", what[i], got[i] == 0 ? "completed" : fi_strerror(got[i]),
                   as_expected ? "" : " (NOT AS EXPECTED)");
            failures += !as_expected;
        }
        fi_close(&ep->fid);
    }
    fi_close(&cq->fid);
    fi_close(&av->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return failures == 0 ? 0 : 1;
}
