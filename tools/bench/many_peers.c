/* Many peers: one sender endpoint and P receiver endpoints spread over R processes of this
 * host (forked here; names go over pipes). Measures, in one run:
 *   - the sender's memory per connected peer: its resident set, its heap (malloc) and the
 *     bytes in /dev/shm, before and after it has sent one message to every peer (the
 *     receivers are idle then, their endpoints opened before), divided by P;
 *   - the 8-byte message rate (fi_inject, round-robin over the peers) with 1 peer and with P
 *     peers, each over the same number of messages, and their ratio.
 * Every receiver endpoint shares its process's one CQ and keeps receives posted; a phase ends
 * when every receiver process has counted all the messages meant for it (so the rate includes
 * the receivers keeping up). The processes, pipes and phases are many_peers_job.h's, shared
 * with the UCP anchor (many_peers_ucp.c).
 *
 *   many_peers P [R processes, default 2] [messages, default 1000000]
 * Prints one line of key=value figures. A program, never a test: nothing asserts a time.
 * Plain C, public API; run with UFI_NET_DEVICES=lo (traffic stays on this host). */
#include "many_peers_job.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

/* Receives kept posted per receiver endpoint, as many as the UCP anchor keeps (a larger set
 * only spreads the receivers' working set: 256 per endpoint at 256 endpoints halved the rate).
 * Completions are read in large batches (each read progresses every endpoint on the CQ) and
 * reposted after; the UCP anchor reposts from its callbacks. */
#define POSTED 32
#define BATCH 4096

#define CHECK(call)                                                                         \
    do {                                                                                    \
        int rc_ = (int)(call);                                                              \
        if (rc_ != 0) {                                                                     \
            fprintf(stderr, "many_peers %d: %s:%d: %s: %s\n", (int)getpid(), __FILE__,       \
                    __LINE__, #call, fi_strerror(-rc_));                                    \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;

static void open_domain(void) {
    struct fi_info *hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
    CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
    fi_freeinfo(hints);
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK(fi_domain(fabric, info, &domain, NULL));
}

static struct fid_ep *open_ep(struct fid_cq *cq, struct fid_av *av) {
    struct fid_ep *ep = NULL;
    CHECK(fi_endpoint(domain, info, &ep, NULL));
    CHECK(fi_ep_bind(ep, &av->fid, 0));
    CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_enable(ep));
    return ep;
}

/* One receive slot: its buffer and the context ufi hands back (FI_CONTEXT). */
struct slot {
    struct fi_context ctx;
    struct fid_ep *ep;
    uint64_t buf;
};

/* A receiver process: `count` endpoints on one CQ; sends their names up, then for each phase
 * counts `expected[phase]` messages and says 'd'. */
static void receiver(int count, int up, int down, int phases) {
    open_domain();
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .size = (size_t)count * POSTED};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    struct fid_cq *cq = NULL;
    struct fid_av *av = NULL;
    CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
    CHECK(fi_av_open(domain, &av_attr, &av, NULL));
    struct slot *slots = calloc((size_t)count * POSTED, sizeof *slots);
    for (int e = 0; e < count; e++) {
        struct fid_ep *ep = open_ep(cq, av);
        for (int s = 0; s < POSTED; s++) {
            struct slot *sl = &slots[e * POSTED + s];
            sl->ep = ep;
            CHECK(fi_recv(ep, &sl->buf, sizeof sl->buf, NULL, FI_ADDR_UNSPEC, &sl->ctx));
        }
        uint8_t name[JOB_NAME_MAX];
        size_t len = sizeof name;
        CHECK(fi_getname(&ep->fid, name, &len));
        if (job_send_name(up, name, len)) exit(1);
    }
    for (int ph = 0; ph < phases; ph++) {
        int64_t expected = 0;
        if (job_phase_share(down, &expected)) exit(1);
        int64_t got = 0;
        struct fi_cq_entry done[BATCH];
        while (got < expected) {
            ssize_t n = fi_cq_read(cq, done, BATCH);
            if (n == -FI_EAGAIN) continue;
            if (n < 0) {
                fprintf(stderr, "many_peers: receiver fi_cq_read: %s\n", fi_strerror((int)-n));
                exit(1);
            }
            for (ssize_t i = 0; i < n; i++) {
                struct slot *sl = done[i].op_context;
                CHECK(fi_recv(sl->ep, &sl->buf, sizeof sl->buf, NULL, FI_ADDR_UNSPEC, &sl->ctx));
            }
            got += n;
        }
        if (job_phase_done(up)) exit(1);
    }
    exit(0);
}

/* The sender: one endpoint, the receivers' names in its AV. */
struct sender {
    struct fid_ep *ep;
    struct fid_cq *cq;
    struct fid_av *av;
    fi_addr_t *to;
};

static int take_name(void *ctx, int peer, const uint8_t *name, uint32_t len) {
    (void)len;
    struct sender *s = ctx;
    return fi_av_insert(s->av, name, 1, &s->to[peer], 0, NULL) == 1 ? 0 : -1;
}

static void sender_progress(void *ctx) {
    struct sender *s = ctx;
    struct fi_cq_entry done[64];
    (void)fi_cq_read(s->cq, done, 64);
}

static int sender_send(void *ctx, int peer) {
    struct sender *s = ctx;
    static const uint64_t payload = 0x5eed;
    for (;;) {
        const ssize_t rc = fi_inject(s->ep, &payload, sizeof payload, s->to[peer]);
        if (rc == 0) return 0;
        if (rc != -FI_EAGAIN) {
            fprintf(stderr, "many_peers: fi_inject: %s\n", fi_strerror((int)-rc));
            return -1;
        }
        sender_progress(s);
    }
}

int main(int argc, char **argv) {
    struct job j;
    const int rc = job_start(&j, argc, argv, "many_peers", receiver);
    if (rc != 0) return rc;
    open_domain();
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .size = 4096};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)j.peers};
    struct sender s = {0};
    CHECK(fi_cq_open(domain, &cq_attr, &s.cq, NULL));
    CHECK(fi_av_open(domain, &av_attr, &s.av, NULL));
    s.ep = open_ep(s.cq, s.av);
    s.to = calloc((size_t)j.peers, sizeof *s.to);
    if (job_names(&j, take_name, &s) != 0) return 1;
    /* Connections come with the first sends (phase 0). */
    const struct job_sender ops = {NULL, sender_send, sender_progress, &s};
    if (job_run(&j, &ops) != 0) return 1;
    fi_close(&s.ep->fid);
    fi_close(&s.av->fid);
    fi_close(&s.cq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    return 0;
}
