/* Many peers: one sender endpoint and P receiver endpoints spread over R processes of this
 * host (forked here; names go over pipes). Measures, in one run:
 *   - the sender's memory per connected peer: its resident set, its heap (malloc) and the bytes in /dev/shm,
 *     before and after it has sent one message to every peer (the receivers are idle then,
 *     their endpoints opened before), divided by P;
 *   - the 8-byte message rate (fi_inject, round-robin over the peers) with 1 peer and with P
 *     peers, each over the same number of messages, and their ratio.
 * Every receiver endpoint shares its process's one CQ and keeps receives posted; a phase ends
 * when every receiver process has counted all the messages meant for it (so the rate includes
 * the receivers keeping up).
 *
 *   many_peers P [R processes, default 2] [messages, default 1000000]
 * Prints one line of key=value figures. A program, never a test: nothing asserts a time.
 * Plain C, public API; run with UFI_NET_DEVICES=lo (traffic stays on this host). */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 16
/* Receives kept posted per receiver endpoint, as many as the UCP anchor keeps (a larger set
 * only spreads the receivers' working set: 256 per endpoint at 256 endpoints halved the rate).
 * Completions are read in large batches (each read progresses every endpoint on the CQ) and
 * reposted after; the UCP anchor reposts from its callbacks. */
#define POSTED 32
#define BATCH 4096
#define NAME_MAX_BYTES 1024

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

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n) {
    char *c = p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
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
        uint8_t name[NAME_MAX_BYTES];
        size_t len = sizeof name;
        CHECK(fi_getname(&ep->fid, name, &len));
        uint32_t l = (uint32_t)len;
        if (write_all(up, &l, sizeof l) || write_all(up, name, len)) exit(1);
    }
    for (int ph = 0; ph < phases; ph++) {
        int64_t expected = 0;
        if (read_all(down, &expected, sizeof expected)) exit(1);
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
        if (write_all(up, "d", 1)) exit(1);
    }
    exit(0);
}

/* The process's memory from /proc/self/smaps_rollup (bytes): resident, proportional (shared
 * pages divided among the processes mapping them) and private (this process's alone). A peer's
 * shared-memory segment the sender maps and touches counts in its resident set in full,
 * though the pages are the peer's: private and proportional say what a peer really costs. */
struct mem {
    long rss, pss, priv;
};

static struct mem mem_now(void) {
    struct mem m = {0, 0, 0};
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (f == NULL) return m;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        long kb = 0;
        if (sscanf(line, "Rss: %ld kB", &kb) == 1) m.rss = kb * 1024;
        else if (sscanf(line, "Pss: %ld kB", &kb) == 1) m.pss = kb * 1024;
        else if (sscanf(line, "Private_Clean: %ld kB", &kb) == 1) m.priv += kb * 1024;
        else if (sscanf(line, "Private_Dirty: %ld kB", &kb) == 1) m.priv += kb * 1024;
    }
    fclose(f);
    return m;
}

static long shm_used_bytes(void) {
    struct statvfs s;
    if (statvfs("/dev/shm", &s) != 0) return 0;
    return (long)((s.f_blocks - s.f_bfree) * s.f_frsize);
}

int main(int argc, char **argv) {
    const int peers = argc > 1 ? atoi(argv[1]) : 16;
    int procs = argc > 2 ? atoi(argv[2]) : 2;
    const long messages = argc > 3 ? atol(argv[3]) : 1000000;
    if (peers < 1 || procs < 1 || procs > MAX_PROCS || messages < 1) {
        fprintf(stderr, "usage: many_peers P [R <= %d] [messages]\n", MAX_PROCS);
        return 2;
    }
    if (procs > peers) procs = peers;
    /* Phases: 0 warm-up (one message to each peer), 1 rate to peer 0, 2 rate to every peer. */
    const int phases = 3;
    int up[MAX_PROCS][2], down[MAX_PROCS][2], per[MAX_PROCS], first[MAX_PROCS];
    pid_t kids[MAX_PROCS];
    for (int c = 0, at = 0; c < procs; c++) {
        per[c] = peers / procs + (c < peers % procs);
        first[c] = at;
        at += per[c];
        if (pipe(up[c]) || pipe(down[c])) return 1;
        kids[c] = fork();
        if (kids[c] < 0) return 1;
        if (kids[c] == 0) {
            close(up[c][0]);
            close(down[c][1]);
            receiver(per[c], up[c][1], down[c][0], phases);
        }
        close(up[c][1]);
        close(down[c][0]);
    }
    open_domain();
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .size = 4096};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)peers};
    struct fid_cq *cq = NULL;
    struct fid_av *av = NULL;
    CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
    CHECK(fi_av_open(domain, &av_attr, &av, NULL));
    struct fid_ep *ep = open_ep(cq, av);
    fi_addr_t *to = calloc((size_t)peers, sizeof *to);
    int *owner = calloc((size_t)peers, sizeof *owner);
    for (int c = 0; c < procs; c++) {
        for (int e = 0; e < per[c]; e++) {
            uint32_t l = 0;
            uint8_t name[NAME_MAX_BYTES];
            if (read_all(up[c][0], &l, sizeof l) || l > sizeof name || read_all(up[c][0], name, l)) {
                fprintf(stderr, "many_peers: a receiver process did not send its names\n");
                return 1;
            }
            if (fi_av_insert(av, name, 1, &to[first[c] + e], 0, NULL) != 1) return 1;
            owner[first[c] + e] = c;
        }
    }
    double seconds[3] = {0};
    struct mem before = {0, 0, 0}, after = {0, 0, 0};
    long shm_before = 0, shm_after = 0;
    size_t heap_before = 0, heap_after = 0;
    for (int ph = 0; ph < phases; ph++) {
        const long n = ph == 0 ? peers : messages;
        const int spread = ph == 1 ? 1 : peers;
        int64_t share[MAX_PROCS] = {0};
        for (int p = 0; p < spread; p++) share[owner[p]] += n / spread + (p < n % spread);
        for (int c = 0; c < procs; c++) {
            if (write_all(down[c][1], &share[c], sizeof share[c])) return 1;
        }
        if (ph == 0) {
            before = mem_now();
            shm_before = shm_used_bytes();
            heap_before = mallinfo2().uordblks;
        }
        const uint64_t payload = 0x5eed;
        const double t0 = now();
        struct fi_cq_entry done[64];
        for (long i = 0; i < n;) {
            const ssize_t rc = fi_inject(ep, &payload, sizeof payload, to[i % spread]);
            if (rc == 0) {
                i++;
            } else if (rc == -FI_EAGAIN) {
                (void)fi_cq_read(cq, done, 64);
            } else {
                fprintf(stderr, "many_peers: fi_inject: %s\n", fi_strerror((int)-rc));
                return 1;
            }
        }
        /* Until every receiver process has counted its share (the sender keeps progressing:
         * under manual progress its last injects may still be queued here). */
        int waiting = 0;
        for (int c = 0; c < procs; c++) waiting += share[c] > 0;
        int told[MAX_PROCS] = {0};
        const double limit = now() + 120;
        while (waiting > 0) {
            (void)fi_cq_read(cq, done, 64);
            for (int c = 0; c < procs; c++) {
                if (share[c] == 0 || told[c]) continue;
                struct pollfd pfd = {.fd = up[c][0], .events = POLLIN};
                if (poll(&pfd, 1, 0) == 1) {
                    char d = 0;
                    if (read_all(up[c][0], &d, 1) || d != 'd') return 1;
                    told[c] = 1;
                    waiting--;
                }
            }
            if (now() > limit) {
                fprintf(stderr, "many_peers: phase %d: receivers missing messages after 120 s\n", ph);
                for (int c = 0; c < procs; c++) kill(kids[c], SIGKILL);
                return 1;
            }
        }
        seconds[ph] = now() - t0;
        if (ph == 0) {
            after = mem_now();
            shm_after = shm_used_bytes();
            heap_after = mallinfo2().uordblks;
        }
        /* Receivers with no share in this phase still wait for a 'd' to be read. */
        for (int c = 0; c < procs; c++) {
            if (share[c] != 0) continue;
            char d = 0;
            if (read_all(up[c][0], &d, 1) || d != 'd') return 1;
        }
    }
    for (int c = 0; c < procs; c++) waitpid(kids[c], NULL, 0);
    const double rate1 = messages / seconds[1] / 1e6, rateP = messages / seconds[2] / 1e6;
    printf("peers=%d procs=%d messages=%ld connect_all_ms=%.2f rss_per_peer_bytes=%.0f "
           "pss_per_peer_bytes=%.0f private_per_peer_bytes=%.0f "
           "heap_per_peer_bytes=%.0f shm_per_peer_bytes=%.0f rate_1_peer_mmsgs=%.3f rate_%d_peers_mmsgs=%.3f ratio=%.3f\n",
           peers, procs, messages, seconds[0] * 1e3, (double)(after.rss - before.rss) / peers,
           (double)(after.pss - before.pss) / peers, (double)(after.priv - before.priv) / peers,
           ((double)heap_after - (double)heap_before) / peers, (double)(shm_after - shm_before) / peers, rate1, peers, rateP, rateP / rate1);
    fi_close(&ep->fid);
    fi_close(&av->fid);
    fi_close(&cq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    return 0;
}
