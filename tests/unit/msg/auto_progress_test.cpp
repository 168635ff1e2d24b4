// FI_PROGRESS_AUTO: each enabled endpoint has a thread that progresses it, so transfers finish
// while the application makes no call at all; completions written from that thread wake a
// waiter in fi_cq_sread; the endpoint closes with the thread mid-work.
#include "msg_fixture.h"

#include <thread>

namespace ufi::msg_test {
namespace {

class AutoProgressTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
        hints->domain_attr->threading = FI_THREAD_DOMAIN;  // the locks come on anyway
    }
};

TEST_F(AutoProgressTest, TransfersFinishWithoutApplicationCalls) {
    ASSERT_EQ(info_->domain_attr->data_progress, FI_PROGRESS_AUTO);
    for (size_t n : {size_t{8}, size_t{100000}, size_t{3} << 20}) {
        SCOPED_TRACE(n);
        const auto out = pattern(n, 5);
        std::vector<uint8_t> in(n);
        int sctx = 0, rctx = 0;
        ASSERT_EQ(fi_trecv(b_.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 9, 0, &rctx), 0);
        ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 9, &sctx); }), 0);
        // No call into either endpoint for a while: their threads move the data (a rendezvous
        // needs both sides: RTS, the receiver's read, the acknowledgement).
        fi_cq_tagged_entry e{};
        bool got_send = false, got_recv = false;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while ((!got_send || !got_recv) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            // Peek at the rings without progressing: fi_cq_read with count 0 would progress,
            // so read one entry each (a read progresses once, which alone cannot finish a
            // rendezvous that the peer's thread had not served).
            if (!got_recv && fi_cq_read(b_.cq, &e, 1) == 1) {
                EXPECT_EQ(e.op_context, &rctx);
                got_recv = true;
            }
            if (!got_send && fi_cq_read(a_.cq, &e, 1) == 1) {
                EXPECT_EQ(e.op_context, &sctx);
                got_send = true;
            }
        }
        EXPECT_TRUE(got_send && got_recv);
        EXPECT_EQ(in, out);
    }
}

TEST_F(AutoProgressTest, SreadWakesForACompletionFromTheThread) {
    fi_cq_attr attr{};
    attr.format = FI_CQ_FORMAT_TAGGED;
    attr.wait_obj = FI_WAIT_UNSPEC;
    close_side(b_);
    fi_av_attr av_attr{};
    ASSERT_EQ(fi_av_open(domain_, &av_attr, &b_.av, nullptr), 0);
    ASSERT_EQ(fi_cq_open(domain_, &attr, &b_.cq, nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain_, info_, &b_.ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(b_.ep, &b_.av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(b_.ep, &b_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(b_.ep), 0);
    size_t len = 0;
    ASSERT_EQ(fi_getname(&b_.ep->fid, nullptr, &len), -FI_ETOOSMALL);
    b_.name.resize(len);
    ASSERT_EQ(fi_getname(&b_.ep->fid, b_.name.data(), &len), 0);
    const fi_addr_t to_b = insert(a_, b_.name);
    uint64_t in = 0;
    int rctx = 0;
    ASSERT_EQ(fi_trecv(b_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 3, 0, &rctx), 0);
    ssize_t inject_rc = 1;
    std::thread sender([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const uint64_t v = 0x1234;
        // The progress thread runs the lane: -FI_EAGAIN only while it is busy (bounded).
        for (int tries = 0; tries < 5000; ++tries) {
            inject_rc = fi_tinject(a_.ep, &v, 8, to_b, 3);
            if (inject_rc != -FI_EAGAIN) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    fi_cq_tagged_entry e{};
    const ssize_t rc = fi_cq_sread(b_.cq, &e, 1, nullptr, kWaitMs);
    sender.join();
    ASSERT_EQ(inject_rc, 0);
    ASSERT_EQ(rc, 1);
    EXPECT_EQ(e.op_context, &rctx);
    EXPECT_EQ(in, 0x1234u);
}

TEST_F(AutoProgressTest, CloseWithTrafficInFlight) {
    // A burst left in flight: fi_close stops the threads first, nothing crashes or hangs.
    const std::vector<uint8_t> out(1 << 20, 7);
    int accepted = 0;
    for (int i = 0; i < 8; ++i) {
        const ssize_t rc = fi_tsend(a_.ep, out.data(), out.size(), nullptr, a_to_b_, 11, nullptr);
        ASSERT_TRUE(rc == 0 || rc == -FI_EAGAIN) << "send " << i << ": " << fi_strerror(-rc);
        accepted += rc == 0;
    }
    EXPECT_GT(accepted, 0) << "nothing was in flight to close over";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    close_side(a_);
    close_side(b_);
}

}  // namespace
}  // namespace ufi::msg_test
