// FI_EP_DGRAM endpoints: messages and tagged messages of at most one active message each
// (max_msg_size), never split and never by rendezvous (the *_rndv sets ask for rendezvous from
// 1 byte on), no RMA or atomics, and messages to a peer that cannot be reached dropped the way
// UDP drops them: they complete as sent.
#include "data_path_of.h"
#include "msg_fixture.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

namespace ufi::msg_test {
namespace {

class DgramTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->ep_attr->type = FI_EP_DGRAM;
        hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
    }
};

TEST_F(DgramTest, InfoDescribesADatagramEndpoint) {
    EXPECT_EQ(info_->ep_attr->type, FI_EP_DGRAM);
    // One active message's worth (tcp's and shared memory's bcopy sizes are kilobytes).
    EXPECT_GE(info_->ep_attr->max_msg_size, 1024u);
    EXPECT_LT(info_->ep_attr->max_msg_size, 65536u);
    EXPECT_LE(info_->tx_attr->inject_size, info_->ep_attr->max_msg_size);
    EXPECT_EQ(info_->caps & (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE), 0u);
    EXPECT_EQ(info_->tx_attr->rma_iov_limit, 0u);

    // Without hints both types are listed, RDM first for each domain.
    fi_info *all = nullptr;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, nullptr, &all), 0);
    int rdm = 0, dgram = 0;
    for (fi_info *i = all; i != nullptr; i = i->next) {
        if (i->ep_attr->type == FI_EP_RDM) ++rdm;
        if (i->ep_attr->type == FI_EP_DGRAM) {
            ++dgram;
            EXPECT_EQ(i->caps & FI_RMA, 0u);
        }
    }
    fi_freeinfo(all);
    EXPECT_GT(rdm, 0);
    EXPECT_EQ(dgram, rdm);
}

TEST_F(DgramTest, MessagesUpToTheDatagramSizeArriveWholeLargerOnesAreRefused) {
    const size_t max = info_->ep_attr->max_msg_size;
    runtime::proto::DataPath *a_dp = data_path(a_.ep);
    for (const bool tagged : {false, true}) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{8}, size_t{1000}, max - 1, max}) {
            const auto out = pattern(n, static_cast<uint8_t>(n));
            std::vector<uint8_t> in(max + 16, 0);
            fi_cq_tagged_entry e{};
            if (tagged) {
                ASSERT_EQ(fi_trecv(b_.ep, in.data(), in.size(), nullptr, b_to_a_, 7, 0, nullptr), 0);
                ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 7, nullptr); }), 0);
            } else {
                ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, b_to_a_, nullptr), 0);
                ASSERT_EQ(retry([&] { return fi_send(a_.ep, out.data(), n, nullptr, a_to_b_, nullptr); }), 0);
            }
            ASSERT_EQ(wait(b_.cq, e), 1) << n << " B";
            EXPECT_EQ(e.len, n);
            EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin())) << n << " B";
            ASSERT_EQ(wait(a_.cq, e), 1);
        }
        const std::vector<uint8_t> big(max + 1, 1);
        EXPECT_EQ(fi_send(a_.ep, big.data(), big.size(), nullptr, a_to_b_, nullptr), -FI_EMSGSIZE);
        EXPECT_EQ(fi_tsend(a_.ep, big.data(), big.size(), nullptr, a_to_b_, 1, nullptr), -FI_EMSGSIZE);
    }
    EXPECT_EQ(a_dp->stats().rndv_sends, 0u);
}

TEST_F(DgramTest, RmaAndAtomicsAreRefused) {
    uint64_t word = 0;
    EXPECT_EQ(fi_write(a_.ep, &word, sizeof word, nullptr, a_to_b_, 0, 0, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_read(a_.ep, &word, sizeof word, nullptr, a_to_b_, 0, 0, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_atomic(a_.ep, &word, 1, nullptr, a_to_b_, 0, 0, FI_UINT64, FI_SUM, nullptr), -FI_ENOSYS);
}

// A peer that closed: what is sent to it afterwards completes as sent (no error entry) and is
// counted as dropped; nothing arrives anywhere.
TEST_F(DgramTest, DatagramsToAPeerThatIsGoneAreDroppedNotFailed) {
    const auto out = pattern(100, 5);
    std::vector<uint8_t> in(100, 0);
    fi_cq_tagged_entry e{};
    // Connected first, so that the close is announced.
    ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, b_to_a_, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_send(a_.ep, out.data(), out.size(), nullptr, a_to_b_, nullptr); }), 0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    ASSERT_EQ(wait(a_.cq, e), 1);
    ASSERT_EQ(fi_close(&b_.ep->fid), 0);
    b_.ep = nullptr;

    runtime::proto::DataPath *a_dp = data_path(a_.ep);
    int ctx[8];
    for (int &c : ctx) {
        ASSERT_EQ(retry([&] { return fi_send(a_.ep, out.data(), out.size(), nullptr, a_to_b_, &c); }), 0);
        ASSERT_EQ(wait(a_.cq, e), 1) << "an error entry instead of a dropped datagram";
        EXPECT_EQ(e.op_context, &c);
    }
    EXPECT_GT(a_dp->stats().datagrams_dropped, 0u);
    EXPECT_TRUE(quiet(a_.cq));
}

}  // namespace
}  // namespace ufi::msg_test
