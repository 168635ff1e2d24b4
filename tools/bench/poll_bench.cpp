// What an idle poll costs through the public API: fi_cq_read of an empty CQ and fi_cntr_read,
// each with one enabled RDM endpoint bound (so every read also progresses its transports).
// A program, not a test.
//
//   build/tools/bench/poll_bench                 (the first domain fi_getinfo offers)
//   UFI_TLS=shm build/tools/bench/poll_bench     (another domain)
//
// Compare with libfabric's providers by running the same calls on them (docs/performance-history.md).
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct Env {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_cntr *cntr = nullptr;
    fid_ep *ep = nullptr;
    bool ok = false;
    Env() {
        fi_info *hints = fi_allocinfo();
        hints->caps = FI_MSG | FI_TAGGED;
        hints->ep_attr->type = FI_EP_RDM;
        hints->fabric_attr->prov_name = strdup("ufi");
        const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info);
        fi_freeinfo(hints);
        if (rc != 0) {
            std::fprintf(stderr, "fi_getinfo: %s\n", fi_strerror(-rc));
            return;
        }
        fi_av_attr av_attr{};
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        fi_cntr_attr cntr_attr{};
        cntr_attr.events = FI_CNTR_EVENTS_COMP;
        ok = fi_fabric(info->fabric_attr, &fabric, nullptr) == 0 &&
             fi_domain(fabric, info, &domain, nullptr) == 0 &&
             fi_av_open(domain, &av_attr, &av, nullptr) == 0 &&
             fi_cq_open(domain, &cq_attr, &cq, nullptr) == 0 &&
             fi_cntr_open(domain, &cntr_attr, &cntr, nullptr) == 0 &&
             fi_endpoint(domain, info, &ep, nullptr) == 0 && fi_ep_bind(ep, &av->fid, 0) == 0 &&
             fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) == 0 &&
             fi_ep_bind(ep, &cntr->fid, FI_SEND) == 0 && fi_enable(ep) == 0;
        if (!ok) std::fprintf(stderr, "cannot set up an endpoint\n");
        else std::fprintf(stderr, "domain %s\n", info->domain_attr->name);
    }
    ~Env() {
        for (fid_t f : {ep ? &ep->fid : nullptr, cntr ? &cntr->fid : nullptr,
                        cq ? &cq->fid : nullptr, av ? &av->fid : nullptr,
                        domain ? &domain->fid : nullptr, fabric ? &fabric->fid : nullptr}) {
            if (f != nullptr) fi_close(f);
        }
        if (info) fi_freeinfo(info);
    }
};

Env &env() {
    static Env e;
    return e;
}

void EmptyCqRead(benchmark::State &state) {
    Env &e = env();
    if (!e.ok) {
        state.SkipWithError("no endpoint");
        return;
    }
    fi_cq_tagged_entry entry;
    for (auto _ : state) benchmark::DoNotOptimize(fi_cq_read(e.cq, &entry, 1));
}
BENCHMARK(EmptyCqRead);

void CntrRead(benchmark::State &state) {
    Env &e = env();
    if (!e.ok) {
        state.SkipWithError("no endpoint");
        return;
    }
    for (auto _ : state) benchmark::DoNotOptimize(fi_cntr_read(e.cntr));
}
BENCHMARK(CntrRead);

}  // namespace

BENCHMARK_MAIN();
