// fi_av_lookup of random entries of an AV holding N addresses: the fastest of R rounds of
// 1,000,000 lookups (the indices drawn before the clock starts), through the public API.
// It asks for API 1.17, the version of Debian 12's libfabric, so the same source built against
// that library measures libfabric's tcp provider beside ufi (scripts/bench-av.sh).
//   av_lookup_min N [ROUNDS] [sock|native]
// sock: N distinct FI_SOCKADDR_IN addresses (127.x.y.z:port); the AV asks for that format.
// native: the domain's own format: N copies of a real endpoint's name (fi_getname), each its
// own entry; for libfabric's tcp provider native is a sockaddr, so use sock there.
// A program, not a test. Nothing is sent: the addresses are only stored and read back.
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int fail(const char *what, int rc) {
    fprintf(stderr, "av_lookup_min: %s failed: %d (%s)\n", what, rc, fi_strerror(-rc));
    return 1;
}

int main(int argc, char **argv) {
    const size_t entries = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000;
    const int rounds = argc > 2 ? atoi(argv[2]) : 10;
    const int native = argc > 3 && strcmp(argv[3], "native") == 0;
    const size_t lookups = 1000000;
    if (entries == 0 || rounds <= 0) {
        fprintf(stderr, "usage: av_lookup_min N [ROUNDS] [sock|native]\n");
        return 2;
    }
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->addr_format = native ? FI_FORMAT_UNSPEC : FI_SOCKADDR_IN;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
    if (rc != 0) return fail("fi_getinfo", rc);
    struct fid_fabric *fabric = NULL;
    struct fid_domain *domain = NULL;
    struct fid_av *av = NULL;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = entries};
    if ((rc = fi_fabric(info->fabric_attr, &fabric, NULL)) != 0) return fail("fi_fabric", rc);
    if ((rc = fi_domain(fabric, info, &domain, NULL)) != 0) return fail("fi_domain", rc);
    if ((rc = fi_av_open(domain, &av_attr, &av, NULL)) != 0) return fail("fi_av_open", rc);

    size_t addr_len = sizeof(struct sockaddr_in);
    uint8_t *addrs;
    if (native) {
        // One endpoint's name, copied N times (each copy is an entry of its own).
        struct fid_cq *cq = NULL;
        struct fid_ep *ep = NULL;
        struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
        struct fid_av *ep_av = NULL;
        struct fi_av_attr ep_av_attr = {.type = FI_AV_TABLE};
        uint8_t name[1024];
        addr_len = sizeof name;
        if ((rc = fi_cq_open(domain, &cq_attr, &cq, NULL)) != 0) return fail("fi_cq_open", rc);
        if ((rc = fi_av_open(domain, &ep_av_attr, &ep_av, NULL)) != 0) return fail("fi_av_open", rc);
        if ((rc = fi_endpoint(domain, info, &ep, NULL)) != 0) return fail("fi_endpoint", rc);
        if ((rc = fi_ep_bind(ep, &ep_av->fid, 0)) != 0) return fail("fi_ep_bind(av)", rc);
        if ((rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) != 0) return fail("fi_ep_bind(cq)", rc);
        if ((rc = fi_enable(ep)) != 0) return fail("fi_enable", rc);
        if ((rc = fi_getname(&ep->fid, name, &addr_len)) != 0) return fail("fi_getname", rc);
        addrs = malloc(entries * addr_len);
        for (size_t i = 0; i < entries; i++) memcpy(addrs + i * addr_len, name, addr_len);
        fi_close(&ep->fid);
        fi_close(&ep_av->fid);
        fi_close(&cq->fid);
    } else {
        addrs = malloc(entries * addr_len);
        for (size_t i = 0; i < entries; i++) {
            struct sockaddr_in sa = {.sin_family = AF_INET};
            sa.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)(i / 50000 + 1));
            sa.sin_port = htons((uint16_t)(10000 + i % 50000));
            memcpy(addrs + i * addr_len, &sa, addr_len);
        }
    }
    rc = fi_av_insert(av, addrs, entries, NULL, 0, NULL);
    if (rc != (int)entries) return fail("fi_av_insert", rc < 0 ? rc : -FI_EOTHER);

    // fi_addr_t of a table AV is the index; the indices are drawn before timing (xorshift).
    fi_addr_t *order = malloc(lookups * sizeof *order);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < lookups; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order[i] = x % entries;
    }
    uint8_t out[1024];
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        const double t0 = now_ns();
        for (size_t i = 0; i < lookups; i++) {
            size_t len = sizeof out;
            if ((rc = fi_av_lookup(av, order[i], out, &len)) != 0) return fail("fi_av_lookup", rc);
        }
        const double per = (now_ns() - t0) / (double)lookups;
        if (per < best) best = per;
    }
    // The last lookup must give back what was inserted.
    size_t len = sizeof out;
    if (fi_av_lookup(av, order[lookups - 1], out, &len) != 0 || len < addr_len ||
        memcmp(out, addrs + order[lookups - 1] * addr_len, addr_len) != 0) {
        fprintf(stderr, "av_lookup_min: fi_av_lookup gave back other bytes than inserted\n");
        return 1;
    }
    printf("fi_av_lookup (%s, %s, %zu entries of %zu bytes): fastest of %d rounds of %zu: %.1f ns\n",
           info->fabric_attr->prov_name, native ? "native" : "sockaddr_in", entries, addr_len,
           rounds, lookups, best);
    free(order);
    free(addrs);
    fi_close(&av->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
