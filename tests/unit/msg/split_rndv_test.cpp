// Rendezvous copied by both sides (SPLIT, runtime/proto/wire.h): over a transport whose zero
// copy is a CPU copy (cma), a message of at least UFI_RNDV_SPLIT bytes is read by the receiver
// up to a split point and written by the sender from there. Whatever the set (tcp: PUT; posix
// alone: streamed; UFI_RNDV_SPLIT=off: a plain GET), every byte lands where it belongs, split
// points inside a buffer of a receive or send vector included, and each side completes only
// once both copies are done. Over cma the automatic threshold is one bcopy message.
#include "data_path_of.h"
#include "msg_fixture.h"

#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"
#include "transports/transport_code.h"

#include <rdma/fi_tagged.h>

#include <atomic>
#include <cstring>
#include <thread>

namespace ufi::msg_test {
namespace {

using runtime::proto::DataPath;

// The split threshold this run's environment sets (0: off).
size_t split_threshold() {
    runtime::proto::DataPathConfig c;
    runtime::proto::read_protocol_settings(c);
    return c.rndv_split;
}

// Whether the receiver's rendezvous with its one peer copies over cma (the transport SPLIT
// shares), once a transfer opened that lane.
bool reads_over_cma(fid_ep *receiver) {
    DataPath *dp = data_path(receiver);
    if (dp->peer_count() != 1) return false;
    const auto *p = dp->peer(0);
    return p->rndv_protocol == runtime::proto::wire::kRndvGet && p->rma.connected() &&
           p->rma.iface().resource->tl == "cma";
}

class SplitRndvTest : public MsgTest {
  protected:
    // Sends `out` from A in two buffers (cut at `send_cut`) into B's three buffers (cut at
    // `cut1` and `cut2`), waits for both completions and checks every byte.
    void exchange(const std::vector<uint8_t> &out, size_t send_cut, size_t cut1, size_t cut2) {
        const size_t n = out.size();
        std::vector<uint8_t> in(n, 0);
        iovec riov[3] = {{in.data(), cut1}, {in.data() + cut1, cut2 - cut1},
                         {in.data() + cut2, n - cut2}};
        ASSERT_EQ(fi_trecvv(b_.ep, riov, nullptr, 3, FI_ADDR_UNSPEC, 11, 0, nullptr), 0);
        iovec siov[2] = {{const_cast<uint8_t *>(out.data()), send_cut},
                         {const_cast<uint8_t *>(out.data()) + send_cut, n - send_cut}};
        ASSERT_EQ(retry([&] { return fi_tsendv(a_.ep, siov, nullptr, 2, a_to_b_, 11, nullptr); }), 0);
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(b_.cq, e), 1) << n;
        EXPECT_EQ(e.len, n);
        ASSERT_EQ(wait(a_.cq, e), 1) << n;
        ASSERT_TRUE(in == out) << n << " bytes: the data differs";
    }
};

TEST_F(SplitRndvTest, EveryByteLandsWhereverTheSplitPointFalls) {
    const size_t split = split_threshold();
    struct Case {
        size_t n, send_cut, cut1, cut2;
    };
    const Case cases[] = {
        // The split point (half, down to a page) inside the receiver's first buffer, the
        // sender's second...
        {128 * 1024, 1000, 100 * 1024, 100 * 1024 + 17},
        // ...in its last one, the sender's first; an odd length.
        {(1u << 20) + 4097, 700 * 1024, 4096, 8192},
        // On a buffer boundary of both.
        {1u << 20, 512 * 1024, 256 * 1024, 512 * 1024},
        {3u << 20, 1, 2, 3},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.n);
        const uint64_t before = data_path(b_.ep)->stats().rndv_split;
        exchange(pattern(c.n, static_cast<uint8_t>(c.n)), c.send_cut, c.cut1, c.cut2);
        const uint64_t want = split != 0 && c.n >= split && reads_over_cma(b_.ep) ? 1 : 0;
        EXPECT_EQ(data_path(b_.ep)->stats().rndv_split - before, want)
            << "SPLIT where cma copies and the message reaches UFI_RNDV_SPLIT (" << split << ")";
    }
}

TEST_F(SplitRndvTest, TruncatedReceiveSplitsWhatItTakes) {
    const size_t n = 2u << 20, room = 600 * 1024;
    const auto out = pattern(n, 21);
    std::vector<uint8_t> in(room + 64, 0xee);  // the 64 bytes behind the buffer stay
    ASSERT_EQ(fi_trecv(b_.ep, in.data(), room, nullptr, FI_ADDR_UNSPEC, 12, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 12, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), -FI_EAVAIL);
    const fi_cq_err_entry err = error(b_.cq);
    EXPECT_EQ(err.err, FI_ETRUNC);
    EXPECT_EQ(err.olen, n - room);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_TRUE(std::equal(in.begin(), in.begin() + room, out.begin())) << "the bytes it took";
    EXPECT_TRUE(std::all_of(in.begin() + room, in.end(), [](uint8_t b) { return b == 0xee; }))
        << "nothing written past the buffer";
}

// With SPLIT the receive needs the sender's part, so it completes only once the sender
// progresses; with a plain GET the receiver finishes alone (PUT and streamed data need the
// sender anyway). Either way the send completes only after the receiver's reads.
TEST_F(SplitRndvTest, ReceiveCompletesOnlyWithBothCopiesDone) {
    const size_t n = 1u << 20;
    const auto out = pattern(n, 33);
    // A first message opens the zero-copy lane, so that we know which protocol runs.
    exchange(pattern(n, 1), n / 2, n / 3, n / 2 + 5);
    const bool get = reads_over_cma(b_.ep);
    const bool split = get && split_threshold() != 0 && n >= split_threshold();

    std::vector<uint8_t> in(n, 0);
    ASSERT_EQ(fi_trecv(b_.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 13, 0, nullptr), 0);
    ASSERT_EQ(fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 13, nullptr), 0);  // RTS goes
    // Only the receiver progresses for a while.
    fi_cq_tagged_entry e{};
    ssize_t rc = -FI_EAGAIN;
    const int alone_ms = split ? 100 : get ? kWaitMs : 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(alone_ms);
    while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) rc = fi_cq_read(b_.cq, &e, 1);
    if (split) {
        EXPECT_EQ(rc, -FI_EAGAIN) << "the receive waits for the sender's part";
        ASSERT_EQ(wait(b_.cq, e), 1);  // progresses both
    } else if (get) {
        ASSERT_EQ(rc, 1) << "a plain GET completes with the receiver's progress alone";
    } else {
        ASSERT_EQ(wait(b_.cq, e), 1);
    }
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_TRUE(in == out);
}

// Many in flight at once both ways, as a windowed bandwidth test or an MPI exchange has them.
TEST_F(SplitRndvTest, ManyInFlightBothWays) {
    constexpr int kCount = 12;
    const size_t n = 300 * 1024 + 11;
    std::vector<std::vector<uint8_t>> out_a, out_b, in_a(kCount, std::vector<uint8_t>(n)),
        in_b(kCount, std::vector<uint8_t>(n));
    for (int i = 0; i < kCount; ++i) {
        out_a.push_back(pattern(n, static_cast<uint8_t>(i)));
        out_b.push_back(pattern(n, static_cast<uint8_t>(i + 100)));
        ASSERT_EQ(fi_trecv(a_.ep, in_a[i].data(), n, nullptr, FI_ADDR_UNSPEC, i, 0, nullptr), 0);
        ASSERT_EQ(fi_trecv(b_.ep, in_b[i].data(), n, nullptr, FI_ADDR_UNSPEC, i, 0, nullptr), 0);
    }
    for (int i = 0; i < kCount; ++i) {
        ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out_a[i].data(), n, nullptr, a_to_b_, i, nullptr); }), 0);
        ASSERT_EQ(retry([&] { return fi_tsend(b_.ep, out_b[i].data(), n, nullptr, b_to_a_, i, nullptr); }), 0);
    }
    for (Side *s : {&a_, &b_}) {
        for (int i = 0; i < 2 * kCount; ++i) {
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait(s->cq, e), 1) << i;
        }
    }
    for (int i = 0; i < kCount; ++i) {
        EXPECT_TRUE(in_b[i] == out_a[i]) << i;
        EXPECT_TRUE(in_a[i] == out_b[i]) << i;
    }
}

// RTR (kRndvSplit) as a peer would send it to the sender, naming `decoy` as the receiver's
// buffer from the split point on.
std::vector<uint8_t> split_rtr(uint64_t send_id, uint64_t length, const std::vector<uint8_t> &decoy,
                               size_t named, const std::string &tl) {
    namespace wire = runtime::proto::wire;
    wire::RtrHdr h{};
    h.src = 0;  // the receiver, B, is the sender's peer 0
    h.protocol = wire::kRndvSplit;
    h.segments = 1;
    h.transport = transports::transport_code(tl);
    h.send_id = send_id;
    h.recv_id = 77;
    h.length = length;
    const wire::Segment seg{reinterpret_cast<uint64_t>(decoy.data()), named};
    std::vector<uint8_t> m(sizeof h + sizeof seg);
    std::memcpy(m.data(), &h, sizeof h);
    std::memcpy(m.data() + sizeof h, &seg, sizeof seg);
    return m;
}

// Answers that are not what the sender offered (a split point at 0, another transport) are
// dropped and counted: nothing is written to what they name, the receive they name is told
// (ATP with -FI_EIO: here none, so the receiver drops it too), and the real transfer goes on.
TEST_F(SplitRndvTest, AnswersThatDoNotFitTheOfferAreDropped) {
    uint64_t v = 7, got = 0;  // connected both ways first
    ASSERT_EQ(fi_trecv(b_.ep, &got, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &v, 8, nullptr, a_to_b_, 1, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    ASSERT_EQ(wait(a_.cq, e), 1);

    const size_t n = 1u << 20;
    const auto out = pattern(n, 44);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 14, nullptr); }), 0);
    ASSERT_TRUE(quiet(a_.cq, 20)) << "announced: it waits for the receiver";
    DataPath *dp = data_path(a_.ep);
    ASSERT_EQ(dp->peer_count(), 1u);
    std::vector<uint8_t> decoy(n, 0x5c);
    // Its rendezvous record: the first one the table hands out (the 8-byte message above took
    // and returned it where every message goes by rendezvous).
    const uint64_t send_id = 1;
    const uint64_t before = dp->stats().dropped_malformed;
    const uint64_t b_before = data_path(b_.ep)->stats().dropped_malformed;
    auto whole = split_rtr(send_id, n, decoy, n, "cma");         // no split point: sum == length
    auto other = split_rtr(send_id, n, decoy, n / 2, "tcp");     // not the transport offered
    auto nothing = split_rtr(send_id, n, decoy, 0, "cma");       // an empty segment
    for (auto *m : {&whole, &other, &nothing}) {
        EXPECT_TRUE(dp->deliver_for_test(runtime::proto::wire::kAmRtr, m->data(), m->size()));
    }
    EXPECT_EQ(dp->stats().dropped_malformed - before, 3u);
    EXPECT_TRUE(std::all_of(decoy.begin(), decoy.end(), [](uint8_t b) { return b == 0x5c; }))
        << "nothing was written where a dropped answer pointed";

    std::vector<uint8_t> in(n, 0);
    ASSERT_EQ(fi_trecv(b_.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 14, 0, nullptr), 0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_TRUE(in == out);
    EXPECT_TRUE(std::all_of(decoy.begin(), decoy.end(), [](uint8_t b) { return b == 0x5c; }));
    // (Where the send offered no GET (tcp: PUT), a SPLIT answer fits nothing and is dropped
    // before that.)
    EXPECT_EQ(data_path(b_.ep)->stats().dropped_malformed - b_before, reads_over_cma(b_.ep) ? 3u : 0u)
        << "B heard of each dropped answer (an ATP for a receive it does not have)";
}

// fi_close of a receiver whose sender still writes part of a buffer (SPLIT) waits for that
// part (bounded): over cma the writes land straight in the receiver's memory, which the
// application may reuse once fi_close returned. Here the sender progresses (another thread)
// only while the receiver closes.
class SplitCloseTest : public SplitRndvTest {
  protected:
    void adjust_hints(fi_info *h) override { h->domain_attr->threading = FI_THREAD_SAFE; }
};

TEST_F(SplitCloseTest, CloseWaitsForTheSendersPart) {
    const size_t n = 1u << 20;
    exchange(pattern(n, 2), n / 2, n / 3, n / 2 + 5);  // opens the zero-copy lane
    if (!(reads_over_cma(b_.ep) && split_threshold() != 0 && n >= split_threshold())) {
        GTEST_SKIP() << "no SPLIT here (its transport is not cma, or UFI_RNDV_SPLIT is off)";
    }
    const auto out = pattern(n, 55);
    std::vector<uint8_t> in(n, 0);
    ASSERT_EQ(fi_trecv(b_.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 15, 0, nullptr), 0);
    ASSERT_EQ(fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 15, nullptr), 0);  // RTS goes
    // The receiver matches and copies its part; the sender does not progress yet.
    fi_cq_tagged_entry e{};
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    while (std::chrono::steady_clock::now() < until) ASSERT_EQ(fi_cq_read(b_.cq, &e, 1), -FI_EAGAIN);

    std::atomic<bool> stop{false};
    std::thread sender([&] {
        fi_cq_tagged_entry none;
        while (!stop.load()) (void)fi_cq_read(a_.cq, &none, 0);  // progress only
    });
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(fi_close(&b_.ep->fid), 0);
    const auto closed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - t0).count();
    b_.ep = nullptr;
    const std::vector<uint8_t> at_close = in;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the sender goes on meanwhile
    stop.store(true);
    sender.join();
    EXPECT_LT(closed_ms, 1000) << "the sender's part came well within the bound";
    EXPECT_TRUE(at_close == out) << "both parts were in place when fi_close returned";
    EXPECT_TRUE(in == at_close) << "nothing written after fi_close returned";
    // The receive completed during the close (its CQ is still open), the send after it.
    ASSERT_EQ(fi_cq_read(b_.cq, &e, 1), 1);
    EXPECT_EQ(e.len, n);
    ASSERT_EQ(wait(a_.cq, e), 1);
}

// The automatic rendezvous threshold for GET over cma is one bcopy message (UCT's estimate of
// cma's overhead would put it near 30 KiB; runtime/proto/rndv.cpp, choose_rndv): one byte more
// than the lane carries in a bcopy goes by rendezvous, and arrives whole.
TEST_F(SplitRndvTest, OverCmaTheAutomaticThresholdIsOneBcopy) {
    exchange(pattern(40000, 1), 20000, 10000, 30000);  // a rendezvous: B's lane to read opens
    runtime::proto::DataPathConfig c;
    runtime::proto::read_protocol_settings(c);
    if (c.rndv_thresh != 0 || !reads_over_cma(b_.ep)) {
        GTEST_SKIP() << "UFI_RNDV_THRESH is set, or this set's rendezvous is not GET over cma";
    }
    for (fid_ep *ep : {a_.ep, b_.ep}) {  // (both ends chose alike, over the same transports)
        const auto *p = data_path(ep)->peer(0);
        EXPECT_EQ(p->rndv_thresh, p->lane.max_bcopy());
        EXPECT_EQ(p->rma_thresh, p->lane.max_bcopy());
    }
    DataPath *dp = data_path(a_.ep);
    const size_t bcopy = dp->peer(0)->lane.max_bcopy();
    const uint64_t before = dp->stats().rndv_sends;
    exchange(pattern(bcopy + 1, 3), bcopy / 2, bcopy / 3, 2 * bcopy / 3);
    EXPECT_EQ(dp->stats().rndv_sends, before + 1) << "one byte above one bcopy went eager";
    exchange(pattern(bcopy - 64, 5), 100, 200, 300);  // within one bcopy: eager
    EXPECT_EQ(dp->stats().rndv_sends, before + 1) << "a message within one bcopy went by rendezvous";
}

}  // namespace
}  // namespace ufi::msg_test
