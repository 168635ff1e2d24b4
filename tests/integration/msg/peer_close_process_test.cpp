// A peer that closes its endpoint (fi_close) while the other side still has operations
// towards it, its process staying alive: the other side's operations complete with an error
// within a bound (a living process is no sign of a living endpoint), nothing aborts, and it
// keeps working with a new endpoint. Built into test_peer_failure, so meson runs it over
// shared memory (posix, sysv, cma) and over tcp on loopback, with UFI_PEER_CHECK_INTERVAL=200.
#include "two_process.h"

#include <rdma/fi_rma.h>

#include <gtest/gtest.h>

namespace {

using namespace ufi::two_process;

constexpr size_t kBig = 4 << 20;  // above every rendezvous threshold: zero copy where it can
constexpr int kRounds = 10;       // the race it tests shows in most runs, not all

// Where B's region is, as B tells A.
struct Where {
    uint64_t addr;
    uint64_t key;
};

// A (initiator) posts a 4 MiB fi_read from B and a 4 MiB send to B, progresses for 10 ms and
// closes its endpoint; B (target) has the zero-copy operations that serve them in flight
// (over cma: its puts into A's read buffer, its gets from A's send buffer) when A's close
// arrives. B must not abort: its receive completes (whole, or with an error), and the next
// endpoint A opens talks to it. kRounds times, then a last round trip.
int closes_mid_rendezvous(const char *role, int sock, bool a) {
    // Alive for the whole process: B's operations may still move bytes to and from them after
    // A's endpoint closed (cma cannot cancel a copy it queued).
    static const std::vector<uint8_t> out = pattern(kBig, 7);
    static std::vector<uint8_t> back(kBig), region(kBig, 0x5a), in(kBig);
    Side s;
    Where where{};
    fid_mr *mr = nullptr;
    for (int round = 0;; ++round) {
        if (a || round == 0) {
            if (a) s = Side{};
            CHECK(open_connected(s, role, sock, FI_RMA) == 0);
        } else {
            CHECK(exchange_names(s) == 0);  // A's new endpoint
            CHECK(round_trip(s) == 0);      // B works with it
        }
        if (round == kRounds) break;
        if (!a) {
            if (mr == nullptr) {
                CHECK(fi_mr_reg(s.domain, region.data(), region.size(), FI_REMOTE_READ, 0, 0x79,
                                0, &mr, nullptr) == 0);
            }
            const bool virt = (s.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
            where = {virt ? reinterpret_cast<uint64_t>(region.data()) : 0, fi_mr_key(mr)};
            int ctx = 0;
            CHECK(fi_trecv(s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 20, 0, &ctx) == 0);
            CHECK(s.io(&where, sizeof where, true));
            uint8_t b = 0;
            CHECK(s.io(&b, 1, false));  // A closed its endpoint (B progressed meanwhile)
            size_t errors = 0;
            bool failed = false;
            CHECK(collect(s, 1, &ctx, errors, failed));
            if (!failed) CHECK(in == out);
            std::fprintf(stderr, "[%s] round %d: the receive %s\n", role, round,
                         failed ? "failed" : "completed");
            continue;
        }
        CHECK(s.io(&where, sizeof where, false));
        int r_ctx = 0, s_ctx = 0;
        CHECK(s.retry([&] {
                  return fi_read(s.ep, back.data(), back.size(), nullptr, s.peer, where.addr,
                                 where.key, &r_ctx);
              }) == 0);
        CHECK(s.retry([&] {
                  return fi_tsend(s.ep, out.data(), out.size(), nullptr, s.peer, 20, &s_ctx);
              }) == 0);
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
        while (std::chrono::steady_clock::now() < until) {
            fi_cq_tagged_entry e[4];
            (void)fi_cq_read(s.cq, e, 4);
            fi_cq_err_entry err{};
            (void)fi_cq_readerr(s.cq, &err, 0);
        }
        close_side(s);  // operations outstanding: dropped (fi_endpoint(3))
        uint8_t b = 1;
        CHECK(s.io(&b, 1, true));
    }
    if (mr != nullptr) CHECK(fi_close(&mr->fid) == 0);
    CHECK(s.sync());  // both done before either closes
    close_side(s);
    return 0;
}

// A sends 4 MiB to B before the two ever talked; B posts a receive, progresses
// `progress_calls` times (0: A's handshake request still waits, unread, in B's transport; 1: it
// was answered) and closes its endpoint, its process staying alive and its other objects open.
// A's send completes with an error within the bound instead of waiting for B forever.
int receiver_closes_before_first_contact(const char *role, int sock, bool a, int progress_calls) {
    Side s;
    s.role = role;
    s.sock = sock;
    s.wait_obj = FI_WAIT_UNSPEC;
    CHECK(open_side(s) == 0);
    uint8_t b = 1;
    if (a) {
        static const std::vector<uint8_t> out = pattern(kBig, 9);
        int ctx = 0;
        CHECK(s.retry([&] { return fi_tsend(s.ep, out.data(), out.size(), nullptr, s.peer, 30, &ctx); }) == 0);
        CHECK(::write(s.sock, &b, 1) == 1);  // sent
        CHECK(::read(s.sock, &b, 1) == 1);   // (not progressing) B closed its endpoint
        size_t errors = 0;
        bool failed = false;
        CHECK(collect(s, 1, &ctx, errors, failed));
        CHECK(failed);
        CHECK(::write(s.sock, &b, 1) == 1);  // done: B may go
        close_side(s);
        return 0;
    }
    CHECK(::read(s.sock, &b, 1) == 1);  // A sent (this side not progressing)
    std::vector<uint8_t> in(kBig);
    CHECK(fi_trecv(s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 30, 0, nullptr) == 0);
    for (int i = 0; i < progress_calls; ++i) {
        fi_cq_tagged_entry e{};
        (void)fi_cq_read(s.cq, &e, 1);
    }
    CHECK(fi_close(&s.ep->fid) == 0);
    s.ep = nullptr;
    CHECK(::write(s.sock, &b, 1) == 1);
    CHECK(::read(s.sock, &b, 1) == 1);  // A's send completed (or A gave up): alive till then
    close_side(s);
    return 0;
}

int receiver_closes_unread(const char *role, int sock, bool a) {
    return receiver_closes_before_first_contact(role, sock, a, 0);
}

int receiver_closes_after_answering(const char *role, int sock, bool a) {
    return receiver_closes_before_first_contact(role, sock, a, 1);
}

void expect_both_pass(int (*run)(const char *, int, bool)) {
    const PairResult r = run_pair(run, "A", "B");
    EXPECT_EQ(r.a, 0) << "A";
    EXPECT_EQ(r.b, 0) << "B";
}

TEST(PeerCloseProcess, InitiatorClosesMidRendezvous) {
    expect_both_pass(closes_mid_rendezvous);
}

TEST(PeerCloseProcess, ReceiverClosesWithTheRequestUnread) {
    expect_both_pass(receiver_closes_unread);
}

TEST(PeerCloseProcess, ReceiverClosesAfterOneProgress) {
    expect_both_pass(receiver_closes_after_answering);
}

}  // namespace
