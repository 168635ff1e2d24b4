// The lane a peer's traffic takes: with UFI_CONNECT_TO_EP naming the transport (meson's
// *_p2p sets name tcp), both endpoints connect endpoint to endpoint after the handshake on a
// connect-to-iface lane and move their traffic there; otherwise they stay on the first lane.
// Both sides start at once (crossing handshakes), and messages sent before, during and after
// the move arrive whole and in order.
#include "data_path_of.h"
#include "msg_fixture.h"

#include "base/config/config.h"
#include "runtime/proto/data_path.h"
#include "transports/address.h"
#include "transports/lanes/mm_fifo_head.h"
#include "transports/lanes/rma_lane.h"

#include <algorithm>

namespace ufi::msg_test {
namespace {

// An address as a peer needs it: self, which only the endpoint itself uses, left out.
transports::address::EndpointAddress without_self(transports::address::EndpointAddress a) {
    std::erase_if(a.records, [](const auto &r) { return r.tl == "self"; });
    return a;
}

bool policy_names(const std::string &tl) {
    const auto &names = config::registry().get_list("UFI_CONNECT_TO_EP");
    return std::find(names.begin(), names.end(), tl) != names.end();
}

TEST_F(MsgTest, CrossingHandshakesMoveToTheEndpointToEndpointLaneInOrder) {
    constexpr int kCount = 200;
    constexpr size_t kLen = 64;
    std::vector<std::vector<uint8_t>> out_a(kCount), out_b(kCount), in_a(kCount), in_b(kCount);
    for (int i = 0; i < kCount; ++i) {
        in_a[i].assign(kLen, 0);
        in_b[i].assign(kLen, 0);
        ASSERT_EQ(fi_trecv(a_.ep, in_a[i].data(), kLen, nullptr, FI_ADDR_UNSPEC, i, 0, nullptr), 0);
        ASSERT_EQ(fi_trecv(b_.ep, in_b[i].data(), kLen, nullptr, FI_ADDR_UNSPEC, i, 0, nullptr), 0);
    }
    // Both send before either is progressed: two requests cross; the later sends go while the
    // lanes change.
    for (int i = 0; i < kCount; ++i) {
        out_a[i] = pattern(kLen, static_cast<uint8_t>(i));
        out_b[i] = pattern(kLen, static_cast<uint8_t>(i + 101));
        ASSERT_EQ(retry([&] {
                      return fi_tsend(a_.ep, out_a[i].data(), kLen, nullptr, a_to_b_, i, nullptr);
                  }),
                  0);
        ASSERT_EQ(retry([&] {
                      return fi_tsend(b_.ep, out_b[i].data(), kLen, nullptr, b_to_a_, i, nullptr);
                  }),
                  0);
    }
    // Every receive completes with the message of its tag (tags are matched exactly, so an
    // overtaken message would still land right: order is checked by completion order).
    for (Side *s : {&a_, &b_}) {
        for (int i = 0; i < kCount * 2; ++i) {  // kCount sends and kCount receives each
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait(s->cq, e), 1) << i;
        }
    }
    for (int i = 0; i < kCount; ++i) {
        EXPECT_EQ(in_b[i], out_a[i]) << i;
        EXPECT_EQ(in_a[i], out_b[i]) << i;
    }
    for (Side *s : {&a_, &b_}) {
        runtime::proto::DataPath *dp = data_path(s->ep);
        ASSERT_NE(dp, nullptr);
        ASSERT_EQ(dp->peer_count(), 1u);
        const auto *peer = dp->peer(0);
        const std::string tl = peer->lane.resource().tl;
        const bool expected = policy_names(tl);
        EXPECT_EQ(dp->stats().p2p_lanes, expected ? 1u : 0u) << tl;
        EXPECT_EQ(peer->lane.p2p(), expected) << tl;
        EXPECT_EQ(dp->stats().dropped_unknown_src, 0u) << "nothing overtook the handshake";
        EXPECT_EQ(dp->stats().dropped_malformed, 0u);
        // Each knew the other by its name: the crossing handshakes brought the full address.
        const fid_ep *other = s == &a_? b_.ep : a_.ep;
        EXPECT_EQ(without_self(peer->address),
                  without_self(runtime::ep::endpoint_of(const_cast<fid_t>(&other->fid))->address()));
    }
}

// Names leave records out (cma here, to stay within FI_NAME_MAX): the handshake brings the
// rest, so the side that only answers and the side that called both end up with the peer's
// full address, and a large message then goes by the zero-copy get cma serves.
TEST_F(MsgTest, TheHandshakeBringsWhatTheNameLeftOut) {
    const auto &a_full = runtime::ep::endpoint_of(&a_.ep->fid)->address();
    const auto &b_full = runtime::ep::endpoint_of(&b_.ep->fid)->address();
    size_t len = 0;
    (void)fi_getname(&b_.ep->fid, nullptr, &len);
    std::vector<uint8_t> name(len);
    ASSERT_EQ(fi_getname(&b_.ep->fid, name.data(), &len), 0);
    transports::address::EndpointAddress b_name;
    ASSERT_TRUE(transports::address::unpack(name.data(), name.size(), b_name));
    EXPECT_LE(name.size(), size_t{FI_NAME_MAX});

    // One way first: A calls B, B only answers.
    uint64_t word = 0x5eed;
    uint64_t got = 0;
    ASSERT_EQ(fi_trecv(b_.ep, &got, sizeof got, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &word, sizeof word, nullptr, a_to_b_, 1, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(got, word);
    runtime::proto::DataPath *da = data_path(a_.ep);
    runtime::proto::DataPath *db = data_path(b_.ep);
    ASSERT_EQ(da->peer_count(), 1u);
    ASSERT_EQ(db->peer_count(), 1u);
    EXPECT_EQ(without_self(da->peer(0)->address), without_self(b_full)) << "the reply brought B's full address";
    EXPECT_EQ(without_self(db->peer(0)->address), without_self(a_full)) << "the request carried A's";
    EXPECT_FALSE(da->peer(0)->address.partial);

    // A message above the rendezvous threshold, B to A and A to B: where both have cma, by get.
    const bool cma = std::any_of(a_full.records.begin(), a_full.records.end(),
                                 [](const auto &r) { return r.tl == "cma"; });
    const bool named_cma = std::any_of(b_name.records.begin(), b_name.records.end(),
                                       [](const auto &r) { return r.tl == "cma"; });
    if (cma && !named_cma) {
        EXPECT_TRUE(b_name.partial);
    }
    const size_t big = 4u << 20;
    std::vector<uint8_t> out = pattern(big, 3), in(big, 0);
    ASSERT_EQ(fi_trecv(a_.ep, in.data(), big, nullptr, FI_ADDR_UNSPEC, 2, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(b_.ep, out.data(), big, nullptr, b_to_a_, 2, nullptr); }), 0);
    ASSERT_EQ(wait(a_.cq, e), 1);
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(in, out);
    const auto &sa = da->stats();
    EXPECT_EQ(sa.rndv_get + sa.rndv_put + sa.rndv_am, 1u) << "4 MiB goes by rendezvous";
    if (cma) {
        EXPECT_EQ(sa.rndv_get, 1u) << "cma, learned at the handshake, serves the get";
    }
}

// Messages sent in order on one side arrive in posting order across the move (FI_ORDER_SAS):
// untagged receives take them in arrival order.
TEST_F(MsgTest, OrderHoldsAcrossTheLaneMove) {
    constexpr int kCount = 300;
    std::vector<uint32_t> got(kCount, UINT32_MAX);
    for (int i = 0; i < kCount; ++i) {
        ASSERT_EQ(fi_recv(b_.ep, &got[i], sizeof got[i], nullptr, FI_ADDR_UNSPEC, nullptr), 0);
    }
    std::vector<uint32_t> seq(kCount);
    for (int i = 0; i < kCount; ++i) {
        seq[i] = static_cast<uint32_t>(i);
        ASSERT_EQ(retry([&] { return fi_send(a_.ep, &seq[i], sizeof seq[i], nullptr, a_to_b_, nullptr); }),
                  0);
        if (i % 7 == 0) progress_all();  // some go before the move, some during, some after
    }
    for (int i = 0; i < kCount; ++i) {
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(b_.cq, e), 1) << i;
        ASSERT_EQ(wait(a_.cq, e), 1) << i;
    }
    for (int i = 0; i < kCount; ++i) EXPECT_EQ(got[i], static_cast<uint32_t>(i)) << i;
}

// Zero copy over the AM lane's own transport (tcp puts here, over either connection style;
// rc gets and puts, and connects no other way) goes on that lane's endpoint: no second
// connection. Over another transport (cma beside posix) the zero-copy lane is one of its own.
// Large messages both ways arrive whole either way.
TEST_F(MsgTest, ZeroCopyRidesTheAmLaneWhereItsTransportServesIt) {
    const size_t big = 2u << 20;
    std::vector<uint8_t> out_a = pattern(big, 5), out_b = pattern(big, 9), in_a(big, 0), in_b(big, 0);
    ASSERT_EQ(fi_trecv(b_.ep, in_b.data(), big, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr), 0);
    ASSERT_EQ(fi_trecv(a_.ep, in_a.data(), big, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out_a.data(), big, nullptr, a_to_b_, 7, nullptr); }), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(b_.ep, out_b.data(), big, nullptr, b_to_a_, 7, nullptr); }), 0);
    for (Side *s : {&a_, &b_}) {
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(s->cq, e), 1);
        ASSERT_EQ(wait(s->cq, e), 1);
    }
    EXPECT_EQ(in_b, out_a);
    EXPECT_EQ(in_a, out_b);
    for (Side *s : {&a_, &b_}) {
        runtime::proto::DataPath *dp = data_path(s->ep);
        ASSERT_EQ(dp->peer_count(), 1u);
        const auto *peer = dp->peer(0);
        const auto &st = dp->stats();
        EXPECT_EQ(st.rndv_get + st.rndv_put + st.rndv_am, 1u) << "2 MiB goes by rendezvous";
        const bool served = transports::lane_serves_rma(peer->lane, transports::RmaKind::kGet) ||
                            transports::lane_serves_rma(peer->lane, transports::RmaKind::kPut);
        const std::string tl = peer->lane.resource().tl;
        if (served) {
            // Each side put (or got) once over its lane: PUT is the sender's, GET the receiver's.
            EXPECT_EQ(st.rndv_am, 0u) << tl;
            ASSERT_TRUE(peer->rma.connected()) << tl;
            EXPECT_TRUE(peer->rma.shares_lane()) << tl;
            EXPECT_EQ(peer->rma.handle(), peer->lane.handle()) << tl;
        } else {
            EXPECT_FALSE(peer->rma.shares_lane()) << tl;
        }
    }
}

// A message above the lane's bcopy size that fits one zero-copy active message (tcp: up to
// 64 KiB with its header) goes as one, straight from the sender's buffers (one or several),
// with its CQ data, to a posted receive or as an unexpected one, or truncated; the bytes are
// the eager protocol's, so the receiver handles it as any eager message. Elsewhere (no
// AM_ZCOPY on shared memory; the *_rndv sets send it by rendezvous) the same calls take their
// own protocol and none goes this way.
TEST_F(MsgTest, MessagesThatFitOneZeroCopyActiveMessageGoAsOne) {
    namespace wire = runtime::proto::wire;
    // Connected first, so that the lane and the thresholds are known.
    uint64_t v = 1, got = 0;
    ASSERT_EQ(fi_trecv(b_.ep, &got, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tinject(a_.ep, &v, 8, a_to_b_, 1); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    runtime::proto::DataPath *dp = data_path(a_.ep);
    ASSERT_EQ(dp->peer_count(), 1u);
    const runtime::proto::Peer *to_b = dp->peer(0);
    const size_t hdr = sizeof(wire::EagerHdr) + sizeof(uint64_t);
    const size_t limit = to_b->lane.max_zcopy_payload(hdr);
    const size_t bcopy_room = to_b->lane.max_bcopy() - hdr;
    std::vector<size_t> sizes = {bcopy_room + 1, 16384, 40000};
    if (limit > 40000) sizes.push_back(limit);  // the largest one message carries
    // Per size: one send with CQ data (a 24-byte header), two without (16 bytes).
    uint64_t expected = 0;
    for (size_t n : sizes) {
        const auto goes = [&](size_t h) {
            return n + h > to_b->lane.max_bcopy() && limit != 0 && n + h <= limit + hdr &&
                   n <= to_b->rndv_thresh;
        };
        expected += (goes(hdr) ? 1 : 0) + (goes(hdr - sizeof(uint64_t)) ? 2 : 0);
    }
    const uint64_t before = dp->stats().eager_zcopy;
    for (size_t n : sizes) {
        SCOPED_TRACE(n);
        const auto out = pattern(n, 7);
        // Posted first; three buffers; remote CQ data.
        const size_t third = n / 3;
        iovec parts[3] = {{const_cast<uint8_t *>(out.data()), third},
                          {const_cast<uint8_t *>(out.data()) + third, third},
                          {const_cast<uint8_t *>(out.data()) + 2 * third, n - 2 * third}};
        std::vector<uint8_t> in(n + 8, 0xee);
        ASSERT_EQ(fi_trecv(b_.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 2, 0, nullptr), 0);
        fi_msg_tagged m{};
        m.msg_iov = parts;
        m.iov_count = 3;
        m.addr = a_to_b_;
        m.tag = 2;
        m.data = 0xd00d;
        ASSERT_EQ(retry([&] { return fi_tsendmsg(a_.ep, &m, FI_REMOTE_CQ_DATA | FI_COMPLETION); }), 0);
        ASSERT_EQ(wait(b_.cq, e), 1);
        EXPECT_EQ(e.len, n);
        EXPECT_EQ(e.data, 0xd00du);
        EXPECT_EQ(e.flags, FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
        EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
        EXPECT_EQ(in[n], 0xee);
        ASSERT_EQ(wait(a_.cq, e), 1);
        EXPECT_EQ(e.flags, FI_SEND | FI_TAGGED);
        // Unexpected: sent, arrived, then received.
        ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 3, nullptr); }), 0);
        EXPECT_TRUE(quiet(b_.cq, 20));
        std::fill(in.begin(), in.end(), 0);
        ASSERT_EQ(fi_trecv(b_.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 3, 0, nullptr), 0);
        ASSERT_EQ(wait(b_.cq, e), 1);
        EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
        ASSERT_EQ(wait(a_.cq, e), 1);
        // Truncated into a smaller buffer.
        std::vector<uint8_t> small(100, 0);
        ASSERT_EQ(fi_trecv(b_.ep, small.data(), small.size(), nullptr, FI_ADDR_UNSPEC, 4, 0, nullptr), 0);
        ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 4, nullptr); }), 0);
        ASSERT_EQ(wait(b_.cq, e), -FI_EAVAIL);
        const fi_cq_err_entry err = error(b_.cq);
        EXPECT_EQ(err.err, FI_ETRUNC);
        EXPECT_EQ(err.olen, n - small.size());
        EXPECT_TRUE(std::equal(small.begin(), small.end(), out.begin()));
        ASSERT_EQ(wait(a_.cq, e), 1);
    }
    EXPECT_EQ(dp->stats().eager_zcopy - before, expected)
        << "lane " << to_b->lane.resource().tl << ", zero-copy payload up to " << limit;
    if (to_b->lane.resource().tl == "tcp" && to_b->rndv_thresh >= 40000) {
        EXPECT_GT(expected, 0u) << "tcp sends messages of 40000 bytes as one zero-copy message";
    }
}

// A lane's FIFO head is readied for the next send (AmLane::prime when the peer's message
// arrives, AmLane::warm while waiting where the head is not located) on shared-memory FIFO
// lanes only: posix and sysv, never tcp, cma or self. That changes nothing in the exchange: a
// ping-pong with many empty polls before each answer keeps every byte and the order.
TEST_F(MsgTest, OnlySharedMemoryFifoLanesAreKeptWarmWhileWaiting) {
    constexpr int kRounds = 100;
    uint64_t got = 0;
    fi_cq_tagged_entry e{};
    for (int i = 0; i < kRounds; ++i) {
        Side &from = i % 2 == 0 ? a_ : b_;
        Side &to = i % 2 == 0 ? b_ : a_;
        const fi_addr_t dest = i % 2 == 0 ? a_to_b_ : b_to_a_;
        ASSERT_EQ(fi_trecv(to.ep, &got, sizeof got, nullptr, FI_ADDR_UNSPEC, i, 0, nullptr), 0);
        const uint64_t v = 0x5eed0000u + static_cast<uint64_t>(i);
        ASSERT_EQ(retry([&] { return fi_tinject(from.ep, &v, sizeof v, dest, i); }), 0);
        // The sender waits as a ping-pong does: empty reads of its CQ.
        for (int k = 0; k < 50; ++k) {
            const ssize_t rc = fi_cq_read(from.cq, &e, 1);
            ASSERT_TRUE(rc == -FI_EAGAIN || rc == 1) << rc;
        }
        ASSERT_EQ(wait(to.cq, e), 1) << i;
        EXPECT_EQ(e.tag, static_cast<uint64_t>(i));
        EXPECT_EQ(got, v);
    }
    for (Side *s : {&a_, &b_}) {
        runtime::proto::DataPath *dp = data_path(s->ep);
        ASSERT_NE(dp, nullptr);
        ASSERT_EQ(dp->peer_count(), 1u);
        const auto &lane = dp->peer(0)->lane;
        const std::string tl = lane.resource().tl;
        EXPECT_EQ(lane.warms(), tl == "posix" || tl == "sysv") << tl;
        EXPECT_EQ(dp->stats().dropped_malformed, 0u);
    }
}

// The FIFO head prime() prefetches (transports/lanes/mm_fifo_head.h) is the one the lane's
// sends advance: located from UCT's endpoint layout, it must move by exactly one per message
// sent. Found on every shared-memory FIFO lane of this UCX where the CPU prefetches for
// writing, and on no other lane.
TEST_F(MsgTest, ThePrimedFifoHeadIsTheOneEachSendAdvances) {
    constexpr int kCount = 40;  // within one FIFO's elements: nothing waits for room
    uint64_t got = 0;
    fi_cq_tagged_entry e{};
    // One exchange first: the lane is connected and the handshake's messages are behind.
    ASSERT_EQ(fi_trecv(b_.ep, &got, sizeof got, nullptr, FI_ADDR_UNSPEC, 0, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tinject(a_.ep, &got, sizeof got, a_to_b_, 0); }), 0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    runtime::proto::DataPath *dp = data_path(a_.ep);
    ASSERT_NE(dp, nullptr);
    ASSERT_EQ(dp->peer_count(), 1u);
    const auto &lane = dp->peer(0)->lane;
    const std::string tl = lane.resource().tl;
    const volatile uint64_t *head = lane.fifo_head();
    if (!lane.warms()) {
        EXPECT_EQ(head, nullptr) << tl;
        GTEST_SKIP() << tl << " is not a shared-memory FIFO lane";
    }
    if (!transports::cpu_prefetches_for_write()) GTEST_SKIP() << "no write prefetch here";
    ASSERT_NE(head, nullptr) << tl << ": UCX's mm endpoint layout changed (mm_fifo_head.h)";
    const auto count = [&] { return *head & transports::kMmHeadCountMask; };
    const uint64_t before = count();
    std::vector<uint64_t> in(kCount, 0);
    for (int i = 0; i < kCount; ++i) {
        ASSERT_EQ(fi_trecv(b_.ep, &in[i], sizeof in[i], nullptr, FI_ADDR_UNSPEC, i + 1, 0,
                           nullptr),
                  0);
    }
    for (int i = 0; i < kCount; ++i) {
        const uint64_t v = 0xfeed0000u + static_cast<uint64_t>(i);
        ASSERT_EQ(fi_tinject(a_.ep, &v, sizeof v, a_to_b_, i + 1), 0) << i;
    }
    EXPECT_EQ(count() - before, static_cast<uint64_t>(kCount)) << tl;
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(wait(b_.cq, e), 1) << i;
    for (int i = 0; i < kCount; ++i) EXPECT_EQ(in[i], 0xfeed0000u + static_cast<uint64_t>(i));
}

// Whether `lane` demotes its peer's FIFO head after an answer (AmLane::demote): a located
// head, lanes that demote lines (the CPU has CLDEMOTE, or the test forced the logic on),
// UFI_SHM_DEMOTE not turning it off (the posix_nodemote set).
bool demotes(const transports::AmLane &lane) {
    return lane.fifo_head() != nullptr && transports::lanes_demote_lines() &&
           config::registry().get_bool("UFI_SHM_DEMOTE");
}

// Unforced, the lanes demote exactly where the CPU has the instruction.
TEST(DemoteChoice, FollowsTheCpuUnlessForced) {
    EXPECT_EQ(transports::lanes_demote_lines(), transports::cpu_demotes_lines());
    transports::force_line_demotion_for_testing(true);
    EXPECT_TRUE(transports::lanes_demote_lines());
    transports::force_line_demotion_for_testing(false);
    EXPECT_EQ(transports::lanes_demote_lines(), transports::cpu_demotes_lines());
}

// The demotion tests start from one 8-byte message a -> b: the lanes are connected and the
// handshake's messages are behind. They run on every CPU: the logic is forced on where the
// CPU lacks CLDEMOTE (the instruction is then a no-op; force_line_demotion_for_testing).
class DemoteTest : public MsgTest {
  protected:
    void SetUp() override {
        transports::force_line_demotion_for_testing(true);
        MsgTest::SetUp();
    }
    void TearDown() override {
        MsgTest::TearDown();
        transports::force_line_demotion_for_testing(false);
    }
    void exchange_once() {
        uint64_t got = 0;
        fi_cq_tagged_entry e{};
        ASSERT_EQ(fi_trecv(b_.ep, &got, sizeof got, nullptr, FI_ADDR_UNSPEC, 0, 0, nullptr), 0);
        ASSERT_EQ(retry([&] { return fi_tinject(a_.ep, &got, sizeof got, a_to_b_, 0); }), 0);
        ASSERT_EQ(wait(b_.cq, e), 1);
        dp_a_ = data_path(a_.ep);
        dp_b_ = data_path(b_.ep);
        ASSERT_NE(dp_a_, nullptr);
        ASSERT_NE(dp_b_, nullptr);
        before_a_ = dp_a_->stats().heads_demoted;
        before_b_ = dp_b_->stats().heads_demoted;
    }
    // FIFO heads each side demoted since exchange_once().
    uint64_t demoted_by_a() const { return dp_a_->stats().heads_demoted - before_a_; }
    uint64_t demoted_by_b() const { return dp_b_->stats().heads_demoted - before_b_; }
    runtime::proto::DataPath *dp_a_ = nullptr;
    runtime::proto::DataPath *dp_b_ = nullptr;
    uint64_t before_a_ = 0;
    uint64_t before_b_ = 0;
};

// A ping-pong: each side answers every message it gets, so each answer's FIFO head is demoted
// once the side stops sending (the next receive it posts), on shared-memory FIFO lanes where
// the CPU demotes lines; nowhere else. Every byte arrives as sent.
TEST_F(DemoteTest, EachAnswerInAPingPongDemotesItsPeersFifoHeadOnce) {
    constexpr int kRounds = 200;
    uint64_t got = 0;
    fi_cq_tagged_entry e{};
    ASSERT_NO_FATAL_FAILURE(exchange_once());
    for (int i = 1; i <= kRounds; ++i) {
        const bool a_sends = i % 2 == 1;
        Side &from = a_sends ? a_ : b_;
        Side &to = a_sends ? b_ : a_;
        const fi_addr_t dest = a_sends ? a_to_b_ : b_to_a_;
        ASSERT_EQ(fi_trecv(to.ep, &got, sizeof got, nullptr, FI_ADDR_UNSPEC, i, 0, nullptr), 0);
        const uint64_t v = 0xa5a50000u + static_cast<uint64_t>(i);
        ASSERT_EQ(retry([&] { return fi_tinject(from.ep, &v, sizeof v, dest, i); }), 0);
        ASSERT_EQ(wait(to.cq, e), 1) << i;
        ASSERT_EQ(e.tag, static_cast<uint64_t>(i));
        ASSERT_EQ(got, v);
    }
    // Each side's last answer is demoted when it next posts a receive or progresses.
    for (Side *s : {&a_, &b_}) ASSERT_EQ(fi_cq_read(s->cq, &e, 1), -FI_EAGAIN);
    EXPECT_EQ(dp_a_->stats().dropped_malformed + dp_b_->stats().dropped_malformed, 0u);
    const std::string tl = dp_a_->peer(0)->lane.resource().tl;
    if (sizeof got > dp_a_->peer(0)->rndv_thresh) {
        GTEST_SKIP() << "8-byte messages go by rendezvous here: the answers are its control "
                        "messages, not eager sends";
    }
    // Round 1 answers nothing (a had received nothing from b); from round 2 on, every
    // message answers the one before: b sends the even rounds, a the odd ones after 1.
    EXPECT_EQ(demoted_by_a(),
              demotes(dp_a_->peer(0)->lane) ? kRounds / 2 - 1 : 0)
        << tl;
    EXPECT_EQ(demoted_by_b(),
              demotes(dp_b_->peer(0)->lane) ? kRounds / 2 : 0)
        << tl;
}

// The element demote() finds (the head's count of messages, modulo the element count, times
// the element size from the FIFO's start) is the one the lane's last short message went
// into: its bytes are there, after UCT's element header and header word, for every size that
// goes short, in elements all around the FIFO.
TEST_F(DemoteTest, TheElementAnAnswerIsDemotedFromHoldsThatAnswer) {
    fi_cq_tagged_entry e{};
    ASSERT_NO_FATAL_FAILURE(exchange_once());
    runtime::proto::DataPath *dp = dp_a_;
    const auto &lane = dp->peer(0)->lane;
    const std::string tl = lane.resource().tl;
    if (!demotes(lane)) GTEST_SKIP() << tl << ": this lane demotes nothing here";
    ASSERT_NE(lane.last_element(), nullptr) << tl << ": the FIFO's elements were not located";
    const size_t max_payload = std::min<size_t>(lane.max_short(), 548) - 24;  // eager headers
    std::vector<uint8_t> in(max_payload);
    for (int i = 0; i < 150; ++i) {  // more messages than the FIFO's elements (64)
        const size_t len = 1 + (static_cast<size_t>(i) * 37) % max_payload;
        // (Before anything is posted: a rendezvous left in flight would write into `in` after
        // the test returned.)
        if (len > dp->peer(0)->rndv_thresh) GTEST_SKIP() << "these sizes go by rendezvous here";
        const std::vector<uint8_t> out = pattern(len, static_cast<uint8_t>(i));
        ASSERT_EQ(fi_trecv(b_.ep, in.data(), len, nullptr, FI_ADDR_UNSPEC, i + 1, 0, nullptr), 0);
        ASSERT_EQ(retry([&] {
                      return fi_tsend(a_.ep, out.data(), len, nullptr, a_to_b_, i + 1, nullptr);
                  }),
                  0);
        // Read before the receiver takes it: UCT leaves an element as written until reused.
        const volatile uint8_t *elem = lane.last_element();
        const size_t n = lane.last_short();
        ASSERT_GE(n, len) << i;
        std::vector<uint8_t> seen(n);
        for (size_t k = 0; k < n; ++k) seen[k] = elem[transports::kMmElemHeader + k];
        EXPECT_TRUE(std::equal(out.begin(), out.end(), seen.end() - len)) << tl << " " << i;
        ASSERT_EQ(wait(b_.cq, e), 1) << i;
        ASSERT_EQ(wait(a_.cq, e), 1) << i;
        EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << i;
    }
}

// An answer too long for the FIFO element goes by bcopy into a receive descriptor of the
// peer's; its lines are demoted right after the send (AmLane::send_bcopy_answer), and they
// are the answer's: the descriptor found holds its bytes.
TEST_F(DemoteTest, AnAnswerSentByBcopyHasItsDescriptorDemoted) {
    constexpr size_t kLen = 2000;  // above the 548 bytes a FIFO element carries inline
    std::vector<uint8_t> in(kLen);
    fi_cq_tagged_entry e{};
    const std::vector<uint8_t> ask = pattern(kLen, 7);
    ASSERT_EQ(fi_trecv(b_.ep, in.data(), kLen, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, ask.data(), kLen, nullptr, a_to_b_, 1, nullptr); }),
              0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    ASSERT_TRUE(std::equal(ask.begin(), ask.end(), in.begin()));
    runtime::proto::DataPath *dp = data_path(b_.ep);
    ASSERT_NE(dp, nullptr);
    const auto &lane = dp->peer(0)->lane;
    const std::string tl = lane.resource().tl;
    if (kLen > dp->peer(0)->rndv_thresh) GTEST_SKIP() << "2000 bytes go by rendezvous here";
    // b answers the message that just arrived.
    const std::vector<uint8_t> answer = pattern(kLen, 9);
    ASSERT_EQ(fi_trecv(a_.ep, in.data(), kLen, nullptr, FI_ADDR_UNSPEC, 2, 0, nullptr), 0);
    ASSERT_EQ(retry([&] {
                  return fi_tsend(b_.ep, answer.data(), kLen, nullptr, b_to_a_, 2, nullptr);
              }),
              0);
    if (!demotes(lane)) {
        EXPECT_EQ(lane.last_demoted(), nullptr) << tl;
    } else {
        ASSERT_NE(lane.last_demoted(), nullptr) << tl;
        ASSERT_GE(lane.last_demoted_bytes(), kLen) << tl;
        const uint8_t *d = lane.last_demoted();
        const size_t n = lane.last_demoted_bytes();
        // (the payload ends the message: ufi's headers come first)
        EXPECT_TRUE(std::equal(answer.begin(), answer.end(), d + n - kLen)) << tl;
    }
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_TRUE(std::equal(answer.begin(), answer.end(), in.begin()));
}

// A stream answers nothing: its sender keeps the peer's FIFO head in its own cache from one
// send to the next (demoting it there halved an 8-byte stream's rate), and its receiver,
// sending nothing, has nothing to demote.
TEST_F(DemoteTest, AStreamDemotesNoFifoHead) {
    constexpr int kCount = 300;
    uint64_t got = 0;
    fi_cq_tagged_entry e{};
    ASSERT_NO_FATAL_FAILURE(exchange_once());
    std::vector<uint64_t> in(kCount, 0);
    for (int i = 0; i < kCount; ++i) {
        ASSERT_EQ(fi_trecv(b_.ep, &in[i], sizeof in[i], nullptr, FI_ADDR_UNSPEC, i + 1, 0, nullptr),
                  0);
    }
    for (int i = 0; i < kCount; ++i) {
        const uint64_t v = 0x5a5a0000u + static_cast<uint64_t>(i);
        ASSERT_EQ(retry([&] { return fi_tinject(a_.ep, &v, sizeof v, a_to_b_, i + 1); }), 0) << i;
        (void)fi_cq_read(a_.cq, &e, 1);  // the sender progresses between sends, as streams do
    }
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(wait(b_.cq, e), 1) << i;
    for (int i = 0; i < kCount; ++i) EXPECT_EQ(in[i], 0x5a5a0000u + static_cast<uint64_t>(i)) << i;
    // Messages too long for an element (bcopy) stream the same way: none is demoted.
    constexpr size_t kLong = 2000;
    std::vector<uint8_t> big(kLong);
    for (int i = 0; i < 50; ++i) {
        const std::vector<uint8_t> out = pattern(kLong, static_cast<uint8_t>(i));
        ASSERT_EQ(fi_trecv(b_.ep, big.data(), kLong, nullptr, FI_ADDR_UNSPEC, 1000, 0, nullptr), 0);
        ASSERT_EQ(retry([&] {
                      return fi_tsend(a_.ep, out.data(), kLong, nullptr, a_to_b_, 1000, nullptr);
                  }),
                  0)
            << i;
        ASSERT_EQ(wait(b_.cq, e), 1) << i;
        ASSERT_TRUE(std::equal(out.begin(), out.end(), big.begin())) << i;
        ASSERT_EQ(wait(a_.cq, e), 1) << i;
    }
    EXPECT_EQ(dp_a_->peer(0)->lane.last_demoted(), nullptr);
    if (sizeof got > dp_a_->peer(0)->rndv_thresh) {
        GTEST_SKIP() << "8-byte messages go by rendezvous here: sender and receiver converse "
                        "(control messages both ways), no stream";
    }
    EXPECT_EQ(demoted_by_a(), 0u);
    EXPECT_EQ(demoted_by_b(), 0u);
}

}  // namespace
}  // namespace ufi::msg_test
