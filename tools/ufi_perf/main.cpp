// ufi_perf: messaging benchmarks between two processes through ufi's public API, with
// ucx_perftest's core flags (options.h) so the two line up in one run (docs/performance.md).
#include "endpoint.h"
#include "group.h"
#include "oob.h"
#include "options.h"
#include "report.h"
#include "runner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace {

constexpr int kConnectTimeoutS = 60;

// What the client tells the server, so both run the same test.
struct Setup {
    uint32_t magic;
    uint32_t test;
    uint64_t iters;
    uint64_t warmup;
    uint32_t window;
    uint32_t nsizes;
    uint32_t ep_type;
    uint32_t reserved;
};
constexpr uint32_t kMagic = 0x75667032;  // "ufp2"

int fail(const char *what, const std::string &error) {
    std::fprintf(stderr, "ufi_perf: %s: %s\n", what, error.c_str());
    return 1;
}

}  // namespace

int main(int argc, char **argv) {
    using namespace ufi::perf;
    Options o;
    std::string error;
    bool help = false;
    if (!parse_options(argc, argv, o, error, help)) {
        if (help) {
            std::fputs(usage(), stdout);
            return 0;
        }
        std::fprintf(stderr, "ufi_perf: %s\n%s", error.c_str(), usage());
        return 2;
    }
    if (o.procs != 0) {
        if (!o.server.empty()) {
            std::fprintf(stderr, "ufi_perf: --procs starts its own processes: give no SERVER\n");
            return 2;
        }
        return run_group(o);
    }
    if (o.server.empty()) {
        // mpirun -np N ufi_perf: every process started by the launcher is one of the group.
        int status = 0;
        if (run_pmix_group_if_launched(o, status)) return status;
    }
    if (o.ucp) {
        std::fprintf(stderr, "ufi_perf: --ucp measures a group (--procs N, or under mpirun); for "
                             "a pair, ucx_perftest gives UCP's figures\n%s", usage());
        return 2;
    }
    const bool client = !o.server.empty();

    Oob oob;
    if (client ? !oob.connect_to(o.server, o.port, kConnectTimeoutS, error)
               : !oob.accept_one(o.port, kConnectTimeoutS, error)) {
        return fail("address exchange", error);
    }
    // The client's test setup wins.
    if (client) {
        const Setup s{kMagic, static_cast<uint32_t>(o.test), o.iters, o.warmup, o.window,
                      static_cast<uint32_t>(o.sizes.size()), static_cast<uint32_t>(o.ep_type), 0};
        if (!oob.send(&s, sizeof s) || !oob.send(o.sizes.data(), o.sizes.size() * sizeof(size_t)))
            return fail("address exchange", "the server left");
    } else {
        Setup s{};
        if (!oob.recv(&s, sizeof s) || s.magic != kMagic || s.nsizes == 0 || s.nsizes > 4096 ||
            s.ep_type > static_cast<uint32_t>(EpType::Msg))
            return fail("address exchange", "the client is not this version of ufi_perf");
        o.ep_type = static_cast<EpType>(s.ep_type);
        o.test = static_cast<Test>(s.test);
        o.iters = s.iters;
        o.warmup = s.warmup;
        o.window = s.window;
        o.sizes.resize(s.nsizes);
        if (!oob.recv(o.sizes.data(), o.sizes.size() * sizeof(size_t)))
            return fail("address exchange", "the client left");
    }

    Endpoint ep;
    if (o.ep_type == EpType::Msg) {
        // The server's passive endpoint's name goes over the out-of-band channel; the
        // connection itself is libfabric's (fi_connect, fi_accept).
        if (client) {
            std::vector<uint8_t> server;
            if (!oob.recv_blob(server)) return fail("address exchange", "the server left");
            if (!ep.connect(is_rma(o.test), server, kConnectTimeoutS * 1000, error))
                return fail("connecting", error);
        } else {
            if (!ep.listen(is_rma(o.test), error)) return fail("listening", error);
            if (!oob.send_blob(ep.listen_name())) return fail("address exchange", "the client left");
            if (!ep.accept(kConnectTimeoutS * 1000, error)) return fail("accepting", error);
        }
    } else {
        if (!ep.open(is_rma(o.test), error)) return fail("opening the endpoint", error);
        std::vector<uint8_t> peer;
        if (!oob.send_blob(ep.name()) || !oob.recv_blob(peer)) {
            return fail("address exchange", "the peer left");
        }
        if (!ep.insert_peer(peer, error)) return fail("address exchange", error);
    }
    // RMA tests: each side's window for the largest size, and the peer's key and address.
    RemoteWindow remote;
    if (is_rma(o.test)) {
        size_t max = 1;
        for (size_t n : o.sizes) max = std::max(max, n);
        if (!ep.register_window(max, error)) return fail("registering the window", error);
        const RemoteWindow mine{ep.window_key(), ep.window_addr()};
        if (!oob.send(&mine, sizeof mine) || !oob.recv(&remote, sizeof remote)) {
            return fail("address exchange", "the peer left");
        }
    }

    if (client) print_header(o, ep.domain_name());
    for (size_t size : o.sizes) {
        Result r;
        if (!run_size(ep, oob, o, size, client, remote, r, error)) {
            return fail(("size " + std::to_string(size)).c_str(), error);
        }
        if (client) print_result(o, ep.domain_name(), r);
    }
    oob.barrier();  // neither closes while the other still runs
    return 0;
}
