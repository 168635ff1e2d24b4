// AV benchmark (public API only): inserting 1,000,000 synthetic ufi names (posix 8+8,
// tcp 6+2, as an eth0 domain's names carry: 50 bytes with the header, padded to the domain's
// address length as fi_getname hands them out) into a fresh AV, looking them up, printing them
// (fi_av_straddr), and the memory an entry costs beyond its address bytes (resident set growth
// during the insert). Run:
//   build/tools/bench/av_bench                       # all
//   build/tools/bench/av_bench --benchmark_filter=Insert
// Counters: items_per_second; rss_bytes_per_entry (resident growth / entries);
// overhead_bytes_per_entry (the same minus the 50 bytes the table keeps).
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr size_t kEntries = 1000000;
constexpr size_t kRecordBytes = 50;  // what the table stores per address

// A ufi name (transports/address.h layout): "uf", version 3, 2 records and the partial bit,
// uuid, ep id, FNV-1a checksum; posix (code 1, dev 8, iface 8), tcp (code 7, dev 6, iface 2);
// zeros up to `addr_len`.
void append_blob(std::vector<uint8_t> &out, uint64_t n, size_t addr_len) {
    const size_t start = out.size();
    auto put = [&](uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    auto record = [&](uint8_t code, int dev, int iface) {
        out.push_back(code);
        out.push_back(static_cast<uint8_t>(dev));
        out.push_back(static_cast<uint8_t>(iface));
        for (int i = 0; i < dev + iface; ++i) out.push_back(static_cast<uint8_t>(n * 7 + i));
    };
    out.push_back('u');
    out.push_back('f');
    out.push_back(3);
    out.push_back(0x80 | 2);
    put(0x5100000000000000ULL | n, 8);
    put(n, 4);
    put(0, 4);  // checksum, below
    record(1, 8, 8);
    record(7, 6, 2);
    uint32_t h = 2166136261u;
    for (size_t i = start; i < out.size(); ++i) {
        const size_t at = i - start;
        h = (h ^ (at >= 16 && at < 20 ? 0 : out[i])) * 16777619u;
    }
    for (int i = 0; i < 4; ++i) out[start + 16 + static_cast<size_t>(i)] = static_cast<uint8_t>(h >> (8 * i));
    out.resize(start + addr_len, 0);
}

// The domain's address length, as an application learns it: fi_getname of an endpoint.
size_t address_length(fid_domain *domain, fi_info *info) {
    fi_av_attr av_attr{};
    fi_cq_attr cq_attr{};
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_ep *ep = nullptr;
    size_t len = 0;
    if (fi_av_open(domain, &av_attr, &av, nullptr) == 0 &&
        fi_cq_open(domain, &cq_attr, &cq, nullptr) == 0 &&
        fi_endpoint(domain, info, &ep, nullptr) == 0 && fi_ep_bind(ep, &av->fid, 0) == 0 &&
        fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) == 0 && fi_enable(ep) == 0) {
        (void)fi_getname(&ep->fid, nullptr, &len);  // -FI_ETOOSMALL, len = the size
    }
    if (ep) fi_close(&ep->fid);
    if (cq) fi_close(&cq->fid);
    if (av) fi_close(&av->fid);
    return len;
}

size_t rss_bytes() {
    long pages = 0, resident = 0;
    FILE *f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return 0;
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
    return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

struct Env {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    std::vector<uint8_t> blobs;  // kEntries addresses laid end to end
    size_t blob_size = 0;        // the domain's address length (the stride)

    Env() {
        fi_info *hints = fi_allocinfo();
        hints->domain_attr->threading = FI_THREAD_DOMAIN;
        if (fi_getinfo(fi_version(), nullptr, nullptr, 0, hints, &info) != 0 ||
            fi_fabric(info->fabric_attr, &fabric, nullptr) != 0 ||
            fi_domain(fabric, info, &domain, nullptr) != 0) {
            std::fprintf(stderr, "av_bench: cannot open a ufi domain\n");
            std::exit(1);
        }
        fi_freeinfo(hints);
        blob_size = address_length(domain, info);
        if (blob_size < kRecordBytes) {
            std::fprintf(stderr, "av_bench: cannot learn the domain's address length\n");
            std::exit(1);
        }
        blobs.reserve(kEntries * blob_size);
        for (size_t i = 0; i < kEntries; ++i) append_blob(blobs, i, blob_size);
    }
    ~Env() {
        fi_close(&domain->fid);
        fi_close(&fabric->fid);
        fi_freeinfo(info);
    }
    fid_av *open(size_t count_hint, const char *name = nullptr) const {
        fi_av_attr attr{};
        attr.type = FI_AV_TABLE;
        attr.count = count_hint;
        attr.name = name;
        fid_av *av = nullptr;
        if (fi_av_open(domain, &attr, &av, nullptr) != 0) {
            std::fprintf(stderr, "av_bench: fi_av_open failed\n");
            std::exit(1);
        }
        return av;
    }
};

Env &env() {
    static Env e;
    return e;
}

// Inserting 1M addresses: in one call, or in calls of `batch` (state.range(0)); count hint
// state.range(1) (0: none, so the table grows chunk by chunk).
void BM_Insert1M(benchmark::State &state) {
    Env &e = env();
    const size_t batch = static_cast<size_t>(state.range(0));
    const size_t hint = static_cast<size_t>(state.range(1));
    double rss_per_entry = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const size_t before = rss_bytes();
        fid_av *av = e.open(hint);
        state.ResumeTiming();
        for (size_t done = 0; done < kEntries; done += batch) {
            const size_t n = std::min(batch, kEntries - done);
            if (fi_av_insert(av, e.blobs.data() + done * e.blob_size, n, nullptr, 0, nullptr) !=
                static_cast<int>(n)) {
                state.SkipWithError("insert failed");
                break;
            }
        }
        state.PauseTiming();
        rss_per_entry = static_cast<double>(rss_bytes() - before) / kEntries;
        fi_close(&av->fid);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEntries));
    state.counters["rss_bytes_per_entry"] = rss_per_entry;
    state.counters["overhead_bytes_per_entry"] = rss_per_entry - static_cast<double>(kRecordBytes);
    state.counters["address_bytes"] = static_cast<double>(e.blob_size);
}
BENCHMARK(BM_Insert1M)
    ->Args({1000000, 1000000})
    ->Args({1000000, 0})
    ->Args({1000, 0})
    ->Args({1, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// A named (shared-memory) AV.
void BM_InsertShared1M(benchmark::State &state) {
    Env &e = env();
    const std::string name = "av-bench-" + std::to_string(getpid());
    for (auto _ : state) {
        state.PauseTiming();
        fid_av *av = e.open(kEntries, name.c_str());
        state.ResumeTiming();
        if (fi_av_insert(av, e.blobs.data(), kEntries, nullptr, 0, nullptr) !=
            static_cast<int>(kEntries)) {
            state.SkipWithError("insert failed");
        }
        state.PauseTiming();
        fi_close(&av->fid);
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEntries));
}
BENCHMARK(BM_InsertShared1M)->Unit(benchmark::kMillisecond)->Iterations(3);

// Lookups of random entries of a 1M AV.
void BM_Lookup(benchmark::State &state) {
    Env &e = env();
    fid_av *av = e.open(kEntries);
    fi_av_insert(av, e.blobs.data(), kEntries, nullptr, 0, nullptr);
    std::mt19937_64 rng(1);
    uint8_t buf[512];
    for (auto _ : state) {
        size_t len = sizeof buf;
        const int rc = fi_av_lookup(av, rng() % kEntries, buf, &len);
        benchmark::DoNotOptimize(rc);
        benchmark::DoNotOptimize(buf[0]);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
    fi_close(&av->fid);
}
BENCHMARK(BM_Lookup);

void BM_Straddr(benchmark::State &state) {
    Env &e = env();
    fid_av *av = e.open(16);
    std::mt19937_64 rng(2);
    char buf[256];
    for (auto _ : state) {
        size_t len = sizeof buf;
        const char *s =
            fi_av_straddr(av, e.blobs.data() + (rng() % kEntries) * e.blob_size, buf, &len);
        benchmark::DoNotOptimize(s);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
    fi_close(&av->fid);
}
BENCHMARK(BM_Straddr);

}  // namespace

BENCHMARK_MAIN();
