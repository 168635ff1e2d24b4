// Memory registration cost through the public API: fi_mr_reg + fi_close for 4 KiB .. 64 MiB,
// with a registration-cache miss every time (a fresh mapping per iteration, so the cache
// can never serve it) and with a hit (the same buffer again). Also fi_mr_raw_attr +
// fi_mr_map_raw + fi_mr_unmap_key (a peer's side of a raw key). A program, not a test.
//
//   build/tools/bench/mr_bench [--benchmark_filter=...]
//
// The domain is the first fi_getinfo offers, with the mr_mode MPICH-like applications offer
// (VIRT_ADDR | ALLOCATED | PROV_KEY, all kept). FI_MR_CACHE_MONITOR=disabled shows the
// uncached cost of the same loop.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Env {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    Env() {
        fi_info *hints = fi_allocinfo();
        hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
        if (fi_getinfo(fi_version(), nullptr, nullptr, 0, hints, &info) != 0 ||
            fi_fabric(info->fabric_attr, &fabric, nullptr) != 0 ||
            fi_domain(fabric, info, &domain, nullptr) != 0) {
            std::fprintf(stderr, "mr_bench: no ufi domain\n");
            std::exit(1);
        }
        fi_freeinfo(hints);
    }
    ~Env() {
        fi_close(&domain->fid);
        fi_close(&fabric->fid);
        fi_freeinfo(info);
    }
};

Env &env() {
    static Env e;
    return e;
}

// Populating (touching) the pages is left out of the miss loop: on this machine's MDs (cma,
// self, tcp) registration never touches pages, and populating 64 MiB per iteration would
// dominate the run.
void *map(size_t len, bool populate) {
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

// A cache hit: the same, already registered buffer each time.
void BM_RegCloseHit(benchmark::State &state) {
    const auto len = static_cast<size_t>(state.range(0));
    void *buf = map(len, true);
    fid_mr *mr = nullptr;
    for (auto _ : state) {
        if (fi_mr_reg(env().domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
                      nullptr) != 0) {
            state.SkipWithError("fi_mr_reg failed");
            break;
        }
        fi_close(&mr->fid);
    }
    state.SetItemsProcessed(state.iterations());
    munmap(buf, len);
}

// A miss: each iteration registers a buffer the cache has never seen (munmap invalidates the
// previous one); only fi_mr_reg + fi_close are timed.
void BM_RegCloseMiss(benchmark::State &state) {
    const auto len = static_cast<size_t>(state.range(0));
    fid_mr *mr = nullptr;
    for (auto _ : state) {
        state.PauseTiming();
        void *buf = map(len, false);
        state.ResumeTiming();
        if (fi_mr_reg(env().domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
                      nullptr) != 0) {
            state.SkipWithError("fi_mr_reg failed");
            break;
        }
        fi_close(&mr->fid);
        state.PauseTiming();
        munmap(buf, len);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations());
}

// The peer's side of a raw key: map then unmap (fi_mr_raw_attr once, outside the loop).
void BM_MapUnmapRaw(benchmark::State &state) {
    std::vector<char> buf(4096);
    fid_mr *mr = nullptr;
    fi_mr_reg(env().domain, buf.data(), buf.size(), FI_REMOTE_READ, 0, 0, 0, &mr, nullptr);
    uint64_t base = 0, key = 0;
    size_t size = 4096;
    std::vector<uint8_t> raw(size);
    fi_mr_raw_attr(mr, &base, raw.data(), &size, 0);
    for (auto _ : state) {
        fi_mr_map_raw(env().domain, base, raw.data(), size, &key, 0);
        fi_mr_unmap_key(env().domain, key);
    }
    state.counters["key_bytes"] = static_cast<double>(size);
    fi_close(&mr->fid);
}

void BM_RawAttr(benchmark::State &state) {
    std::vector<char> buf(4096);
    fid_mr *mr = nullptr;
    fi_mr_reg(env().domain, buf.data(), buf.size(), FI_REMOTE_READ, 0, 0, 0, &mr, nullptr);
    uint64_t base = 0;
    std::vector<uint8_t> raw(4096);
    for (auto _ : state) {
        size_t size = raw.size();
        fi_mr_raw_attr(mr, &base, raw.data(), &size, 0);
        benchmark::DoNotOptimize(size);
    }
    fi_close(&mr->fid);
}

BENCHMARK(BM_RegCloseHit)->RangeMultiplier(4)->Range(4 << 10, 64 << 20);
BENCHMARK(BM_RegCloseMiss)->RangeMultiplier(4)->Range(4 << 10, 64 << 20);
BENCHMARK(BM_MapUnmapRaw);
BENCHMARK(BM_RawAttr);

}  // namespace

BENCHMARK_MAIN();
