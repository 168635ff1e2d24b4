// A sender that streams without polling: once its shared-memory lane is full, UCT's mm
// endpoint refuses every send until the sender's own iface is progressed, however much room
// the receiver has made since. The next send call progresses the endpoint once
// (DataPath::relieve_lane) and so carries the queued messages out itself: the receiver gets
// them while the sender never reads its CQ. Checked for each way a send comes in: the short
// one-buffer call (fi_tinject), a vector (fi_tsendv: the record path) and a message too large
// for one short active message (bcopy). Over tcp the lane fills only after megabytes of
// socket buffer and drains over several progress calls: the sets without a shared-memory lane
// skip.
#include "data_path_of.h"
#include "msg_fixture.h"

#include <rdma/fi_tagged.h>

#include <chrono>
#include <functional>
#include <string>

namespace ufi::msg_test {
namespace {

using SendFn = std::function<ssize_t(fid_ep *, fi_addr_t, uint64_t tag, const uint8_t *, size_t)>;

class LaneRelief : public MsgTest {
  protected:
    static constexpr uint64_t kMaxSends = 100000;

    static std::vector<uint8_t> payload(size_t len, uint64_t i) {
        std::vector<uint8_t> v = pattern(len, static_cast<uint8_t>(i));
        v[0] = static_cast<uint8_t>(i >> 8);
        return v;
    }

    // Progresses B alone (A's CQ is never read) until it has taken `count` messages as
    // unexpected, for at most `ms`; the count it reached.
    uint64_t progress_b_until(uint64_t count, int ms) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        fi_cq_tagged_entry none;
        while (data_path(b_.ep)->stats().unexpected < count &&
               std::chrono::steady_clock::now() < deadline) {
            (void)fi_cq_read(b_.cq, &none, 0);
        }
        return data_path(b_.ep)->stats().unexpected;
    }

    void run(size_t len, const SendFn &send) {
        // Connected first (the handshake needs both sides progressed), with nothing left over.
        const std::vector<uint8_t> first = pattern(len, 1);
        std::vector<uint8_t> in(len + 1);
        ASSERT_EQ(fi_trecv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ull, nullptr), 0);
        ASSERT_EQ(retry([&] { return send(a_.ep, a_to_b_, 0, first.data(), len); }), 0);
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(b_.cq, e), 1);
        // Drain A's own completions of the first send, if it wrote one.
        (void)poll_for(a_.cq, e, 10);
        runtime::proto::DataPath *dpa = data_path(a_.ep);
        const std::string tl = dpa->peer(0)->lane.resource().tl;
        if (tl != "posix" && tl != "sysv") GTEST_SKIP() << "the lane is " << tl;

        // Fill the lane without progressing B: the first send that waits in A's queue ends it.
        const uint64_t queued0 = dpa->stats().sends_queued;
        uint64_t sent = 0;  // tags 1..sent went or wait
        // One buffer per send: those not injected are read when they go.
        std::vector<std::vector<uint8_t>> bufs;
        bufs.reserve(kMaxSends + 2);
        const auto next = [&] {
            ++sent;
            bufs.push_back(payload(len, sent));
            return send(a_.ep, a_to_b_, sent, bufs.back().data(), len);
        };
        while (dpa->stats().sends_queued == queued0) {
            ASSERT_LT(sent, kMaxSends) << "the lane never filled";
            ASSERT_EQ(next(), 0) << sent;
        }
        // B takes everything that went out (all but the last), and the receiver's room is
        // there; A, not progressed since, still holds the last one.
        ASSERT_EQ(progress_b_until(sent - 1, 5000), sent - 1);
        EXPECT_EQ(progress_b_until(sent, 100), sent - 1) << "A's queue moves only with A";
        // One more send: it carries the queued one out, and itself.
        ASSERT_EQ(next(), 0);
        EXPECT_EQ(progress_b_until(sent, 5000), sent)
            << "the messages waiting in A's queue reach B without A's CQ being read";
        EXPECT_EQ(dpa->stats().sends_queued, queued0 + 1) << "only the one that found the lane full waited";

        // In order and whole: receives for any tag take them as they came.
        for (uint64_t i = 1; i <= sent; ++i) {
            std::fill(in.begin(), in.end(), 0);
            ASSERT_EQ(fi_trecv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ull, nullptr), 0);
            fi_cq_tagged_entry r{};
            ASSERT_EQ(wait(b_.cq, r), 1) << i;
            EXPECT_EQ(r.tag, i);
            EXPECT_EQ(r.len, len);
            const std::vector<uint8_t> want = payload(len, i);
            EXPECT_TRUE(std::equal(want.begin(), want.end(), in.begin())) << i;
        }
        // A's send completions (the vector and bcopy sends write them): every one arrives.
        if (len > 8) {
            for (uint64_t i = 1; i <= sent; ++i) {
                fi_cq_tagged_entry c{};
                ASSERT_EQ(wait(a_.cq, c), 1) << i;
                EXPECT_TRUE(c.flags & FI_SEND);
            }
        }
    }
};

TEST_F(LaneRelief, ShortInjectsAfterAFullLaneGoWithoutPolling) {
    run(8, [](fid_ep *ep, fi_addr_t to, uint64_t tag, const uint8_t *b, size_t n) {
        return fi_tinject(ep, b, n, to, tag);
    });
}

TEST_F(LaneRelief, VectorSendsAfterAFullLaneGoWithoutPolling) {
    run(16, [](fid_ep *ep, fi_addr_t to, uint64_t tag, const uint8_t *b, size_t n) {
        iovec iov[2] = {{const_cast<uint8_t *>(b), n / 2}, {const_cast<uint8_t *>(b) + n / 2, n - n / 2}};
        return fi_tsendv(ep, iov, nullptr, 2, to, tag, nullptr);
    });
}

TEST_F(LaneRelief, CopiedSendsAfterAFullLaneGoWithoutPolling) {
    run(1024, [](fid_ep *ep, fi_addr_t to, uint64_t tag, const uint8_t *b, size_t n) {
        return fi_tsend(ep, b, n, nullptr, to, tag, nullptr);
    });
}

}  // namespace
}  // namespace ufi::msg_test
