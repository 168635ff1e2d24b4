// The fastest of R rounds of 100,000 fi_mr_reg + fi_close of one cached 4 KiB buffer (the
// registration-cache hit), through the public API on the first domain fi_getinfo offers. The
// minimum over rounds is steadier on a noisy machine than a mean (docs/performance.md).
//   build/tools/bench/mr_hit_min [ROUNDS]    (default 30)
// A program, not a test. It asks for API 1.17, the version of Debian 12's libfabric, so the
// same source built against that library measures its providers beside ufi
// (scripts/bench-mr.sh, FI_PROVIDER=shm).
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 30;
    const int n = 100000;
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
    if (fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info) != 0) {
        fprintf(stderr, "fi_getinfo found no domain\n");
        return 1;
    }
    struct fid_fabric *fabric = NULL;
    struct fid_domain *domain = NULL;
    if (fi_fabric(info->fabric_attr, &fabric, NULL) != 0 ||
        fi_domain(fabric, info, &domain, NULL) != 0) {
        fprintf(stderr, "cannot open the domain\n");
        return 1;
    }
    const size_t len = 4096;
    void *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) return 1;
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        const double t0 = now_ns();
        for (int i = 0; i < n; i++) {
            struct fid_mr *mr = NULL;
            if (fi_mr_reg(domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
                          NULL) != 0) {
                fprintf(stderr, "fi_mr_reg failed\n");
                return 1;
            }
            fi_close(&mr->fid);
        }
        const double per = (now_ns() - t0) / n;
        if (per < best) best = per;
    }
    printf("fi_mr_reg + fi_close, cache hit (%s): fastest of %d rounds of %d: %.1f ns\n",
           info->domain_attr->name, rounds, n, best);
    munmap(buf, len);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
