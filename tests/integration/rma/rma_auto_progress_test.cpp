// An OpenSHMEM-style barrier between two processes under FI_PROGRESS_AUTO: each round, each
// process writes the round's number (8 bytes, fi_inject_write) into its peer's flag and into
// its own (an AV entry of its own name), then waits for both flags in memory while calling
// only fi_cntr_read / fi_cntr_wait on its FI_RMA_EVENT target counter (bound to the endpoint
// with FI_REMOTE_WRITE, or to the region): no CQ is read, so only the progress threads (and
// the counter's progress, when it has the endpoint) apply the writes. A write that is left
// in a FIFO while every progress thread sleeps (a lost wake-up) fails the round's bound.
// Meson runs it over shared memory and, as a control, over tcp and self.
#include "../msg/two_process.h"

#include <rdma/fi_rma.h>

#include <gtest/gtest.h>

namespace {

using namespace ufi::two_process;

constexpr int kRounds = 3000;
constexpr int kRoundMs = 3000;  // one round's bound: a round takes microseconds
constexpr uint64_t kKey = 0x5157;

// Where a process's flags are: its peer learns it over the socket.
struct Flags {
    uint64_t base;  // what writers name flags[0] with (address or 0)
    uint64_t key;
};

// Where the flags' writes land and what counts them: the endpoint that writes (its counter
// bound FI_REMOTE_WRITE), the region (its counter bound with fi_mr_bind), or a second endpoint
// of each process that only receives (OpenSHMEM's target endpoint, counter bound to it).
enum class CntrOn { kEndpoint, kRegion, kTargetEndpoint };

// The target counter (one process per child: a global is the child's own).
fid_cntr *g_cntr = nullptr;

int open_cntr(Side &s) {
    const char *role = s.role;
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    attr.wait_obj = FI_WAIT_UNSPEC;  // fi_cntr_wait sleeps
    CHECK(fi_cntr_open(s.domain, &attr, &g_cntr, nullptr) == 0);
    return 0;
}

int bind_cntr_to_ep(Side &s) {
    const char *role = s.role;
    CHECK(open_cntr(s) == 0);
    CHECK(fi_ep_bind(s.ep, &g_cntr->fid, FI_REMOTE_WRITE) == 0);
    return 0;
}

uint64_t load(const uint64_t &v) { return __atomic_load_n(&v, __ATOMIC_ACQUIRE); }

int barrier(const char *role, int sock, CntrOn on) {
    Side s{role, sock};
    s.progress = FI_PROGRESS_AUTO;
    if (on == CntrOn::kEndpoint) s.before_enable = bind_cntr_to_ep;
    CHECK(open_side(s, FI_RMA | FI_RMA_EVENT) == 0);
    CHECK(s.info->domain_attr->data_progress == FI_PROGRESS_AUTO);
    const bool virt = (s.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    // flags[0]: the peer writes it; flags[1]: this process, through its own name.
    alignas(64) uint64_t flags[2] = {0, 0};
    fid_mr *mr = nullptr;
    CHECK(fi_mr_reg(s.domain, flags, sizeof flags, FI_REMOTE_WRITE, 0, kKey, 0, &mr, nullptr) == 0);
    if (on == CntrOn::kRegion) {
        CHECK(open_cntr(s) == 0);
        CHECK(fi_mr_bind(mr, &g_cntr->fid, FI_REMOTE_WRITE) == 0);
    }
    fid_ep *target = s.ep;
    fi_addr_t to_peer = s.peer, self = FI_ADDR_NOTAVAIL;
    if (on == CntrOn::kTargetEndpoint) {
        CHECK(fi_endpoint(s.domain, s.info, &target, nullptr) == 0);
        CHECK(fi_ep_bind(target, &s.av->fid, 0) == 0);
        CHECK(fi_ep_bind(target, &s.cq->fid, FI_TRANSMIT | FI_RECV) == 0);  // (never read)
        CHECK(open_cntr(s) == 0);
        CHECK(fi_ep_bind(target, &g_cntr->fid, FI_REMOTE_WRITE) == 0);
        CHECK(fi_enable(target) == 0);
    }
    const Flags mine{virt ? reinterpret_cast<uint64_t>(flags) : 0, fi_mr_key(mr)};
    Flags theirs{};
    CHECK(s.io(const_cast<Flags *>(&mine), sizeof mine, true) && s.io(&theirs, sizeof theirs, false));
    size_t len = 0;
    CHECK(fi_getname(&target->fid, nullptr, &len) == -FI_ETOOSMALL);
    std::vector<uint8_t> name(len), peer_name(len);
    CHECK(fi_getname(&target->fid, name.data(), &len) == 0);
    CHECK(fi_av_insert(s.av, name.data(), 1, &self, 0, nullptr) == 1);
    if (on == CntrOn::kTargetEndpoint) {
        CHECK(s.io(name.data(), len, true) && s.io(peer_name.data(), len, false));
        CHECK(fi_av_insert(s.av, peer_name.data(), 1, &to_peer, 0, nullptr) == 1);
    }
    CHECK(s.sync());

    // Posts an injected write, retrying (bounded) while the lane is full; only the counter
    // is called meanwhile.
    const auto write = [&](const uint64_t &v, fi_addr_t to, uint64_t at, uint64_t key) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRoundMs);
        for (;;) {
            const ssize_t rc = fi_inject_write(s.ep, &v, sizeof v, to, at, key);
            if (rc != -FI_EAGAIN || std::chrono::steady_clock::now() > deadline) return rc;
            (void)fi_cntr_read(g_cntr);
            sched_yield();
        }
    };
    for (uint64_t r = 1; r <= kRounds; ++r) {
        CHECK(write(r, to_peer, theirs.base, theirs.key) == 0);
        CHECK(write(r, self, mine.base + 8, mine.key) == 0);
        // The two flags of this round, by reading the counter (even rounds) or waiting on it
        // (odd rounds: two writes a round reach this process's region).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRoundMs);
        while (load(flags[0]) < r || load(flags[1]) < r) {
            if (std::chrono::steady_clock::now() > deadline) {
                std::fprintf(stderr,
                             "[%s %d] round %llu: flags stay %llu (peer) and %llu (self) after "
                             "%d ms; target counter %llu\n",
                             role, int(getpid()), static_cast<unsigned long long>(r),
                             static_cast<unsigned long long>(load(flags[0])),
                             static_cast<unsigned long long>(load(flags[1])), kRoundMs,
                             static_cast<unsigned long long>(fi_cntr_read(g_cntr)));
                return 1;
            }
            if (r % 2 == 0) {
                (void)fi_cntr_read(g_cntr);
                sched_yield();  // (the progress threads need the cores too)
            } else {
                const int rc = fi_cntr_wait(g_cntr, 2 * r - 1, 100);
                CHECK(rc == 0 || rc == -FI_ETIMEDOUT);
            }
        }
    }
    // Every write counted (the count may follow the bytes by a moment).
    CHECK(fi_cntr_wait(g_cntr, 2 * kRounds, kRoundMs) == 0);
    CHECK(s.sync());
    CHECK(fi_cntr_read(g_cntr) == 2 * kRounds);
    fi_close(&mr->fid);
    if (target != s.ep) CHECK(fi_close(&target->fid) == 0);
    CHECK(fi_close(&s.ep->fid) == 0);  // (the counter before the domain, after its endpoints)
    s.ep = nullptr;
    CHECK(fi_close(&g_cntr->fid) == 0);
    close_side(s);
    return 0;
}

int barrier_cntr_on_ep(const char *role, int sock, bool) { return barrier(role, sock, CntrOn::kEndpoint); }
int barrier_cntr_on_mr(const char *role, int sock, bool) { return barrier(role, sock, CntrOn::kRegion); }
int barrier_target_ep(const char *role, int sock, bool) {
    return barrier(role, sock, CntrOn::kTargetEndpoint);
}

TEST(RmaAutoProgress, BarrierWithWritesToSelfCounterOnEndpoint) {
    const PairResult r = run_pair(barrier_cntr_on_ep, "A", "B");
    EXPECT_EQ(r.a, 0);
    EXPECT_EQ(r.b, 0);
}

TEST(RmaAutoProgress, BarrierWithWritesToSelfCounterOnRegion) {
    const PairResult r = run_pair(barrier_cntr_on_mr, "A", "B");
    EXPECT_EQ(r.a, 0);
    EXPECT_EQ(r.b, 0);
}

TEST(RmaAutoProgress, BarrierWithWritesToSelfTargetEndpoints) {
    const PairResult r = run_pair(barrier_target_ep, "A", "B");
    EXPECT_EQ(r.a, 0);
    EXPECT_EQ(r.b, 0);
}

}  // namespace
