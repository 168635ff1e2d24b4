/* The soak (docs/reliability.md): one long-lived server process and a few client processes
 * that come and go, over whatever transport the environment selects (UFI_TLS). Every client
 * incarnation sends the server a random number of tagged messages of random sizes (40 bytes to
 * --max-size, so eager and rendezvous both), each filled from its (incarnation, sequence) so
 * that the server checks every byte; the server grants credits back, so nothing piles up. Both
 * sides cancel receives at random (some cancels race with a match: the message must then land
 * in the next receive, never twice, never lost) and cancel receives that nothing matches.
 * Incarnations end in one of two ways: cleanly (the client's last message says how many it
 * sent; the server must have received exactly those), or, every third one, killed by the
 * server with SIGKILL at a random moment (what arrived must still be a gap-free run, byte-exact). The server removes
 * each departed client from its AV and starts a new one in its place until --seconds pass.
 *
 * Memory must stay flat: the server samples its RSS and its shared-memory mappings every
 * second. It fails if RSS grows by more than --rss-slack MiB from the end of the first third of
 * the run to the last sample, or if, once every client is gone, it still maps more shared
 * memory than before the first client came, or if a System V segment a client created
 * outlives every process that attached it.
 *
 * Exit 0: all checks held (a summary on stdout); 1: a check failed or something broke (said on
 * stderr). Usage:
 *   soak [--seconds S] [--clients N] [--max-size BYTES] [--seed N] [--rss-slack MIB]
 *        [--report-every S]
 * (the client role is this program exec'd by the server with "client" first). */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Message types, in the tag's top byte. Client to server: HELLO (its name follows the
 * header), DATA, BYE (seq = how many DATA it sent). Server to client: CREDIT (seq = how many
 * more it may send), BYE_ACK, STOP (finish now). NEVER: a tag nobody sends. */
enum { T_HELLO = 1, T_DATA, T_BYE, T_CREDIT, T_BYE_ACK, T_STOP, T_NEVER };
#define TAG(type) ((uint64_t)(type) << 56)
#define TAG_TYPE(tag) ((int)((tag) >> 56))
#define MAGIC 0x534f414bu /* "SOAK" */

struct header {
    uint32_t magic;
    uint32_t slot;
    uint64_t gen;  /* the client incarnation, unique in the run */
    uint64_t seq;
    uint32_t size; /* the whole message, header included */
    uint32_t pad;
};

#define WINDOW 64          /* credits a client starts with, and its sends in flight at most */
#define CREDIT_EVERY 16    /* the server grants credits in steps of this many */
#define SERVER_RECVS 16
#define MAX_CLIENTS 8
#define GEN_RING 64        /* incarnations the server still recognizes */
#define SEQ_WINDOW 256     /* how far ahead of the first missing seq a completion may be */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "soak[%d]: ", (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

#define TRY(call)                                                                      \
    do {                                                                               \
        int rc_ = (int)(call);                                                         \
        if (rc_ != 0) die("%s: %s", #call, fi_strerror(-rc_));                         \
    } while (0)

/* splitmix64: the payload of (gen, seq) and the programs' random choices. */
static uint64_t mix(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t rng_state;
static uint64_t rnd(uint64_t n) { return n ? mix(&rng_state) % n : 0; }

static void fill(unsigned char *buf, uint32_t size, uint64_t gen, uint64_t seq) {
    uint64_t s = gen * 0x100000001b3ull ^ seq;
    for (uint32_t i = sizeof(struct header); i < size; i += 8) {
        uint64_t v = mix(&s);
        uint32_t n = size - i < 8 ? size - i : 8;
        memcpy(buf + i, &v, n);
    }
}
/* The first byte that differs from what fill() wrote, or -1. */
static long check(const unsigned char *buf, uint32_t size, uint64_t gen, uint64_t seq) {
    uint64_t s = gen * 0x100000001b3ull ^ seq;
    for (uint32_t i = sizeof(struct header); i < size; i += 8) {
        uint64_t v = mix(&s);
        uint32_t n = size - i < 8 ? size - i : 8;
        if (memcmp(buf + i, &v, n) != 0) {
            for (uint32_t j = 0; j < n; ++j)
                if (buf[i + j] != ((unsigned char *)&v)[j]) return (long)(i + j);
        }
    }
    return -1;
}

/* Sizes: half small (eager, inline), the rest spread up to max_size (rendezvous). */
static uint32_t random_size(uint32_t max_size) {
    uint64_t r = rnd(100);
    uint32_t lo = sizeof(struct header), hi;
    if (r < 50) hi = 512;
    else if (r < 80) lo = 512, hi = 16384;
    else if (r < 95) lo = 16384, hi = 65536;
    else lo = 65536, hi = max_size;
    if (hi > max_size) hi = max_size;
    if (lo > hi) lo = hi;
    return lo + (uint32_t)rnd(hi - lo + 1);
}

/* ---- fabric setup, both roles ---- */

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_eq *eq;
static struct fid_ep *ep;
static struct fi_info *info;

static void open_fabric(void) {
    struct fi_info *hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    TRY(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
    fi_freeinfo(hints);
    TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
    TRY(fi_domain(fabric, info, &domain, NULL));
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    TRY(fi_av_open(domain, &av_attr, &av, NULL));
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 1024};
    TRY(fi_cq_open(domain, &cq_attr, &cq, NULL));
    struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_NONE};
    TRY(fi_eq_open(fabric, &eq_attr, &eq, NULL));
    TRY(fi_endpoint(domain, info, &ep, NULL));
    TRY(fi_ep_bind(ep, &av->fid, 0));
    TRY(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    TRY(fi_ep_bind(ep, &eq->fid, 0));
    TRY(fi_enable(ep));
}

static void close_fabric(void) {
    TRY(fi_close(&ep->fid));
    TRY(fi_close(&eq->fid));
    TRY(fi_close(&cq->fid));
    TRY(fi_close(&av->fid));
    TRY(fi_close(&domain->fid));
    TRY(fi_close(&fabric->fid));
    fi_freeinfo(info);
}

/* Every operation's context: what it was, so that a completion knows. */
enum { OP_RECV, OP_SEND, OP_NEVER };
struct op {
    struct fi_context2 ctx; /* first: the completion's op_context is the op */
    int kind;
    int posted;
    int cancel_requested;
    uint64_t gen;           /* a send: the incarnation it went to */
    uint64_t failed_from;   /* a receive: the incarnation whose message its last use failed */
    unsigned char *buf;
    size_t len;
};

/* A completion (or error) for `o`: it must be in flight. A second completion for one
 * operation would hand its buffer to two operations at once. */
static void take_back(struct op *o, const char *who) {
    if (!o->posted)
        die("%s: a completion for a %s that is not in flight (completed twice?)", who,
            o->kind == OP_SEND ? "send" : "receive");
    o->posted = 0;
}

/* Posts a receive for any tag from anyone into `o`. */
static void post_recv(struct op *o) {
    for (;;) {
        ssize_t rc = fi_trecv(ep, o->buf, o->len, NULL, FI_ADDR_UNSPEC, 0, ~0ull, &o->ctx);
        if (rc == 0) break;
        if (rc != -FI_EAGAIN) die("fi_trecv: %s", fi_strerror((int)-rc));
        fi_cq_read(cq, NULL, 0);
    }
    o->posted = 1;
    o->cancel_requested = 0;
}

/* Posts a receive nothing matches and cancels it: it must come back canceled. */
static void post_never(struct op *o) {
    TRY(fi_trecv(ep, o->buf, o->len, NULL, FI_ADDR_UNSPEC, TAG(T_NEVER), 0, &o->ctx));
    o->posted = 1;
    TRY(fi_cancel(&ep->fid, &o->ctx));
}

struct counts {
    uint64_t cancels_asked, canceled, cancel_raced, never_canceled;
};

/* Asks to cancel a posted receive; the completion says whether it was canceled or matched. */
static void cancel_one(struct op *ops, int n, struct counts *c) {
    struct op *o = &ops[rnd((uint64_t)n)];
    if (!o->posted || o->cancel_requested) return;
    ssize_t rc = fi_cancel(&ep->fid, &o->ctx);
    if (rc == 0) {
        o->cancel_requested = 1;
        ++c->cancels_asked;
    } else if (rc != -FI_ENOENT) {
        die("fi_cancel: %s", fi_strerror((int)-rc));
    }
}

/* ---- the client ---- */

static int client_main(int argc, char **argv) {
    if (argc != 8) die("client: bad arguments");
    const char *server_hex = argv[1];
    const uint32_t slot = (uint32_t)atoi(argv[2]);
    const uint64_t gen = strtoull(argv[3], NULL, 10);
    rng_state = strtoull(argv[4], NULL, 10) ^ (gen * 0x2545f4914f6cdd1dull);
    const uint32_t max_size = (uint32_t)atoi(argv[5]);
    const uint64_t nmsgs = strtoull(argv[6], NULL, 10);
    const int limit_s = atoi(argv[7]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm((unsigned)limit_s); /* a client never outlives the run, whatever happens */

    open_fabric();
    unsigned char server_name[256];
    size_t name_len = strlen(server_hex) / 2;
    if (name_len > sizeof server_name) die("server name too long");
    for (size_t i = 0; i < name_len; ++i) sscanf(server_hex + 2 * i, "%2hhx", &server_name[i]);
    fi_addr_t server;
    if (fi_av_insert(av, server_name, 1, &server, 0, NULL) != 1) die("fi_av_insert(server)");

    struct counts c = {0};
    struct op rx[2], never, tx[WINDOW + 2];
    for (int i = 0; i < 2; ++i) {
        rx[i] = (struct op){.kind = OP_RECV, .len = 64};
        rx[i].buf = calloc(1, 64);
        post_recv(&rx[i]);
    }
    never = (struct op){.kind = OP_NEVER, .len = 64, .buf = calloc(1, 64)};
    int free_tx[WINDOW + 2], nfree = 0;
    for (int i = 0; i < WINDOW + 2; ++i) {
        tx[i] = (struct op){.kind = OP_SEND, .len = max_size};
        tx[i].buf = malloc(max_size > 512 ? max_size : 512);
        free_tx[nfree++] = i;
    }

    /* HELLO: the header, then this endpoint's name. */
    {
        struct op *o = &tx[free_tx[--nfree]];
        struct header h = {MAGIC, slot, gen, 0, 0, 0};
        size_t len = 256;
        TRY(fi_getname(&ep->fid, o->buf + sizeof h, &len));
        h.size = (uint32_t)(sizeof h + len);
        memcpy(o->buf, &h, sizeof h);
        TRY(fi_tsend(ep, o->buf, h.size, NULL, server, TAG(T_HELLO), &o->ctx));
        o->posted = 1;
    }

    uint64_t credits = WINDOW, sent = 0, polls = 0;
    int stop = 0, bye_sent = 0, bye_acked = 0;
    while (!bye_acked) {
        /* Send while credits and buffers allow. */
        while (!stop && sent < nmsgs && credits > 0 && nfree > 1) {
            struct op *o = &tx[free_tx[--nfree]];
            struct header h = {MAGIC, slot, gen, sent, random_size(max_size), 0};
            memcpy(o->buf, &h, sizeof h);
            fill(o->buf, h.size, gen, sent);
            /* The incarnation in the tag's low bits: a failed receive names its sender. */
            ssize_t rc = fi_tsend(ep, o->buf, h.size, NULL, server, TAG(T_DATA) | gen, &o->ctx);
            if (rc == -FI_EAGAIN) {
                free_tx[nfree++] = (int)(o - tx);
                break;
            }
            if (rc != 0) die("fi_tsend(data %" PRIu64 "): %s", sent, fi_strerror((int)-rc));
            o->posted = 1;
            ++sent;
            --credits;
        }
        /* Everything sent and completed: say how many. */
        if (!bye_sent && (stop || sent == nmsgs) && nfree == WINDOW + 2) {
            struct op *o = &tx[free_tx[--nfree]];
            struct header h = {MAGIC, slot, gen, sent, sizeof h, 0};
            memcpy(o->buf, &h, sizeof h);
            TRY(fi_tsend(ep, o->buf, sizeof h, NULL, server, TAG(T_BYE), &o->ctx));
            o->posted = 1;
            bye_sent = 1;
        }
        struct fi_cq_tagged_entry e[16];
        ssize_t n = fi_cq_read(cq, e, 16);
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(cq, &err, 0) != 1) continue;
            struct op *o = err.op_context;
            take_back(o, "client");
            if (err.err == FI_ECANCELED && o->kind == OP_NEVER) {
                ++c.never_canceled;
            } else if (err.err == FI_ECANCELED && o->kind == OP_RECV && o->cancel_requested) {
                ++c.canceled;
                post_recv(o);
            } else {
                die("client %" PRIu64 ": error completion (%s op): %s", gen,
                    o->kind == OP_SEND ? "send" : "receive", fi_strerror(err.err));
            }
            continue;
        }
        if (n < 0 && n != -FI_EAGAIN) die("fi_cq_read: %s", fi_strerror((int)-n));
        for (ssize_t i = 0; i < n; ++i) {
            struct op *o = e[i].op_context;
            take_back(o, "client");
            if (o->kind == OP_SEND) {
                free_tx[nfree++] = (int)(o - tx);
                continue;
            }
            if (o->kind == OP_NEVER) die("a receive for a tag nobody sends completed");
            if (o->cancel_requested) ++c.cancel_raced;
            struct header h;
            memcpy(&h, o->buf, sizeof h);
            if (e[i].len != sizeof h || h.magic != MAGIC || h.gen != gen)
                die("client %" PRIu64 ": bad message from the server (len %zu, gen %" PRIu64 ")",
                    gen, e[i].len, h.gen);
            switch (TAG_TYPE(e[i].tag)) {
            case T_CREDIT: credits += h.seq; break;
            case T_STOP: stop = 1; break;
            case T_BYE_ACK:
                if (!bye_sent) die("BYE_ACK before BYE");
                bye_acked = 1;
                break;
            default: die("client: unexpected tag %#" PRIx64, e[i].tag);
            }
            post_recv(o);
        }
        /* Cancels now and then: a credit receive (it may race with a credit), and one that
         * nothing matches. */
        if (++polls % 509 == 0) cancel_one(rx, 2, &c);
        if (polls % 1021 == 0 && !never.posted) post_never(&never);
    }
    /* Outstanding: the NEVER receive's cancel (it completes), the BYE send. */
    double until = now_s() + 10;
    while ((never.posted || nfree != WINDOW + 2) && now_s() < until) {
        struct fi_cq_tagged_entry e;
        ssize_t n = fi_cq_read(cq, &e, 1);
        if (n == 1 && ((struct op *)e.op_context)->kind == OP_SEND) {
            take_back(e.op_context, "client");
            ++nfree;
        } else if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(cq, &err, 0) == 1) {
                struct op *o = err.op_context;
                if (err.err != FI_ECANCELED) die("error completion at the end: %s", fi_strerror(err.err));
                take_back(o, "client");
                if (o->kind == OP_NEVER) ++c.never_canceled;
            }
        }
    }
    if (never.posted || nfree != WINDOW + 2) die("client: completions missing at the end");
    close_fabric();
    for (int i = 0; i < 2; ++i) free(rx[i].buf);
    for (int i = 0; i < WINDOW + 2; ++i) free(tx[i].buf);
    free(never.buf);
    return 0;
}

/* ---- the server ---- */

struct gen_state {
    uint64_t gen;
    uint32_t slot;
    int used;
    int killed;          /* the server killed it: errors towards it are expected */
    int bye;             /* its BYE arrived */
    int finished;        /* BYE_ACK sent: nothing more may arrive */
    uint64_t bye_count;
    uint64_t next_seq;   /* the first seq not yet received */
    unsigned char seen[SEQ_WINDOW]; /* seen[s % SEQ_WINDOW] for seq next_seq..next_seq+255 */
    uint64_t ungranted;  /* received, credits not yet sent back */
    fi_addr_t addr;
};

struct slot_state {
    pid_t pid;
    uint64_t gen;
    double started, kill_at;
};

static struct {
    double seconds, report_every, rss_slack_mib;
    int clients;
    uint32_t max_size;
    uint64_t seed;
} opt = {20, 10, 32, 2, 262144, 1};

static struct gen_state gens[GEN_RING];
static struct slot_state slots[MAX_CLIENTS];
static char server_hex[600];
static const char *self_exe;
static uint64_t next_gen = 1;
static int stopping;
static double last_kill = -1e9; /* when the server last killed a client */

static struct {
    uint64_t msgs, bytes, hellos, byes, clean_exits, kills, av_removes, credit_msgs;
    uint64_t tx_errors_expected, rx_errors_killed, eq_events, max_inflight_seq_gap;
    struct counts c;
} st;

static pid_t *all_pids;
static size_t npids, cap_pids;

static struct gen_state *find_gen(uint64_t gen) {
    for (int i = 0; i < GEN_RING; ++i)
        if (gens[i].used && gens[i].gen == gen) return &gens[i];
    return NULL;
}

static struct gen_state *new_gen(uint64_t gen, uint32_t slot) {
    /* Replace the oldest incarnation the ring holds (gens only grow). */
    struct gen_state *g = NULL;
    for (int i = 0; i < GEN_RING; ++i) {
        if (!gens[i].used) { g = &gens[i]; break; }
        if (!g || gens[i].gen < g->gen) g = &gens[i];
    }
    if (g->used && !g->finished && !g->killed)
        die("incarnation %" PRIu64 " still live when the ring needed its place", g->gen);
    memset(g, 0, sizeof *g);
    g->used = 1;
    g->gen = gen;
    g->slot = slot;
    g->addr = FI_ADDR_NOTAVAIL;
    return g;
}

static struct op tx_pool[256];
static int tx_free[256], ntx_free;

static void server_send(struct gen_state *g, int type, uint64_t seq) {
    if (g->addr == FI_ADDR_NOTAVAIL || g->killed) return;
    if (ntx_free == 0) die("server: out of send contexts");
    struct op *o = &tx_pool[tx_free[--ntx_free]];
    struct header h = {MAGIC, g->slot, g->gen, seq, sizeof h, 0};
    memcpy(o->buf, &h, sizeof h);
    o->gen = g->gen;
    for (;;) {
        ssize_t rc = fi_tsend(ep, o->buf, sizeof h, NULL, g->addr, TAG(type), &o->ctx);
        if (rc == 0) break;
        if (rc != -FI_EAGAIN) die("server fi_tsend: %s", fi_strerror((int)-rc));
        fi_cq_read(cq, NULL, 0);
    }
    o->posted = 1;
    if (type == T_CREDIT) ++st.credit_msgs;
}

static void grant(struct gen_state *g, int force) {
    if (g->addr == FI_ADDR_NOTAVAIL || g->bye) return;
    if (g->ungranted >= CREDIT_EVERY || (force && g->ungranted)) {
        server_send(g, T_CREDIT, g->ungranted);
        g->ungranted = 0;
    }
}

/* The BYE arrived and everything before it too: acknowledge. */
static void try_finish(struct gen_state *g) {
    if (!g->bye || g->finished) return;
    if (g->next_seq > g->bye_count)
        die("incarnation %" PRIu64 ": received seq %" PRIu64 " beyond its BYE count %" PRIu64,
            g->gen, g->next_seq - 1, g->bye_count);
    if (g->next_seq < g->bye_count) return;
    server_send(g, T_BYE_ACK, 0);
    g->finished = 1;
}

/* What the buffer's previous receive was: a message that did not arrive (the sender killed)
 * must never write into the buffer once the receive failed. */
static const char *previous_use(const struct op *o) {
    static char text[96];
    if (o->failed_from == 0) return "its previous receive completed";
    snprintf(text, sizeof text, "its previous receive failed, from killed incarnation %" PRIu64,
             o->failed_from);
    return text;
}

static void on_message(const struct fi_cq_tagged_entry *e) {
    struct op *o = e->op_context;
    struct header h;
    if (e->len < sizeof h) die("a %zu-byte message (tag %#" PRIx64 ")", e->len, e->tag);
    memcpy(&h, o->buf, sizeof h);
    if (h.magic != MAGIC || h.slot >= MAX_CLIENTS)
        die("a message with a damaged header (tag %#" PRIx64 ", len %zu; %s)", e->tag, e->len,
            previous_use(o));
    struct gen_state *g = find_gen(h.gen);
    if (!g) {
        if (h.gen >= next_gen) die("a message from incarnation %" PRIu64 ", never started", h.gen);
        g = new_gen(h.gen, h.slot);
    }
    if (g->finished) die("incarnation %" PRIu64 ": a message after its BYE_ACK", h.gen);
    switch (TAG_TYPE(e->tag)) {
    case T_HELLO:
        if (g->addr != FI_ADDR_NOTAVAIL) die("incarnation %" PRIu64 ": a second HELLO", h.gen);
        if (fi_av_insert(av, o->buf + sizeof h, 1, &g->addr, 0, NULL) != 1)
            die("fi_av_insert(client %" PRIu64 ")", h.gen);
        ++st.hellos;
        if (g->killed) { /* killed before its HELLO was read: forget it again */
            TRY(fi_av_remove(av, &g->addr, 1, 0));
            ++st.av_removes;
            g->addr = FI_ADDR_NOTAVAIL;
        }
        if (stopping) server_send(g, T_STOP, 0);
        grant(g, 1);
        break;
    case T_DATA: {
        if ((e->tag & ~TAG(0xff)) != h.gen)
            die("a data message whose tag names incarnation %" PRIu64 " holds incarnation %" PRIu64
                "'s seq %" PRIu64 " (%zu bytes arrived; %s)",
                (uint64_t)(e->tag & ~TAG(0xff)), h.gen, h.seq, e->len, previous_use(o));
        if (e->len != h.size)
            die("incarnation %" PRIu64 " seq %" PRIu64 ": %zu bytes arrived, %u sent (tag %#" PRIx64
                ", next seq %" PRIu64 ", this seq %s; %s)",
                h.gen, h.seq, e->len, h.size, e->tag, g->next_seq,
                h.seq < g->next_seq || g->seen[h.seq % SEQ_WINDOW] ? "received before" : "not yet received",
                previous_use(o));
        if (h.seq < g->next_seq || g->seen[h.seq % SEQ_WINDOW])
            die("incarnation %" PRIu64 ": seq %" PRIu64 " arrived twice", h.gen, h.seq);
        if (h.seq >= g->next_seq + SEQ_WINDOW)
            die("incarnation %" PRIu64 ": seq %" PRIu64 " arrived with %" PRIu64 " missing", h.gen,
                h.seq, g->next_seq);
        long bad = check(o->buf, h.size, h.gen, h.seq);
        if (bad >= 0)
            die("incarnation %" PRIu64 " seq %" PRIu64 " (%u bytes): byte %ld differs (%s)", h.gen,
                h.seq, h.size, bad, previous_use(o));
        if (h.seq - g->next_seq > st.max_inflight_seq_gap) st.max_inflight_seq_gap = h.seq - g->next_seq;
        g->seen[h.seq % SEQ_WINDOW] = 1;
        while (g->seen[g->next_seq % SEQ_WINDOW]) g->seen[g->next_seq++ % SEQ_WINDOW] = 0;
        ++st.msgs;
        st.bytes += h.size;
        ++g->ungranted;
        grant(g, 0);
        try_finish(g);
        break;
    }
    case T_BYE:
        if (g->bye) die("incarnation %" PRIu64 ": a second BYE", h.gen);
        g->bye = 1;
        g->bye_count = h.seq;
        ++st.byes;
        try_finish(g);
        break;
    default: die("server: unexpected tag %#" PRIx64, e->tag);
    }
}

static struct op rx_pool[SERVER_RECVS];

static void on_completion(const struct fi_cq_tagged_entry *e) {
    struct op *o = e->op_context;
    take_back(o, "server");
    if (o->kind == OP_SEND) {
        tx_free[ntx_free++] = (int)(o - tx_pool);
        return;
    }
    if (o->kind == OP_NEVER) die("server: a receive for a tag nobody sends completed");
    if (o->cancel_requested) ++st.c.cancel_raced;
    on_message(e);
    o->failed_from = 0;
    post_recv(o);
}

static void on_error(const struct fi_cq_err_entry *err) {
    struct op *o = err->op_context;
    take_back(o, "server");
    if (o->kind == OP_NEVER && err->err == FI_ECANCELED) {
        ++st.c.never_canceled;
        return;
    }
    if (o->kind == OP_RECV && err->err == FI_ECANCELED && o->cancel_requested) {
        ++st.c.canceled;
        post_recv(o);
        return;
    }
    if (o->kind == OP_SEND) {
        /* A send to an incarnation that was killed, or had said BYE (its endpoint closing may
         * overtake our completion), may fail; towards a live one it must not. */
        struct gen_state *g = find_gen(o->gen);
        tx_free[ntx_free++] = (int)(o - tx_pool);
        if (g && (g->killed || g->bye)) {
            ++st.tx_errors_expected;
            return;
        }
        die("server: a send to live incarnation %" PRIu64 " failed: %s", o->gen,
            fi_strerror(err->err));
    }
    /* A receive matched to a rendezvous from a client killed before its data moved fails:
     * the message is lost with its sender, and the receiver is told. */
    /* (Only DATA messages are large enough to be lost on their way: anything else failing is
     * a bug.) */
    if (o->kind == OP_RECV && TAG_TYPE(err->tag) == T_DATA) {
        /* Only a killed incarnation's message may fail (its tag names it). */
        const uint64_t from = err->tag & ((UINT64_C(1) << 56) - 1);
        const struct gen_state *g = find_gen(from);
        if (!g || !g->killed)
            die("a receive of live incarnation %" PRIu64 "'s message failed: %s (len %zu)", from,
                fi_strerror(err->err), err->len);
        o->failed_from = from;
    }
    if (o->kind == OP_RECV && TAG_TYPE(err->tag) == T_DATA && now_s() - last_kill < 5 &&
        (err->err == FI_EIO || err->err == FI_ECONNRESET || err->err == FI_ETIMEDOUT)) {
        ++st.rx_errors_killed;
        post_recv(o);
        return;
    }
    die("server: a receive failed: %s (len %zu, olen %zu, tag %#" PRIx64 ", prov_errno %d)",
        fi_strerror(err->err), err->len, err->olen, err->tag, err->prov_errno);
}

static void progress_server(void) {
    struct fi_cq_tagged_entry e[16];
    ssize_t n = fi_cq_read(cq, e, 16);
    if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) on_completion(&e[i]);
    } else if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        if (fi_cq_readerr(cq, &err, 0) == 1) on_error(&err);
    } else if (n != -FI_EAGAIN) {
        die("server fi_cq_read: %s", fi_strerror((int)-n));
    }
    uint32_t event;
    struct fi_eq_entry entry;
    ssize_t rc = fi_eq_read(eq, &event, &entry, sizeof entry, 0);
    if (rc == -FI_EAVAIL) {
        struct fi_eq_err_entry err = {0};
        if (fi_eq_readerr(eq, &err, 0) > 0) ++st.eq_events; /* a failed peer: the killed ones */
    }
}

static void spawn(int s) {
    struct slot_state *sl = &slots[s];
    uint64_t gen = next_gen++;
    char slot_s[16], gen_s[32], seed_s[32], max_s[32], n_s[32], limit_s[32];
    snprintf(slot_s, sizeof slot_s, "%d", s);
    snprintf(gen_s, sizeof gen_s, "%" PRIu64, gen);
    snprintf(seed_s, sizeof seed_s, "%" PRIu64, opt.seed);
    snprintf(max_s, sizeof max_s, "%u", opt.max_size);
    /* Every third incarnation is killed at a random moment of its first 1.5 s (it would send
     * for ever); the others send a few hundred to some tens of thousands of messages. */
    const int doomed = gen % 3 == 1;
    snprintf(n_s, sizeof n_s, "%" PRIu64, doomed ? UINT64_C(1) << 40 : 200 + rnd(20000));
    snprintf(limit_s, sizeof limit_s, "%d", (int)opt.seconds + 120);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        char *args[] = {(char *)self_exe, "client", server_hex, slot_s, gen_s, seed_s, max_s, n_s,
                        limit_s, NULL};
        execv(self_exe, args);
        _exit(127);
    }
    if (npids == cap_pids) {
        cap_pids = cap_pids ? 2 * cap_pids : 1024;
        all_pids = realloc(all_pids, cap_pids * sizeof *all_pids);
    }
    all_pids[npids++] = pid;
    sl->pid = pid;
    sl->gen = gen;
    sl->started = now_s();
    sl->kill_at = doomed ? sl->started + 0.02 + (double)rnd(1480) / 1000 : 0;
    new_gen(gen, (uint32_t)s);
}

/* A client process ended: judge how, forget its address. */
static void reap(int s, int status) {
    struct slot_state *sl = &slots[s];
    struct gen_state *g = find_gen(sl->gen);
    if (!g) die("incarnation %" PRIu64 " left the ring while running", sl->gen);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && g->killed) {
        ++st.kills;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (!g->finished) die("incarnation %" PRIu64 " exited before its BYE was acknowledged", g->gen);
        ++st.clean_exits;
    } else {
        die("incarnation %" PRIu64 " (pid %d) ended with status %#x", g->gen, (int)sl->pid, status);
    }
    if (g->addr != FI_ADDR_NOTAVAIL) {
        TRY(fi_av_remove(av, &g->addr, 1, 0));
        ++st.av_removes;
        g->addr = FI_ADDR_NOTAVAIL;
    }
    sl->pid = 0;
}

/* ---- memory samples ---- */

struct mem {
    long rss_kib;
    int shm_maps;     /* mappings of shared memory (/dev/shm, SYSV, memfd) */
    long shm_kib;
};

static struct mem sample_mem(void) {
    struct mem m = {0};
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    m.rss_kib = resident * (sysconf(_SC_PAGESIZE) / 1024);
    f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (!strstr(line, "/dev/shm/") && !strstr(line, "/SYSV") && !strstr(line, "/memfd:")) continue;
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            ++m.shm_maps;
            m.shm_kib += (long)((hi - lo) / 1024);
        }
    }
    if (f) fclose(f);
    return m;
}

static int is_client_pid(long pid) {
    for (size_t i = 0; i < npids; ++i)
        if (all_pids[i] == pid) return 1;
    return 0;
}

/* System V segments a client created that still exist (every client is gone by then). */
static int leftover_sysv(void) {
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    if (!f) return 0;
    char line[512];
    int n = 0;
    if (!fgets(line, sizeof line, f)) { fclose(f); return 0; }
    while (fgets(line, sizeof line, f)) {
        long key, id, perms, size, cpid, lpid;
        if (sscanf(line, "%ld %ld %lo %ld %ld %ld", &key, &id, &perms, &size, &cpid, &lpid) == 6 &&
            is_client_pid(cpid))
            ++n;
    }
    fclose(f);
    return n;
}

static int server_main(void) {
    signal(SIGPIPE, SIG_IGN);
    rng_state = opt.seed;
    open_fabric();
    unsigned char name[256];
    size_t len = sizeof name;
    TRY(fi_getname(&ep->fid, name, &len));
    for (size_t i = 0; i < len; ++i) sprintf(server_hex + 2 * i, "%02x", name[i]);

    for (int i = 0; i < SERVER_RECVS; ++i) {
        rx_pool[i] = (struct op){.kind = OP_RECV, .len = opt.max_size};
        rx_pool[i].buf = malloc(opt.max_size);
        post_recv(&rx_pool[i]);
    }
    for (int i = 0; i < 256; ++i) {
        tx_pool[i] = (struct op){.kind = OP_SEND, .len = 64, .buf = calloc(1, 64)};
        tx_free[ntx_free++] = i;
    }
    struct op never = {.kind = OP_NEVER, .len = 64, .buf = calloc(1, 64)};

    const struct mem before = sample_mem();
    struct mem third = before, last = before;
    int third_taken = 0;
    const double start = now_s(), end = start + opt.seconds;
    double next_sample = start + 1, next_report = start + opt.report_every;
    long rss_max = before.rss_kib;
    for (int s = 0; s < opt.clients; ++s) spawn(s);
    printf("soak: %d clients, %.0f s, messages of 40 B to %u B, seed %" PRIu64 "\n", opt.clients,
           opt.seconds, opt.max_size, opt.seed);
    fflush(stdout);

    uint64_t polls = 0;
    for (;;) {
        progress_server();
        if (++polls % 64) continue;
        if (polls % 4096 == 0) cancel_one(rx_pool, SERVER_RECVS, &st.c);
        if (polls % 8192 == 0 && !never.posted) post_never(&never);
        double t = now_s();
        if (!stopping && t >= end) {
            /* Time: no new clients; those running finish cleanly. */
            stopping = 1;
            for (int s = 0; s < opt.clients; ++s) {
                struct gen_state *g = slots[s].pid ? find_gen(slots[s].gen) : NULL;
                /* (Not one that finished: its BYE_ACK went, it may have closed its endpoint
                 * already, and a send to it then fails at once; not yet reaped is no sign of
                 * a live endpoint.) */
                if (g && !g->finished) server_send(g, T_STOP, 0);
            }
        }
        for (int s = 0; s < opt.clients; ++s) {
            struct slot_state *sl = &slots[s];
            if (sl->pid) {
                int status;
                pid_t r = waitpid(sl->pid, &status, WNOHANG);
                if (r == sl->pid) {
                    reap(s, status);
                } else if (sl->kill_at && t >= sl->kill_at && !stopping) {
                    struct gen_state *g = find_gen(sl->gen);
                    if (g && !g->finished) {
                        g->killed = 1;
                        kill(sl->pid, SIGKILL);
                        last_kill = t;
                    }
                    sl->kill_at = 0;
                }
            }
            if (!sl->pid && !stopping) spawn(s);
        }
        if (t >= next_sample) {
            next_sample += 1;
            last = sample_mem();
            if (last.rss_kib > rss_max) rss_max = last.rss_kib;
            if (!third_taken && t >= start + opt.seconds / 3) third = last, third_taken = 1;
        }
        if (t >= next_report) {
            next_report += opt.report_every;
            printf("soak: %.0f s: %" PRIu64 " messages (%.1f MiB), %" PRIu64 " clean exits, %" PRIu64
                   " kills, %" PRIu64 " cancels, RSS %ld KiB, %d shm mappings\n",
                   t - start, st.msgs, (double)st.bytes / 1048576, st.clean_exits, st.kills,
                   st.c.canceled + st.c.cancel_raced, last.rss_kib, last.shm_maps);
            fflush(stdout);
        }
        if (stopping) {
            int running = 0;
            for (int s = 0; s < opt.clients; ++s) running += slots[s].pid != 0;
            if (!running && ntx_free == 256 && !never.posted) break;
            if (t > end + 60) die("clients still running 60 s after the end");
        }
    }
    /* The peers' segments are released when their processes are gone and our AV forgets them;
     * give the transports a moment of progress to detach. */
    double settle = now_s() + 2;
    while (now_s() < settle) progress_server();
    const struct mem after = sample_mem();
    const int sysv_left = leftover_sysv();
    const double elapsed = now_s() - start;

    printf("soak: %" PRIu64 " messages, %.1f MiB in %.0f s (%.0f messages/s), every byte checked\n",
           st.msgs, (double)st.bytes / 1048576, elapsed, (double)st.msgs / elapsed);
    printf("soak: %" PRIu64 " incarnations: %" PRIu64 " clean (counts matched), %" PRIu64
           " killed; %" PRIu64 " AV removals; %" PRIu64 " failed-peer events, %" PRIu64
           " sends to departed clients failed\n",
           next_gen - 1, st.clean_exits, st.kills, st.av_removes, st.eq_events, st.tx_errors_expected);
    printf("soak: cancels: server %" PRIu64 " asked, %" PRIu64 " canceled, %" PRIu64
           " raced with a match, %" PRIu64 " unmatched receives canceled\n",
           st.c.cancels_asked, st.c.canceled, st.c.cancel_raced, st.c.never_canceled);
    printf("soak: RSS %ld KiB before, %ld at a third, %ld at the end (max %ld); shared-memory "
           "mappings %d (%ld KiB) before, %d (%ld KiB) after; client System V segments left %d\n",
           before.rss_kib, third.rss_kib, last.rss_kib, rss_max, before.shm_maps, before.shm_kib,
           after.shm_maps, after.shm_kib, sysv_left);
    int failed = 0;
    if (st.clean_exits + st.kills != next_gen - 1) failed = 1, fprintf(stderr, "soak: incarnations unaccounted for\n");
    if (st.clean_exits == 0 || st.kills == 0)
        failed = 1, fprintf(stderr, "soak: the run was too short to end incarnations both ways\n");
    if (st.c.canceled + st.c.never_canceled == 0)
        failed = 1, fprintf(stderr, "soak: no receive was canceled\n");
    if (third_taken && last.rss_kib - third.rss_kib > (long)(opt.rss_slack_mib * 1024))
        failed = 1, fprintf(stderr, "soak: RSS grew by %ld KiB from a third of the run to its end\n",
                            last.rss_kib - third.rss_kib);
    if (after.shm_kib > before.shm_kib)
        failed = 1, fprintf(stderr, "soak: %ld KiB more shared memory mapped after the clients left\n",
                            after.shm_kib - before.shm_kib);
    if (sysv_left) failed = 1, fprintf(stderr, "soak: %d System V segments outlived their clients\n", sysv_left);
    for (int i = 0; i < SERVER_RECVS; ++i) {
        if (rx_pool[i].posted) TRY(fi_cancel(&ep->fid, &rx_pool[i].ctx));
    }
    close_fabric();
    for (int i = 0; i < SERVER_RECVS; ++i) free(rx_pool[i].buf);
    for (int i = 0; i < 256; ++i) free(tx_pool[i].buf);
    free(never.buf);
    free(all_pids);
    printf("soak: %s\n", failed ? "FAILED" : "passed");
    return failed;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "client") == 0) return client_main(argc - 1, argv + 1);
    self_exe = "/proc/self/exe";
    static char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = 0, self_exe = exe;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) die("usage: soak [--seconds S] [--clients N] [--max-size B] [--seed N] [--rss-slack MIB] [--report-every S]");
        if (!strcmp(a, "--seconds")) opt.seconds = atof(v);
        else if (!strcmp(a, "--clients")) opt.clients = atoi(v);
        else if (!strcmp(a, "--max-size")) opt.max_size = (uint32_t)atol(v);
        else if (!strcmp(a, "--seed")) opt.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--rss-slack")) opt.rss_slack_mib = atof(v);
        else if (!strcmp(a, "--report-every")) opt.report_every = atof(v);
        else die("unknown option %s", a);
        ++i;
    }
    if (opt.clients < 1 || opt.clients > MAX_CLIENTS) die("--clients: 1 to %d", MAX_CLIENTS);
    if (opt.max_size < 512) die("--max-size: at least 512");
    if (opt.seconds <= 0 || opt.report_every <= 0) die("--seconds and --report-every: positive");
    alarm((unsigned)opt.seconds + 180);
    return server_main();
}
