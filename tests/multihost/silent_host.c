/* A ping-pong that must learn of a peer that goes silent (silent_host_multihost.sh): RDM,
 * tagged, receives directed at the peer (FI_DIRECTED_RECV), an EQ bound to the endpoint.
 * The server listens on host:port (FI_SOURCE), the client reaches it there and sends its name
 * first. Each side prints its round count every 1000 rounds; when the peer fails (an error
 * completion, or an error event on the EQ) it prints how and exits 3. Exit 0: `rounds` rounds
 * done; 1: a setup or unexpected error.
 * Usage: silent_host server <ip> <port> <rounds> | silent_host client <ip> <port> <rounds> */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_eq *eq;
static fi_addr_t peer = FI_ADDR_UNSPEC;
static long round_no;

#define TRY(call)                                                                      \
    do {                                                                               \
        int rc_ = (int)(call);                                                         \
        if (rc_ != 0) {                                                                \
            fprintf(stderr, "%s: %s\n", #call, fi_strerror(-rc_));                     \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* The peer failed: say how, and stop. */
static void peer_failed(const char *how, int err) {
    printf("round %ld: %s: %s\n", round_no, how, fi_strerror(err));
    fflush(stdout);
    exit(3);
}

static void check_eq(void) {
    uint32_t event;
    struct fi_eq_entry entry;
    ssize_t rc = fi_eq_read(eq, &event, &entry, sizeof entry, 0);
    if (rc == -FI_EAVAIL) {
        struct fi_eq_err_entry err = {0};
        if (fi_eq_readerr(eq, &err, 0) > 0) {
            char how[64];
            snprintf(how, sizeof how, "EQ: peer %llu failed", (unsigned long long)err.data);
            peer_failed(how, err.err);
        }
    }
}

/* Waits for `n` completions. */
static void wait_for(int n) {
    unsigned long empty = 0;
    while (n > 0) {
        struct fi_cq_tagged_entry e;
        ssize_t rc = fi_cq_read(cq, &e, 1);
        if (rc == 1) {
            --n;
        } else if (rc == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            if (fi_cq_readerr(cq, &err, 0) == 1) {
                check_eq(); /* (the event, where it came first) */
                peer_failed("completion error", err.err);
            }
        } else if (rc != -FI_EAGAIN) {
            fprintf(stderr, "fi_cq_read: %s\n", fi_strerror((int)-rc));
            exit(1);
        } else if (++empty % 4096 == 0) {
            check_eq();
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s server|client <ip> <port> <rounds>\n", argv[0]);
        return 1;
    }
    const int server = strcmp(argv[1], "server") == 0;
    const long rounds = atol(argv[4]);
    alarm(600);
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV;
    hints->mode = FI_CONTEXT;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    TRY(fi_getinfo(FI_VERSION(1, 17), argv[2], argv[3], server ? FI_SOURCE : 0, hints, &info));
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
    TRY(fi_domain(fabric, info, &domain, NULL));
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    TRY(fi_av_open(domain, &av_attr, &av, NULL));
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
    TRY(fi_cq_open(domain, &cq_attr, &cq, NULL));
    struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_NONE};
    TRY(fi_eq_open(fabric, &eq_attr, &eq, NULL));
    TRY(fi_endpoint(domain, info, &ep, NULL));
    TRY(fi_ep_bind(ep, &av->fid, 0));
    TRY(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    TRY(fi_ep_bind(ep, &eq->fid, 0));
    TRY(fi_enable(ep));

    static char name[256];
    static struct fi_context ctx[2];
    if (server) {
        TRY(fi_trecv(ep, name, sizeof name, NULL, FI_ADDR_UNSPEC, 1, 0, &ctx[0]));
        wait_for(1);
        if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1) return 1;
    } else {
        if (fi_av_insert(av, info->dest_addr, 1, &peer, 0, NULL) != 1) return 1;
        size_t len = sizeof name;
        TRY(fi_getname(&ep->fid, name, &len));
        TRY(fi_tsend(ep, name, len, NULL, peer, 1, &ctx[0]));
        wait_for(1);
    }
    uint64_t out = 0, in = 0;
    for (round_no = 0; round_no < rounds; ++round_no) {
        if (server) {
            TRY(fi_trecv(ep, &in, sizeof in, NULL, peer, 2, 0, &ctx[0]));
            wait_for(1);
            out = in + 1;
            TRY(fi_tsend(ep, &out, sizeof out, NULL, peer, 3, &ctx[1]));
            wait_for(1);
        } else {
            TRY(fi_trecv(ep, &in, sizeof in, NULL, peer, 3, 0, &ctx[0]));
            out = (uint64_t)round_no * 2;
            TRY(fi_tsend(ep, &out, sizeof out, NULL, peer, 2, &ctx[1]));
            wait_for(2);
            if (in != out + 1) {
                fprintf(stderr, "round %ld: got %llu, want %llu\n", round_no,
                        (unsigned long long)in, (unsigned long long)(out + 1));
                return 1;
            }
        }
        if (round_no % 1000 == 0) {
            printf("rounds %ld\n", round_no);
            fflush(stdout);
        }
    }
    printf("done %ld\n", rounds);
    fi_close(&ep->fid);
    fi_close(&eq->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
