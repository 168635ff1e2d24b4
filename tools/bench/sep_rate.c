/* Message rate of threads on separate contexts: each of T threads (1 or 2) sends 8-byte tagged
 * injects from one transmit context to one receive context and receives them there, with
 * receives kept posted, in one process. Mode "sep": the contexts of two scalable endpoints
 * (fi_scalable_ep, fi_tx_context / fi_rx_context, fi_rx_addr); mode "ep": a pair of ordinary
 * endpoints per thread, the baseline of nothing shared. Two threads on a scalable endpoint's
 * contexts running as fast as two on separate endpoints show that the contexts share no lock.
 * Mode "safe": the threads send through one FI_THREAD_SAFE endpoint (one transmit CQ), each to
 * its own receiving endpoint; mode "dom": each thread has its own FI_THREAD_DOMAIN domain with
 * its own pair (issue 35's comparison: a shared FI_THREAD_SAFE endpoint against endpoints that
 * need no lock at all).
 *
 *   sep_rate [threads 1|2] [sep|ep|safe|dom] [messages per thread]
 * Prints one line: mode, threads, messages, seconds, aggregate million messages per second.
 * (A program, never a test: nothing asserts a time.) Plain C, public API. */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_T 2
#define WINDOW 64

#define CHECK(call)                                                                    \
    do {                                                                               \
        int rc_ = (int)(call);                                                         \
        if (rc_ != 0) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, fi_strerror(-rc_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static struct fid_domain *domain;
static struct fi_info *info;
static int nthreads = 1;
static long messages = 200000;
enum mode { SEP, EP, SAFE, DOM };
static enum mode mode = SEP;
static struct fid_fabric *fabric;

struct lane {
    struct fid_ep *tx, *rx;
    struct fid_cq *txcq, *rxcq;
    fi_addr_t to;
    double seconds;
    long received;
};
static struct lane lanes[MAX_T];
static pthread_barrier_t start;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct fid_cq *open_cq(void) {
    struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 4096};
    struct fid_cq *cq;
    CHECK(fi_cq_open(domain, &attr, &cq, NULL));
    return cq;
}

static void getname(fid_t fid, void *buf, size_t *len) {
    CHECK(fi_getname(fid, buf, len));
}

/* Two scalable endpoints: A's transmit context t reaches B's receive context t. */
static void open_seps(void) {
    struct fid_ep *sep[2];
    struct fid_av *av[2];
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .rx_ctx_bits = 1};
    for (int s = 0; s < 2; ++s) {
        CHECK(fi_av_open(domain, &av_attr, &av[s], NULL));
        CHECK(fi_scalable_ep(domain, info, &sep[s], NULL));
        CHECK(fi_scalable_ep_bind(sep[s], &av[s]->fid, 0));
    }
    for (int t = 0; t < MAX_T; ++t) {
        struct fid_ep *ctx;
        /* (Every context must be open and enabled for the name: both sides get both kinds.) */
        for (int s = 0; s < 2; ++s) {
            struct fid_cq *cq = open_cq();
            CHECK(fi_tx_context(sep[s], t, NULL, &ctx, NULL));
            CHECK(fi_ep_bind(ctx, &cq->fid, FI_TRANSMIT));
            CHECK(fi_enable(ctx));
            if (s == 0) {
                lanes[t].tx = ctx;
                lanes[t].txcq = cq;
            }
            cq = open_cq();
            CHECK(fi_rx_context(sep[s], t, NULL, &ctx, NULL));
            CHECK(fi_ep_bind(ctx, &cq->fid, FI_RECV));
            CHECK(fi_enable(ctx));
            if (s == 1) {
                lanes[t].rx = ctx;
                lanes[t].rxcq = cq;
            }
        }
    }
    for (int s = 0; s < 2; ++s) CHECK(fi_enable(sep[s]));
    char name[8192];
    size_t len = sizeof name;
    getname(&sep[1]->fid, name, &len);
    fi_addr_t b;
    if (fi_av_insert(av[0], name, 1, &b, 0, NULL) != 1) exit(1);
    for (int t = 0; t < MAX_T; ++t) lanes[t].to = fi_rx_addr(b, t, 1);
}

/* A pair of ordinary endpoints for thread t, on domain d. */
static void open_pair(int t, struct fid_domain *d) {
    struct fid_av *av;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    CHECK(fi_av_open(d, &av_attr, &av, NULL));
    struct fid_ep *ep[2];
    struct fid_cq *cq[2];
    for (int s = 0; s < 2; ++s) {
        struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 4096};
        CHECK(fi_cq_open(d, &attr, &cq[s], NULL));
        CHECK(fi_endpoint(d, info, &ep[s], NULL));
        CHECK(fi_ep_bind(ep[s], &av->fid, 0));
        CHECK(fi_ep_bind(ep[s], &cq[s]->fid, FI_TRANSMIT | FI_RECV));
        CHECK(fi_enable(ep[s]));
    }
    char name[256];
    size_t len = sizeof name;
    getname(&ep[1]->fid, name, &len);
    if (fi_av_insert(av, name, 1, &lanes[t].to, 0, NULL) != 1) exit(1);
    lanes[t].tx = ep[0];
    lanes[t].txcq = cq[0];
    lanes[t].rx = ep[1];
    lanes[t].rxcq = cq[1];
}

static void open_eps(void) {
    for (int t = 0; t < MAX_T; ++t) open_pair(t, domain);
}

/* Each thread its own FI_THREAD_DOMAIN domain (info's threading, set in main). */
static void open_domains(void) {
    for (int t = 0; t < MAX_T; ++t) {
        struct fid_domain *d;
        CHECK(fi_domain(fabric, info, &d, NULL));
        open_pair(t, d);
    }
}

/* One sending endpoint for every thread (FI_THREAD_SAFE), a receiving endpoint per thread. */
static void open_shared(void) {
    struct fid_av *av;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    CHECK(fi_av_open(domain, &av_attr, &av, NULL));
    struct fid_cq *txcq = open_cq();
    struct fid_ep *tx;
    CHECK(fi_endpoint(domain, info, &tx, NULL));
    CHECK(fi_ep_bind(tx, &av->fid, 0));
    CHECK(fi_ep_bind(tx, &txcq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_enable(tx));
    for (int t = 0; t < MAX_T; ++t) {
        struct fid_av *rx_av;
        CHECK(fi_av_open(domain, &av_attr, &rx_av, NULL));
        struct fid_cq *cq = open_cq();
        struct fid_ep *rx;
        CHECK(fi_endpoint(domain, info, &rx, NULL));
        CHECK(fi_ep_bind(rx, &rx_av->fid, 0));
        CHECK(fi_ep_bind(rx, &cq->fid, FI_TRANSMIT | FI_RECV));
        CHECK(fi_enable(rx));
        char name[256];
        size_t len = sizeof name;
        getname(&rx->fid, name, &len);
        if (fi_av_insert(av, name, 1, &lanes[t].to, 0, NULL) != 1) exit(1);
        lanes[t].tx = tx;
        lanes[t].txcq = txcq;
        lanes[t].rx = rx;
        lanes[t].rxcq = cq;
    }
}

static void *run(void *arg) {
    struct lane *l = arg;
    static __thread uint64_t slots[WINDOW];
    struct fi_cq_tagged_entry e[16];
    uint64_t value = 0;
    long sent = 0;
    for (int i = 0; i < WINDOW; ++i) {
        CHECK(fi_trecv(l->rx, &slots[i], sizeof slots[i], NULL, FI_ADDR_UNSPEC, 0, ~0ULL,
                       (void *)(uintptr_t)i));
    }
    pthread_barrier_wait(&start);
    const double t0 = now();
    while (l->received < messages) {
        while (sent < messages && sent - l->received < WINDOW) {
            value = (uint64_t)sent;
            const ssize_t rc = fi_tinject(l->tx, &value, sizeof value, l->to, 1);
            if (rc == -FI_EAGAIN) break;
            CHECK(rc);
            ++sent;
        }
        (void)fi_cq_read(l->txcq, e, 0);
        const ssize_t n = fi_cq_read(l->rxcq, e, 16);
        for (ssize_t i = 0; i < n; ++i) {
            ++l->received;
            CHECK(fi_trecv(l->rx, &slots[(uintptr_t)e[i].op_context], sizeof(uint64_t), NULL,
                           FI_ADDR_UNSPEC, 0, ~0ULL, e[i].op_context));
        }
    }
    l->seconds = now() - t0;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) nthreads = atoi(argv[1]);
    if (argc > 2) {
        mode = strcmp(argv[2], "ep") == 0     ? EP
               : strcmp(argv[2], "safe") == 0 ? SAFE
               : strcmp(argv[2], "dom") == 0  ? DOM
                                              : SEP;
    }
    if (argc > 3) messages = atol(argv[3]);
    if (nthreads < 1 || nthreads > MAX_T) return 2;
    struct fi_info *hints = fi_allocinfo();
    hints->caps = FI_TAGGED | (mode == SEP || mode == EP ? FI_NAMED_RX_CTX : 0);
    hints->ep_attr->type = FI_EP_RDM;
    if (mode == SEP || mode == EP) {  /* (as before: ep is sep's baseline) */
        hints->ep_attr->tx_ctx_cnt = MAX_T;
        hints->ep_attr->rx_ctx_cnt = MAX_T;
    }
    if (mode == SAFE) hints->domain_attr->threading = FI_THREAD_SAFE;
    if (mode == DOM) hints->domain_attr->threading = FI_THREAD_DOMAIN;
    CHECK(fi_getinfo(FI_VERSION(1, 18), NULL, NULL, 0, hints, &info));
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    if (mode == DOM) {
        open_domains();
    } else {
        CHECK(fi_domain(fabric, info, &domain, NULL));
        if (mode == SEP) open_seps();
        else if (mode == EP) open_eps();
        else open_shared();
    }
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    pthread_t th[MAX_T];
    for (int t = 0; t < nthreads; ++t) pthread_create(&th[t], NULL, run, &lanes[t]);
    double slowest = 0;
    for (int t = 0; t < nthreads; ++t) {
        pthread_join(th[t], NULL);
        if (lanes[t].seconds > slowest) slowest = lanes[t].seconds;
    }
    static const char *const names[] = {"sep", "ep", "safe", "dom"};
    printf("%s threads %d messages %ld seconds %.3f rate %.2f Mmsg/s\n", names[mode],
           nthreads, messages * nthreads, slowest, messages * nthreads / slowest / 1e6);
    /* (The process exits: ufi closes nothing for it, the OS does.) */
    return 0;
}
