/* Connection setup of connected endpoints (FI_EP_MSG): how long fi_connect takes to
 * FI_CONNECTED at the client, the server accepting at once, over `rounds` connections made one
 * after another on 127.0.0.1 (each endpoint opened, connected, shut down and closed). Prints
 * the fastest and the median round in microseconds. Plain C and the public API, so that
 * scripts/bench-msg.sh builds it once against ufi and once against Debian's libfabric
 * (provider tcp) and compares the two in one run. A benchmark, not a test.
 *   msg_connect [rounds [provider]]      (provider: ufi when not given)
 */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime, under -std=c11 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                         \
    do {                                                                                    \
        int rc_ = (int)(call);                                                              \
        if (rc_ < 0) {                                                                      \
            fprintf(stderr, "msg_connect: %s: %s (%d)\n", #call, fi_strerror(-rc_), rc_); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static const char *g_provider = "ufi";

static struct fi_info *hints_msg(void) {
    struct fi_info *h = fi_allocinfo();
    h->ep_attr->type = FI_EP_MSG;
    h->caps = FI_MSG;
    h->mode = ~0ULL;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->fabric_attr->prov_name = strdup(g_provider);
    return h;
}

static uint32_t next_event(struct fid_eq *eq, struct fi_eq_cm_entry *entry);

/* Who waits for what, for the messages of next_event. */
static char waiting_for[64] = "";
/* Read while waiting for an event: libfabric's tcp provider sees a peer's disconnect only when
 * its data path makes progress (a server that only reads the EQ never gets FI_SHUTDOWN). */
static struct fid_cq *progress_cq = NULL;

/* The next event, which must be `want` (else a message and exit). */
static void expect_event(struct fid_eq *eq, struct fi_eq_cm_entry *entry, uint32_t want,
                         const char *who, int round) {
    snprintf(waiting_for, sizeof waiting_for, "%s, round %d, waiting for event %u", who, round,
             want);
    uint32_t got = next_event(eq, entry);
    if (got == want) return;
    fprintf(stderr, "msg_connect: %s, round %d: event %u where %u was due\n", who, round, got,
            want);
    exit(1);
}

/* The next event, spinning on fi_eq_read (as a latency-minded application does); exits on an
 * error event or after 10 s. */
static uint32_t next_event(struct fid_eq *eq, struct fi_eq_cm_entry *entry) {
    uint32_t event = 0;
    double end = now_us() + 10e6;
    for (;;) {
        ssize_t rc = fi_eq_read(eq, &event, entry, sizeof *entry, 0);
        if (rc > 0) return event;
        if (progress_cq != NULL) {
            struct fi_cq_entry completion;
            ssize_t n = fi_cq_read(progress_cq, &completion, 1);
            if (n != -FI_EAGAIN) {
                fprintf(stderr, "msg_connect: %s: fi_cq_read gave %zd\n", waiting_for, n);
                exit(1);
            }
        }
        if (rc == -FI_EAVAIL) {
            struct fi_eq_err_entry err;
            memset(&err, 0, sizeof err);
            fi_eq_readerr(eq, &err, 0);
            fprintf(stderr, "msg_connect: %s: error event: %s\n", waiting_for,
                    fi_strerror(err.err));
            exit(1);
        }
        if (rc != -FI_EAGAIN) CHECK(rc);
        if (now_us() > end) {
            fprintf(stderr, "msg_connect: %s: no event within 10 s\n", waiting_for);
            exit(1);
        }
    }
}

static void open_ep(struct fid_domain *domain, struct fi_info *info, struct fid_eq *eq,
                    struct fid_cq *cq, struct fid_ep **ep) {
    CHECK(fi_endpoint(domain, info, ep, NULL));
    CHECK(fi_ep_bind(*ep, &eq->fid, 0));
    CHECK(fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_enable(*ep));
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void server(int rounds, int out) {
    struct fi_info *hints = hints_msg(), *info = NULL;
    CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, hints, &info));
    struct fid_fabric *fabric;
    struct fid_eq *eq;
    struct fid_pep *pep;
    struct fid_domain *domain = NULL;
    struct fid_cq *cq = NULL;
    struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK(fi_eq_open(fabric, &eq_attr, &eq, NULL));
    CHECK(fi_passive_ep(fabric, info, &pep, NULL));
    CHECK(fi_pep_bind(pep, &eq->fid, 0));
    CHECK(fi_listen(pep));
    struct sockaddr_in sa;
    size_t len = sizeof sa;
    CHECK(fi_getname(&pep->fid, &sa, &len));
    uint16_t port = ntohs(sa.sin_port);
    if (write(out, &port, sizeof port) != sizeof port) exit(1);
    /* Requests that came while an earlier connection was still open: events of different
     * fids are not ordered (the next client's FI_CONNREQ may come before this connection's
     * FI_CONNECTED or FI_SHUTDOWN, with ufi and libfabric's tcp alike), so a request waits its
     * turn here, as in any server that takes one connection at a time. */
    struct fi_info **pending = calloc((size_t)rounds, sizeof *pending);
    int head = 0, tail = 0;
    double *accept_us = calloc((size_t)rounds, sizeof *accept_us);
    if (pending == NULL || accept_us == NULL) exit(1);
    for (int i = 0; i < rounds; ++i) {
        struct fi_eq_cm_entry entry;
        struct fi_info *request;
        if (head < tail) {
            request = pending[head++];
        } else {
            expect_event(eq, &entry, FI_CONNREQ, "server", i);
            request = entry.info;
        }
        if (domain == NULL) {
            struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
            CHECK(fi_domain(fabric, request, &domain, NULL));
            CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
            progress_cq = cq;
        }
        struct fid_ep *ep;
        double t0 = now_us();
        open_ep(domain, request, eq, cq, &ep);
        CHECK(fi_accept(ep, NULL, 0));
        accept_us[i] = now_us() - t0;
        fi_freeinfo(request);
        /* This connection's own events come in order: FI_CONNECTED, then the client's
         * FI_SHUTDOWN. */
        const uint32_t due[2] = {FI_CONNECTED, FI_SHUTDOWN};
        for (int seen = 0; seen < 2;) {
            snprintf(waiting_for, sizeof waiting_for, "server, round %d, waiting for event %u",
                     i, due[seen]);
            uint32_t got = next_event(eq, &entry);
            if (got == FI_CONNREQ && tail < rounds) {
                pending[tail++] = entry.info;
                continue;
            }
            if (got != due[seen] || entry.fid != &ep->fid) {
                fprintf(stderr, "msg_connect: server, round %d: event %u where %u was due\n",
                        i, got, due[seen]);
                exit(1);
            }
            ++seen;
        }
        CHECK(fi_close(&ep->fid));
    }
    free(pending);
    qsort(accept_us, (size_t)rounds, sizeof *accept_us, by_value);
    fprintf(stderr, "%s: server, fi_endpoint to fi_accept: median %.1f us\n",
            info->fabric_attr->prov_name, accept_us[rounds / 2]);
    free(accept_us);
    fi_close(&pep->fid);
    fi_close(&cq->fid);
    fi_close(&domain->fid);
    fi_close(&eq->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (argc > 2) g_provider = argv[2];
    if (rounds <= 0) rounds = 200;
    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        alarm(120);
        server(rounds, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    uint16_t port = 0;
    if (read(fds[0], &port, sizeof port) != sizeof port) return 1;
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    struct fi_info *hints = hints_msg(), *info = NULL;
    CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", service, 0, hints, &info));
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *eq;
    struct fid_cq *cq;
    struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK(fi_domain(fabric, info, &domain, NULL));
    CHECK(fi_eq_open(fabric, &eq_attr, &eq, NULL));
    CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
    progress_cq = cq;
    double *us = calloc((size_t)rounds, sizeof *us);
    for (int i = 0; i < rounds; ++i) {
        struct fid_ep *ep;
        struct fi_eq_cm_entry entry;
        open_ep(domain, info, eq, cq, &ep);
        double t0 = now_us();
        CHECK(fi_connect(ep, info->dest_addr, NULL, 0));
        expect_event(eq, &entry, FI_CONNECTED, "client", i);
        us[i] = now_us() - t0;
        CHECK(fi_shutdown(ep, 0));
        /* The local FI_SHUTDOWN (ufi and libfabric's tcp both report it), so that the next
         * round's first event is its own. */
        expect_event(eq, &entry, FI_SHUTDOWN, "client", i);
        CHECK(fi_close(&ep->fid));
    }
    int status = 0;
    waitpid(child, &status, 0);
    qsort(us, (size_t)rounds, sizeof *us, by_value);
    printf("%s: %d connections: fastest %.1f us, median %.1f us\n", info->fabric_attr->prov_name,
           rounds, us[0], us[rounds / 2]);
    free(us);
    fi_close(&cq->fid);
    fi_close(&eq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
