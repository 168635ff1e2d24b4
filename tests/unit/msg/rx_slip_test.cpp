// Temporal slipping (runtime/proto/rx_slip.h): an endpoint receiving a stream over a
// shared-memory FIFO leaves the FIFO alone for a moment after each small batch; one that
// answers what it receives never does. First the rule itself, then that endpoints apply it
// where it belongs (shared memory), deliver every message meanwhile, and never slip in a
// ping-pong.
#include "data_path_of.h"
#include "msg_fixture.h"

#include "runtime/proto/data_path.h"
#include "runtime/proto/rx_slip.h"
#include "transports/resource.h"

#include <rdma/fi_tagged.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace ufi::msg_test {
namespace {

using runtime::proto::RxSlip;
using namespace std::chrono_literals;

TEST(RxSlipRule, NeverWithoutAWindow) {
    RxSlip s;
    for (int i = 0; i < 4; ++i) s.after_poll(1);
    EXPECT_FALSE(s.holding());
    EXPECT_EQ(s.slips(), 0u);
}

TEST(RxSlipRule, AReceiverThatAnswersNeverSlips) {
    RxSlip s;
    s.set_window(10s);
    s.after_poll(1);  // the first reception: no stream yet
    EXPECT_FALSE(s.holding());
    for (int i = 0; i < 4; ++i) {
        s.on_send();
        s.after_poll(1);
        EXPECT_FALSE(s.holding()) << i;
    }
    EXPECT_EQ(s.slips(), 0u);
}

TEST(RxSlipRule, ASecondReceptionWithoutASendSlipsForTheWindow) {
    RxSlip s;
    const auto window = 200ms;  // (long beside any preemption between the calls below)
    s.set_window(window);
    s.after_poll(1);
    s.after_poll(0);  // empty polls in between change nothing
    s.after_poll(0);
    const auto start = RxSlip::Clock::now();
    s.after_poll(1);
    EXPECT_EQ(s.slips(), 1u);
    ASSERT_TRUE(s.holding());
    while (s.holding()) std::this_thread::sleep_for(1ms);
    EXPECT_GE(RxSlip::Clock::now() - start, window);
    EXPECT_FALSE(s.holding());
    // The stream goes on: the first poll after the window that receives slips again.
    s.after_poll(2);
    EXPECT_TRUE(s.holding());
    EXPECT_EQ(s.slips(), 2u);
}

TEST(RxSlipRule, AReceiverFarBehindDoesNotSlip) {
    RxSlip s;
    s.set_window(10s);
    s.after_poll(1);
    s.after_poll(RxSlip::kBehind);  // a full batch: far enough behind the sender
    EXPECT_FALSE(s.holding());
    s.after_poll(RxSlip::kBehind - 1);
    EXPECT_TRUE(s.holding());
}

class RxSlipTest : public MsgTest {
  protected:
    // A sends one tagged message of 8 bytes `v` to B; B receives and checks it.
    void one_message(uint64_t v) {
        uint64_t in = 0;
        ASSERT_EQ(fi_trecv(b_.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 5, 0, nullptr), 0);
        ASSERT_EQ(retry([&] { return fi_tinject(a_.ep, &v, sizeof v, a_to_b_, 5); }), 0);
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(b_.cq, e), 1) << v;
        EXPECT_EQ(in, v);
    }
};

TEST_F(RxSlipTest, AStreamOverSharedMemorySlipsAndAPingPongDoesNot) {
    one_message(1);  // connects the two
    auto *dp = data_path(b_.ep);
    ASSERT_EQ(dp->peer_count(), 1u);
    const bool shm = dp->peer(0)->lane.iface().resource->type ==
                     transports::DeviceType::SharedMemory;
    // Only where a shared-memory FIFO carries the messages (UFI_RX_SLIP's default elsewhere).
    EXPECT_EQ(dp->rx_slip().window() > RxSlip::Clock::duration::zero(), shm);

    // B receives a stream, one message per poll, and never answers. (Sets that send every
    // message by rendezvous have no stream of data messages: B answers each announcement.)
    const uint64_t before = dp->rx_slip().slips();
    const uint64_t data_before = dp->rx_data_msgs();
    for (uint64_t v = 2; v < 10; ++v) one_message(v);
    const bool eager = dp->rx_data_msgs() - data_before == 8;
    if (!shm) {
        EXPECT_EQ(dp->rx_slip().slips(), 0u);
    } else if (eager) {
        EXPECT_GE(dp->rx_slip().slips(), before + 1);
    }

    // A ping-pong: B answers every message before the next one comes. (The first message
    // still follows the stream, unanswered: counting starts after B's first answer.)
    uint64_t before_pp = 0;
    for (uint64_t v = 10; v < 30; ++v) {
        one_message(v);
        if (v == 10) before_pp = dp->rx_slip().slips();
        uint64_t back = 0, out = v;
        ASSERT_EQ(fi_trecv(a_.ep, &back, sizeof back, nullptr, FI_ADDR_UNSPEC, 6, 0, nullptr), 0);
        ASSERT_EQ(retry([&] { return fi_tinject(b_.ep, &out, sizeof out, b_to_a_, 6); }), 0);
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(a_.cq, e), 1);
        EXPECT_EQ(back, v);
    }
    EXPECT_EQ(dp->rx_slip().slips(), before_pp) << "a ping-pong slipped";
}

// A ping-pong of messages longer than one active message: the rest of a message already begun
// (eager fragments after the first, pipelined rendezvous data) is not a stream, so the
// receiver never slips between a message's pieces, whichever protocol carries them. Each
// side polls only its own CQ, so the pieces arrive over several polls.
TEST_F(RxSlipTest, APingPongOfLongMessagesNeverSlipsBetweenTheirPieces) {
    one_message(1);  // connects the two
    auto *dp_a = data_path(a_.ep);
    auto *dp_b = data_path(b_.ep);
    const size_t len = 3 * dp_b->peer(0)->lane.max_bcopy() + 100;  // four pieces at least
    std::vector<uint8_t> out(len), in(len);
    // (B's first long message still follows the unanswered one_message: counting starts
    // after round 0.)
    uint64_t before_a = 0, before_b = 0;
    for (int round = 0; round < 10; ++round) {
        if (round == 1) {
            before_a = dp_a->rx_slip().slips();
            before_b = dp_b->rx_slip().slips();
        }
        for (int dir = 0; dir < 2; ++dir) {
            Side &from = dir == 0 ? a_ : b_;
            Side &to = dir == 0 ? b_ : a_;
            const fi_addr_t dest = dir == 0 ? a_to_b_ : b_to_a_;
            const uint8_t seed = static_cast<uint8_t>(round * 2 + dir);
            out = pattern(len, seed);
            std::fill(in.begin(), in.end(), 0);
            ASSERT_EQ(fi_trecv(to.ep, in.data(), len, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr), 0);
            ASSERT_EQ(retry([&] { return fi_tsend(from.ep, out.data(), len, nullptr, dest, 7,
                                                  nullptr); }),
                      0);
            fi_cq_tagged_entry e{};
            // The receive, then the send's completion (the sender's CQ is polled once its
            // peer answered, as a ping-pong does).
            ASSERT_EQ(wait(to.cq, e), 1) << round << "/" << dir;
            EXPECT_EQ(e.len, len);
            ASSERT_EQ(wait(from.cq, e), 1) << round << "/" << dir;
            ASSERT_EQ(in, out) << round << "/" << dir;
        }
    }
    EXPECT_EQ(dp_a->rx_slip().slips(), before_a) << "slipped between a message's pieces";
    EXPECT_EQ(dp_b->rx_slip().slips(), before_b) << "slipped between a message's pieces";
}

}  // namespace
}  // namespace ufi::msg_test
