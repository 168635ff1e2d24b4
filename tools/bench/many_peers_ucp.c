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
#include "many_peers_job.h"

#include <ucp/api/ucp.h>

#define POSTED 32

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
        if (job_send_name(up, addr, len)) exit(1);
        ucp_worker_release_address(workers[w], addr);
        for (int s = 0; s < POSTED; s++) {
            slots[w * POSTED + s].worker = workers[w];
            post(&slots[w * POSTED + s]);
        }
    }
    for (int ph = 0; ph < phases; ph++) {
        int64_t expected = 0;
        if (job_phase_share(down, &expected)) exit(1);
        const int64_t target = received + expected;
        while (received < target) {
            for (int w = 0; w < count; w++) ucp_worker_progress(workers[w]);
        }
        if (job_phase_done(up)) exit(1);
    }
    _exit(0);  /* (the sender's endpoints may still be connected: no orderly teardown) */
}

/* The sender: one worker, an endpoint to each receiver worker (made in phase 0). */
struct sender {
    ucp_worker_h worker;
    uint8_t **names;
    ucp_ep_h *to;
    int peers;
};

static int take_name(void *ctx, int peer, const uint8_t *name, uint32_t len) {
    struct sender *s = ctx;
    s->names[peer] = malloc(len);
    memcpy(s->names[peer], name, len);
    return 0;
}

static int sender_connect(void *ctx) {
    struct sender *s = ctx;
    for (int p = 0; p < s->peers; p++) {
        ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                              .address = (const ucp_address_t *)s->names[p]};
        CHECK(ucp_ep_create(s->worker, &ep, &s->to[p]));
    }
    return 0;
}

static void sender_progress(void *ctx) { ucp_worker_progress(((struct sender *)ctx)->worker); }

static int sender_send(void *ctx, int peer) {
    struct sender *s = ctx;
    static uint64_t payload = 0x5eed;
    ucp_request_param_t p = {.op_attr_mask = 0};
    void *req = ucp_tag_send_nbx(s->to[peer], &payload, sizeof payload, 0, &p);
    if (UCS_PTR_IS_ERR(req)) {
        fprintf(stderr, "many_peers_ucp: ucp_tag_send_nbx: %s\n",
                ucs_status_string(UCS_PTR_STATUS(req)));
        return -1;
    }
    if (req != NULL) {  /* queued: progress until it leaves, as fi_inject's EAGAIN */
        while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(s->worker);
        ucp_request_free(req);
    }
    return 0;
}

int main(int argc, char **argv) {
    struct job j;
    const int rc = job_start(&j, argc, argv, "many_peers_ucp", receiver);
    if (rc != 0) return rc;
    init_context();
    struct sender s = {open_worker(), NULL, NULL, j.peers};
    s.names = calloc((size_t)j.peers, sizeof *s.names);
    s.to = calloc((size_t)j.peers, sizeof *s.to);
    if (job_names(&j, take_name, &s) != 0) return 1;
    /* Endpoints are made in phase 0, measured: ufi's come with its first sends there. */
    const struct job_sender ops = {sender_connect, sender_send, sender_progress, &s};
    if (job_run(&j, &ops) != 0) return 1;
    return 0;  /* (endpoints and worker left to exit: the receivers are gone) */
}
