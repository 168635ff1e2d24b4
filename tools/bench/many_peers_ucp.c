/* The UCP anchor of many_peers.c, in the same arrangement: one sender worker with an endpoint
 * to each of P receiver workers spread over R forked processes (worker addresses over pipes),
 * 8-byte tagged sends (ucp_tag_send_nbx) round-robin, receivers keeping tagged receives
 * posted (reposted from their callbacks) and progressing their workers in turn. Measures the
 * sender's resident set and /dev/shm bytes per connected peer (endpoints created and one
 * message sent to each) and the message rate with 1 peer and with P. The same phases, shares
 * and output line as many_peers, so scripts/bench-peers.sh prints them side by side.
 *
 *   many_peers_ucp P [R processes, default 2] [messages, default 1000000]
 * A program, never a test. UCX_TLS / UCX_NET_DEVICES choose its transports (run with
 * UCX_NET_DEVICES=lo: traffic stays on this host). */
#define _GNU_SOURCE
#include <ucp/api/ucp.h>

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
#define POSTED 32
#define NAME_MAX_BYTES 4096

#define CHECK(call)                                                                         \
    do {                                                                                    \
        ucs_status_t st_ = (call);                                                          \
        if (st_ != UCS_OK) {                                                                \
            fprintf(stderr, "many_peers_ucp %d: %s:%d: %s: %s\n", (int)getpid(), __FILE__,   \
                    __LINE__, #call, ucs_status_string(st_));                               \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static ucp_context_h context;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void init_context(void) {
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_TAG};
    ucp_config_t *config = NULL;
    CHECK(ucp_config_read(NULL, NULL, &config));
    CHECK(ucp_init(&p, config, &context));
    ucp_config_release(config);
}

static ucp_worker_h open_worker(void) {
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucp_worker_h w = NULL;
    CHECK(ucp_worker_create(context, &wp, &w));
    return w;
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

/* One posted receive; its callback counts it and posts it again. */
struct slot {
    ucp_worker_h worker;
    uint64_t buf;
};
static int64_t received;

static void post(struct slot *s);

static void on_recv(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                    void *user_data) {
    (void)info;
    if (status == UCS_OK) received++;
    ucp_request_free(request);
    if (status == UCS_OK) post(user_data);
}

static void post(struct slot *s) {
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                             .cb.recv = on_recv,
                             .user_data = s};
    void *req = ucp_tag_recv_nbx(s->worker, &s->buf, sizeof s->buf, 0, ~(ucp_tag_t)0, &p);
    if (UCS_PTR_IS_ERR(req)) {
        fprintf(stderr, "many_peers_ucp: ucp_tag_recv_nbx: %s\n",
                ucs_status_string(UCS_PTR_STATUS(req)));
        exit(1);
    }
}

static void receiver(int count, int up, int down, int phases) {
    init_context();
    ucp_worker_h *workers = calloc((size_t)count, sizeof *workers);
    struct slot *slots = calloc((size_t)count * POSTED, sizeof *slots);
    for (int w = 0; w < count; w++) {
        workers[w] = open_worker();
        ucp_address_t *addr = NULL;
        size_t len = 0;
        CHECK(ucp_worker_get_address(workers[w], &addr, &len));
        uint32_t l = (uint32_t)len;
        if (write_all(up, &l, sizeof l) || write_all(up, addr, len)) exit(1);
        ucp_worker_release_address(workers[w], addr);
        for (int s = 0; s < POSTED; s++) {
            slots[w * POSTED + s].worker = workers[w];
            post(&slots[w * POSTED + s]);
        }
    }
    for (int ph = 0; ph < phases; ph++) {
        int64_t expected = 0;
        if (read_all(down, &expected, sizeof expected)) exit(1);
        const int64_t target = received + expected;
        while (received < target) {
            for (int w = 0; w < count; w++) ucp_worker_progress(workers[w]);
        }
        if (write_all(up, "d", 1)) exit(1);
    }
    _exit(0);  /* (the sender's endpoints may still be connected: no orderly teardown) */
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
        fprintf(stderr, "usage: many_peers_ucp P [R <= %d] [messages]\n", MAX_PROCS);
        return 2;
    }
    if (procs > peers) procs = peers;
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
    init_context();
    ucp_worker_h worker = open_worker();
    uint8_t **names = calloc((size_t)peers, sizeof *names);
    int *owner = calloc((size_t)peers, sizeof *owner);
    for (int c = 0; c < procs; c++) {
        for (int e = 0; e < per[c]; e++) {
            uint32_t l = 0;
            names[first[c] + e] = malloc(NAME_MAX_BYTES);
            if (read_all(up[c][0], &l, sizeof l) || l > NAME_MAX_BYTES ||
                read_all(up[c][0], names[first[c] + e], l)) {
                fprintf(stderr, "many_peers_ucp: a receiver process did not send its addresses\n");
                return 1;
            }
            owner[first[c] + e] = c;
        }
    }
    ucp_ep_h *to = calloc((size_t)peers, sizeof *to);
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
            /* Connecting is part of what a peer costs: endpoints made here, as ufi's AV insert
             * and first send make its connections. */
            for (int p = 0; p < peers; p++) {
                ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                                      .address = (const ucp_address_t *)names[p]};
                CHECK(ucp_ep_create(worker, &ep, &to[p]));
            }
        }
        static uint64_t payload = 0x5eed;
        const double t0 = now();
        for (long i = 0; i < n; i++) {
            ucp_request_param_t p = {.op_attr_mask = 0};
            void *req = ucp_tag_send_nbx(to[i % spread], &payload, sizeof payload, 0, &p);
            if (UCS_PTR_IS_ERR(req)) {
                fprintf(stderr, "many_peers_ucp: ucp_tag_send_nbx: %s\n",
                        ucs_status_string(UCS_PTR_STATUS(req)));
                return 1;
            }
            if (req != NULL) {  /* queued: progress until it leaves, as fi_inject's EAGAIN */
                while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(worker);
                ucp_request_free(req);
            }
        }
        int waiting = 0, told[MAX_PROCS] = {0};
        for (int c = 0; c < procs; c++) waiting += share[c] > 0;
        const double limit = now() + 120;
        while (waiting > 0) {
            ucp_worker_progress(worker);
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
                fprintf(stderr, "many_peers_ucp: phase %d: receivers missing messages after 120 s\n", ph);
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
    return 0;  /* (endpoints and worker left to exit: the receivers are gone) */
}
