// The send scheduler's rules alone (runtime/proto/sched.h): peers and records in memory, no
// worker, lane or transport. The order gate (fence, the orderings asked for, a put write's
// hold, started operations and answers never held), the handed-off count, where an answer to a
// peer's read goes in the queue, how a queue drains on each status a push may give, and the
// busy list.
#include "runtime/proto/sched.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace ufi::runtime::proto {
namespace {

using base::Status;

class SchedTest : public ::testing::Test {
  protected:
    SendReq *op(SendOp kind, bool fence = false, bool started = false) {
        SendReq &r = reqs_.emplace_back();
        r.op = kind;
        r.fence = fence;
        r.started = started;
        return &r;
    }
    // The queue's records, front to back.
    std::vector<SendReq *> queued() const {
        std::vector<SendReq *> v;
        for (SendReq *r = p_.queue.front(); r != nullptr; r = r->hook.next) v.push_back(r);
        return v;
    }
    Peer p_;
    std::deque<SendReq> reqs_;  // deque: records never move
};

TEST_F(SchedTest, NothingInFlightHoldsNothing) {
    for (bool ordered : {false, true}) {
        for (SendOp k : {SendOp::kMessage, SendOp::kWrite, SendOp::kRead, SendOp::kAtomic}) {
            EXPECT_FALSE(sched::held_by_order(p_, *op(k), ordered));
            EXPECT_FALSE(sched::held_by_order(p_, *op(k, /*fence=*/true), ordered));
        }
    }
}

TEST_F(SchedTest, AFenceWaitsForEveryEarlierOperation) {
    p_.handed_off = 1;  // a message (rendezvous) awaits its answer
    EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kMessage, true), false));
    EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kWrite, true), false));
    EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kMessage), false)) << "unfenced, unordered";
    EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kWrite), false));
    p_.handed_off = 0;
    EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kMessage, true), false));
}

TEST_F(SchedTest, OrderedEndpointsKeepRmaAndMessagesApart) {
    // A message in flight: an RMA or atomic waits behind it, a message does not.
    p_.handed_off = 1;
    EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kWrite), true));
    EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kRead), true));
    EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kAtomic), true));
    EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kMessage), true));
    // An RMA in flight: a message waits too.
    p_.rma_handed_off = 1;
    EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kMessage), true));
    // Unordered: neither waits.
    EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kMessage), false));
    EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kWrite), false));
}

TEST_F(SchedTest, APutWriteHoldsEverythingButAnswersAndStartedOperations) {
    p_.put_writes_held = 1;
    for (bool ordered : {false, true}) {
        EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kMessage), ordered));
        EXPECT_TRUE(sched::held_by_order(p_, *op(SendOp::kRead), ordered));
        EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kReadResp), ordered));
        EXPECT_FALSE(sched::held_by_order(p_, *op(SendOp::kMessage, true, /*started=*/true),
                                          ordered))
            << "the rest of a message follows its start";
    }
}

TEST_F(SchedTest, HandedOffIsCountedOnceAndRmaClosesTheShortSendsGate) {
    p_.eager_short_max = 100;
    SendReq *m = op(SendOp::kMessage);
    sched::count_handed_off(p_, *m);
    sched::count_handed_off(p_, *m);  // pushed again (its rest): still one
    EXPECT_EQ(p_.handed_off, 1u);
    EXPECT_EQ(p_.rma_handed_off, 0u);
    EXPECT_EQ(p_.eager_short_max, 100) << "a message in flight does not hold messages";
    sched::count_handed_off(p_, *op(SendOp::kAtomic));
    EXPECT_EQ(p_.handed_off, 2u);
    EXPECT_EQ(p_.rma_handed_off, 1u);
    EXPECT_EQ(p_.eager_short_max, -1);
}

TEST_F(SchedTest, AnswersGoAheadOfOperationsNotStarted) {
    SendReq *partly = op(SendOp::kMessage, false, /*started=*/true);
    SendReq *first_answer = op(SendOp::kReadResp);
    SendReq *waiting_write = op(SendOp::kWrite);
    SendReq *waiting_msg = op(SendOp::kMessage);
    p_.queue.push_back(partly);
    p_.queue.push_back(first_answer);
    p_.queue.push_back(waiting_write);
    p_.queue.push_back(waiting_msg);
    SendReq *answer = op(SendOp::kReadResp);
    sched::queue_answer(p_, answer);
    EXPECT_EQ(queued(), (std::vector<SendReq *>{partly, first_answer, answer, waiting_write,
                                                waiting_msg}));
    // An empty queue, and one of answers only: at the end.
    while (p_.queue.pop_front() != nullptr) {
    }
    sched::queue_answer(p_, first_answer);
    sched::queue_answer(p_, answer);
    EXPECT_EQ(queued(), (std::vector<SendReq *>{first_answer, answer}));
    while (p_.queue.pop_front() != nullptr) {
    }
}

// drain_sends with a push that gives the statuses of `script` in turn.
class DrainTest : public SchedTest {
  protected:
    sched::DrainEnd drain(std::vector<Status> script, bool fail_at_third = false) {
        size_t at = 0;
        return sched::drain_sends(
            p_,
            [&](Peer &, SendReq &r) {
                pushed_.push_back(&r);
                if (fail_at_third && at == 2) failed_ = true;
                return at < script.size() ? script[at++] : Status::kOk;
            },
            [&](SendReq *r) { finished_.push_back(r); }, [&] { return failed_; }, error_);
    }
    void fill(size_t n) {
        for (size_t i = 0; i < n; ++i) p_.queue.push_back(op(SendOp::kMessage));
    }
    void TearDown() override {
        while (p_.queue.pop_front() != nullptr) {
        }
    }
    std::vector<SendReq *> pushed_, finished_;
    bool failed_ = false;
    Status error_ = Status::kOk;
};

TEST_F(DrainTest, EverythingGoesWhenTheLaneTakesIt) {
    fill(3);
    const std::vector<SendReq *> all = queued();
    EXPECT_EQ(drain({Status::kOk, Status::kInProgress, Status::kOk}), sched::DrainEnd::kEmpty);
    EXPECT_EQ(pushed_, all);
    // The one handed off is the peer's answer's to finish, not the drain's.
    EXPECT_EQ(finished_, (std::vector<SendReq *>{all[0], all[2]}));
    EXPECT_TRUE(p_.queue.empty());
}

TEST_F(DrainTest, NoRoomStopsAtTheHeadAndKeepsIt) {
    fill(3);
    const std::vector<SendReq *> all = queued();
    EXPECT_EQ(drain({Status::kOk, Status::kNoResource}), sched::DrainEnd::kNoRoom);
    EXPECT_EQ(finished_, std::vector<SendReq *>{all[0]});
    EXPECT_EQ(queued(), (std::vector<SendReq *>{all[1], all[2]})) << "the refused one stays first";
}

TEST_F(DrainTest, AnErrorStopsWithItsStatusAndKeepsTheQueueForTheFailure) {
    fill(2);
    const std::vector<SendReq *> all = queued();
    EXPECT_EQ(drain({Status::kIoError}), sched::DrainEnd::kError);
    EXPECT_EQ(error_, Status::kIoError);
    EXPECT_TRUE(finished_.empty());
    EXPECT_EQ(queued(), all) << "the peer's failure completes them with its error";
}

TEST_F(DrainTest, APeerFailedInsideAPushEndsTheDrainAtOnce) {
    fill(4);
    EXPECT_EQ(drain({Status::kOk, Status::kOk, Status::kOk}, /*fail_at_third=*/true),
              sched::DrainEnd::kFailed);
    EXPECT_EQ(pushed_.size(), 3u);
    EXPECT_EQ(finished_.size(), 2u) << "what the failure completed is not finished again";
}

TEST_F(SchedTest, BusyPeersAreTakenOnceEachAndLaterMarksWait) {
    sched::BusyPeers busy;
    Peer a, b;
    a.local_idx = 3;
    b.local_idx = 7;
    EXPECT_TRUE(busy.empty());
    busy.mark(a);
    busy.mark(a);
    busy.mark(b);
    std::vector<uint32_t> seen;
    const unsigned n = busy.take_each([&](uint32_t idx) {
        seen.push_back(idx);
        Peer &p = idx == 3 ? a : b;
        p.busy = false;
        if (idx == 3) busy.mark(a);  // queued more while drained: the next call's
    });
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(seen, (std::vector<uint32_t>{3, 7}));
    EXPECT_FALSE(busy.empty());
    seen.clear();
    EXPECT_EQ(busy.take_each([&](uint32_t idx) {
        seen.push_back(idx);
        a.busy = false;
    }),
              1u);
    EXPECT_EQ(seen, std::vector<uint32_t>{3});
    EXPECT_TRUE(busy.empty());
    EXPECT_EQ(busy.take_each([](uint32_t) { FAIL() << "nothing is busy"; }), 0u);
}

}  // namespace
}  // namespace ufi::runtime::proto
