/* The arrangement many_peers.c (ufi) and many_peers_ucp.c (its UCP anchor) share: receiver
 * processes forked with pipes, their endpoint names collected, and the sender's three phases
 * (0: one message to every peer, its memory measured around it; 1: the messages to peer 0
 * alone; 2: round-robin over every peer), each ending when every receiver process has counted
 * its share. Each program gives its receiver and its sender's calls; this runs the rest and
 * prints the one line of figures scripts/bench-peers.sh reads. Plain C, header only. */
#pragma once

#define _GNU_SOURCE
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

#define JOB_MAX_PROCS 16
#define JOB_NAME_MAX 4096
#define JOB_PHASES 3

static inline double job_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int job_write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static inline int job_read_all(int fd, void *p, size_t n) {
    char *c = p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* A receiver process's side of the pipes: its names go up, then for each phase it reads how
 * many messages to count, counts them, and says 'd'. */
static inline int job_send_name(int up, const void *name, size_t len) {
    const uint32_t l = (uint32_t)len;
    return job_write_all(up, &l, sizeof l) || job_write_all(up, name, len);
}
static inline int job_phase_share(int down, int64_t *expected) {
    return job_read_all(down, expected, sizeof *expected);
}
static inline int job_phase_done(int up) { return job_write_all(up, "d", 1); }

/* The process's memory from /proc/self/smaps_rollup (bytes): resident, proportional (shared
 * pages divided among the processes mapping them) and private (this process's alone). A peer's
 * shared-memory segment the sender maps and touches counts in its resident set in full,
 * though the pages are the peer's. */
struct job_mem {
    long rss, pss, priv;
    size_t heap;  /* malloc'd bytes in use */
    long shm;     /* bytes used in /dev/shm */
};

static inline struct job_mem job_mem_now(void) {
    struct job_mem m = {0, 0, 0, mallinfo2().uordblks, 0};
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (f != NULL) {
        char line[256];
        while (fgets(line, sizeof line, f) != NULL) {
            long kb = 0;
            if (sscanf(line, "Rss: %ld kB", &kb) == 1) m.rss = kb * 1024;
            else if (sscanf(line, "Pss: %ld kB", &kb) == 1) m.pss = kb * 1024;
            else if (sscanf(line, "Private_Clean: %ld kB", &kb) == 1) m.priv += kb * 1024;
            else if (sscanf(line, "Private_Dirty: %ld kB", &kb) == 1) m.priv += kb * 1024;
        }
        fclose(f);
    }
    struct statvfs s;
    if (statvfs("/dev/shm", &s) == 0) m.shm = (long)((s.f_blocks - s.f_bfree) * s.f_frsize);
    return m;
}

struct job {
    int peers, procs;
    long messages;
    int up[JOB_MAX_PROCS][2], down[JOB_MAX_PROCS][2];
    int per[JOB_MAX_PROCS], first[JOB_MAX_PROCS];
    pid_t kids[JOB_MAX_PROCS];
    int *owner; /* peer -> receiver process */
};

/* The sender's calls. connect: before phase 0's messages (may be NULL: connections come with
 * the first sends); send: one 8-byte message to `peer`, 0 or -1 (an error, said); progress:
 * drive the sender while it waits. */
struct job_sender {
    int (*connect)(void *ctx);
    int (*send)(void *ctx, int peer);
    void (*progress)(void *ctx);
    void *ctx;
};

/* Parses "P [R] [messages]" and forks the receivers (each runs `receiver` and never
 * returns). 0, or the exit status to return. */
static inline int job_start(struct job *j, int argc, char **argv, const char *program,
                            void (*receiver)(int count, int up, int down, int phases)) {
    j->peers = argc > 1 ? atoi(argv[1]) : 16;
    j->procs = argc > 2 ? atoi(argv[2]) : 2;
    j->messages = argc > 3 ? atol(argv[3]) : 1000000;
    if (j->peers < 1 || j->procs < 1 || j->procs > JOB_MAX_PROCS || j->messages < 1) {
        fprintf(stderr, "usage: %s P [R <= %d] [messages]\n", program, JOB_MAX_PROCS);
        return 2;
    }
    if (j->procs > j->peers) j->procs = j->peers;
    j->owner = calloc((size_t)j->peers, sizeof *j->owner);
    for (int c = 0, at = 0; c < j->procs; c++) {
        j->per[c] = j->peers / j->procs + (c < j->peers % j->procs);
        j->first[c] = at;
        for (int e = 0; e < j->per[c]; e++) j->owner[at + e] = c;
        at += j->per[c];
        if (pipe(j->up[c]) || pipe(j->down[c])) return 1;
        j->kids[c] = fork();
        if (j->kids[c] < 0) return 1;
        if (j->kids[c] == 0) {
            close(j->up[c][0]);
            close(j->down[c][1]);
            receiver(j->per[c], j->up[c][1], j->down[c][0], JOB_PHASES);
            _exit(1);
        }
        close(j->up[c][1]);
        close(j->down[c][0]);
    }
    return 0;
}

/* The receivers' names, peer by peer: take(ctx, peer, name, len) returns 0 or -1. */
static inline int job_names(struct job *j, int (*take)(void *ctx, int peer, const uint8_t *name,
                                                       uint32_t len),
                            void *ctx) {
    static uint8_t name[JOB_NAME_MAX];
    for (int c = 0; c < j->procs; c++) {
        for (int e = 0; e < j->per[c]; e++) {
            uint32_t l = 0;
            if (job_read_all(j->up[c][0], &l, sizeof l) || l > sizeof name ||
                job_read_all(j->up[c][0], name, l)) {
                fprintf(stderr, "many_peers: a receiver process did not send its names\n");
                return -1;
            }
            if (take(ctx, j->first[c] + e, name, l) != 0) return -1;
        }
    }
    return 0;
}

/* Waits, progressing the sender, until every receiver with a share has said 'd'; reads the
 * others' 'd' too. -1 after 120 s (the receivers are killed). */
static inline int job_wait_phase(struct job *j, const int64_t *share, const struct job_sender *s,
                                 int phase) {
    int waiting = 0, told[JOB_MAX_PROCS] = {0};
    for (int c = 0; c < j->procs; c++) waiting += share[c] > 0;
    const double limit = job_now() + 120;
    while (waiting > 0) {
        s->progress(s->ctx);
        for (int c = 0; c < j->procs; c++) {
            if (share[c] == 0 || told[c]) continue;
            struct pollfd pfd = {.fd = j->up[c][0], .events = POLLIN};
            if (poll(&pfd, 1, 0) == 1) {
                char d = 0;
                if (job_read_all(j->up[c][0], &d, 1) || d != 'd') return -1;
                told[c] = 1;
                waiting--;
            }
        }
        if (job_now() > limit) {
            fprintf(stderr, "many_peers: phase %d: receivers missing messages after 120 s\n", phase);
            for (int c = 0; c < j->procs; c++) kill(j->kids[c], SIGKILL);
            return -1;
        }
    }
    for (int c = 0; c < j->procs; c++) {
        if (share[c] != 0) continue;
        char d = 0;
        if (job_read_all(j->up[c][0], &d, 1) || d != 'd') return -1;
    }
    return 0;
}

/* The three phases and the line of figures. 0, or the exit status to return. */
static inline int job_run(struct job *j, const struct job_sender *s) {
    double seconds[JOB_PHASES] = {0};
    struct job_mem before = {0}, after = {0};
    for (int ph = 0; ph < JOB_PHASES; ph++) {
        const long n = ph == 0 ? j->peers : j->messages;
        const int spread = ph == 1 ? 1 : j->peers;
        int64_t share[JOB_MAX_PROCS] = {0};
        for (int p = 0; p < spread; p++) share[j->owner[p]] += n / spread + (p < n % spread);
        for (int c = 0; c < j->procs; c++) {
            if (job_write_all(j->down[c][1], &share[c], sizeof share[c])) return 1;
        }
        if (ph == 0) {
            before = job_mem_now();
            /* Connecting is part of what a peer costs. */
            if (s->connect != NULL && s->connect(s->ctx) != 0) return 1;
        }
        const double t0 = job_now();
        for (long i = 0; i < n; i++) {
            if (s->send(s->ctx, (int)(i % spread)) != 0) return 1;
        }
        /* (under manual progress the last sends may still be queued in the sender) */
        if (job_wait_phase(j, share, s, ph) != 0) return 1;
        seconds[ph] = job_now() - t0;
        if (ph == 0) after = job_mem_now();
    }
    for (int c = 0; c < j->procs; c++) waitpid(j->kids[c], NULL, 0);
    const double per = (double)j->peers;
    const double rate1 = j->messages / seconds[1] / 1e6, rateP = j->messages / seconds[2] / 1e6;
    printf("peers=%d procs=%d messages=%ld connect_all_ms=%.2f rss_per_peer_bytes=%.0f "
           "pss_per_peer_bytes=%.0f private_per_peer_bytes=%.0f heap_per_peer_bytes=%.0f "
           "shm_per_peer_bytes=%.0f rate_1_peer_mmsgs=%.3f rate_%d_peers_mmsgs=%.3f ratio=%.3f\n",
           j->peers, j->procs, j->messages, seconds[0] * 1e3, (after.rss - before.rss) / per,
           (after.pss - before.pss) / per, (after.priv - before.priv) / per,
           ((double)after.heap - (double)before.heap) / per, (after.shm - before.shm) / per,
           rate1, j->peers, rateP, rateP / rate1);
    return 0;
}
