// A shared-memory FIFO element claimed by a writer and never written (a writer killed in the
// middle of a send) no longer holds the messages behind it for ever: the receiver skips it
// after UFI_SHM_HOLE_TIMEOUT (meson sets 1000 ms, and peer checks every 200 ms), drops it as an
// unknown message, and the sender's next message arrives (transports/iface/mm_fifo_hole.h).
// The client makes the hole itself: it claims an element of the server's FIFO as UCT's writer
// does (the head's compare-and-swap) and writes nothing, then sends.
#include "two_process.h"

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"
#include "transports/lanes/mm_fifo_head.h"

#include <gtest/gtest.h>

namespace {

using namespace ufi::two_process;

constexpr int kHoleTimeoutMs = 1000;  // (meson.build's UFI_SHM_HOLE_TIMEOUT)

int run(const char *role, int sock, bool server) {
    Side s;
    CHECK(open_connected(s, role, sock) == 0);
    const ufi::runtime::proto::DataPath *dp = ufi::runtime::ep::endpoint_of(&s.ep->fid)->data_path();
    CHECK(dp != nullptr && dp->peer_count() == 1);
    fi_cq_tagged_entry e{};
    if (server) {
        uint64_t in = 0;
        CHECK(fi_trecv(s.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 2, 0, nullptr) == 0);
        CHECK(s.sync());  // the client makes the hole and sends behind it
        CHECK(s.sync());
        const auto start = std::chrono::steady_clock::now();
        CHECK(s.wait(e) == 1 && (e.flags & FI_RECV) && in == 42);
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
        std::fprintf(stderr, "[%s] the message behind the hole arrived after %lld ms\n", role,
                     static_cast<long long>(waited));
        CHECK(waited >= kHoleTimeoutMs - 100);  // (the hole held it: the test tested)
        CHECK(dp->stats().dropped_unknown_id == 1);  // the hole, published and dropped
    } else {
        const ufi::transports::AmLane &lane = dp->peer(0)->lane;
        const std::string tl = lane.resource().tl;
        CHECK(tl == "posix" || tl == "sysv");
        CHECK(s.sync());
        CHECK(ufi::transports::claim_fifo_element_for_testing(lane.handle(), lane.iface().iface.get()));
        const uint64_t out = 42;
        CHECK(s.retry([&] { return fi_tsend(s.ep, &out, 8, nullptr, s.peer, 2, nullptr); }) == 0);
        CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
        CHECK(s.sync());
    }
    const bool synced = s.sync();
    close_side(s);
    return synced ? 0 : 1;
}

TEST(FifoHole, AnElementClaimedAndNeverWrittenIsSkipped) {
    const PairResult r = run_pair(run, "server", "client");
    EXPECT_EQ(r.a, 0) << "server";
    EXPECT_EQ(r.b, 0) << "client";
}

}  // namespace
