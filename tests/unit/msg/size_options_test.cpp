// The size options of fi_endpoint(3) (FI_OPT_MAX_{MSG,TAGGED,RMA,ATOMIC}_SIZE,
// FI_OPT_INJECT_{MSG,TAGGED,RMA,ATOMIC}_SIZE), set before fi_enable, are what the data path
// enforces afterwards: a call at the limit goes, one byte more fails with -FI_EMSGSIZE. The
// short send's one-compare gate honours the message limits too.
#include "msg_fixture.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

namespace ufi::msg_test {
namespace {

constexpr size_t kMaxMsg = 100, kMaxTagged = 200, kMaxRma = 300, kMaxAtomic = 16;
constexpr size_t kInjectMsg = 16, kInjectTagged = 32, kInjectRma = 8, kInjectAtomic = 8;

class SizeOptionsTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *h) override {
        h->caps |= FI_RMA | FI_ATOMIC;
        h->domain_attr->mr_mode = 0;
    }
    void before_enable(fid_ep *ep) override {
        const std::pair<int, size_t> sizes[] = {
            {FI_OPT_MAX_MSG_SIZE, kMaxMsg},        {FI_OPT_MAX_TAGGED_SIZE, kMaxTagged},
            {FI_OPT_MAX_RMA_SIZE, kMaxRma},        {FI_OPT_MAX_ATOMIC_SIZE, kMaxAtomic},
            {FI_OPT_INJECT_MSG_SIZE, kInjectMsg},  {FI_OPT_INJECT_TAGGED_SIZE, kInjectTagged},
            {FI_OPT_INJECT_RMA_SIZE, kInjectRma},  {FI_OPT_INJECT_ATOMIC_SIZE, kInjectAtomic},
        };
        for (const auto &[opt, v] : sizes) {
            ASSERT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, opt, &v, sizeof v), 0) << opt;
        }
    }
    void TearDown() override {
        if (mr_ != nullptr) {
            EXPECT_EQ(fi_close(&mr_->fid), 0);
        }
        MsgTest::TearDown();
    }
    // Sends (or injects) `n` bytes from A to B and waits for B's receive.
    ssize_t message(size_t n, bool tagged, bool inject) {
        const std::vector<uint8_t> out(n, 7);
        std::vector<uint8_t> in(n + 8, 0);
        const ssize_t rc = retry([&] {
            if (inject) {
                return tagged ? fi_tinject(a_.ep, out.data(), n, a_to_b_, 1)
                              : fi_inject(a_.ep, out.data(), n, a_to_b_);
            }
            return tagged ? fi_tsend(a_.ep, out.data(), n, nullptr, a_to_b_, 1, nullptr)
                          : fi_send(a_.ep, out.data(), n, nullptr, a_to_b_, nullptr);
        });
        if (rc != 0) return rc;
        fi_cq_tagged_entry e{};
        if (tagged) {
            EXPECT_EQ(fi_trecv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
        } else {
            EXPECT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
        }
        EXPECT_EQ(wait(b_.cq, e), 1);
        EXPECT_EQ(e.len, n);
        if (!inject) {
            EXPECT_EQ(wait(a_.cq, e), 1);
        }
        return 0;
    }
    fid_mr *mr_ = nullptr;
};

TEST_F(SizeOptionsTest, MessagesAndInjectsStopAtTheirOptions) {
    size_t v = 0, len = sizeof v;
    ASSERT_EQ(fi_getopt(&a_.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &v, &len), 0);
    EXPECT_EQ(v, kMaxMsg);
    for (const bool tagged : {false, true}) {
        const size_t most = tagged ? kMaxTagged : kMaxMsg;
        const size_t inject = tagged ? kInjectTagged : kInjectMsg;
        EXPECT_EQ(message(most, tagged, false), 0);
        // (Above a message limit even the one-compare short way refuses it.)
        EXPECT_EQ(message(most + 1, tagged, false), -FI_EMSGSIZE) << "tagged " << tagged;
        EXPECT_EQ(message(inject, tagged, true), 0);
        EXPECT_EQ(message(inject + 1, tagged, true), -FI_EMSGSIZE) << "tagged " << tagged;
    }
    // fi_sendmsg takes the same limit.
    std::vector<uint8_t> big(kMaxMsg + 1, 1);
    iovec iov{big.data(), big.size()};
    fi_msg msg{};
    msg.msg_iov = &iov;
    msg.iov_count = 1;
    msg.addr = a_to_b_;
    EXPECT_EQ(fi_sendmsg(a_.ep, &msg, 0), -FI_EMSGSIZE);
}

TEST_F(SizeOptionsTest, RmaAndAtomicsStopAtTheirOptions) {
    std::vector<uint8_t> target(1024, 0);
    ASSERT_EQ(fi_mr_reg(domain_, target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 7, 0,
                        &mr_, nullptr),
              0);
    const uint64_t key = fi_mr_key(mr_);
    std::vector<uint8_t> src(kMaxRma + 1, 3);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(retry([&] { return fi_write(a_.ep, src.data(), kMaxRma, nullptr, a_to_b_, 0, key, nullptr); }), 0);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(fi_write(a_.ep, src.data(), kMaxRma + 1, nullptr, a_to_b_, 0, key, nullptr), -FI_EMSGSIZE);
    EXPECT_EQ(fi_read(a_.ep, src.data(), kMaxRma + 1, nullptr, a_to_b_, 0, key, nullptr), -FI_EMSGSIZE);
    ASSERT_EQ(retry([&] { return fi_inject_write(a_.ep, src.data(), kInjectRma, a_to_b_, 0, key); }), 0);
    EXPECT_EQ(fi_inject_write(a_.ep, src.data(), kInjectRma + 1, a_to_b_, 0, key), -FI_EMSGSIZE);

    uint64_t operand[4] = {1, 1, 1, 1};
    // 2 x 8 bytes = kMaxAtomic goes; 3 do not; an injected 8 goes, 16 do not.
    ASSERT_EQ(retry([&] { return fi_atomic(a_.ep, operand, 2, nullptr, a_to_b_, 0, key, FI_UINT64, FI_SUM, nullptr); }), 0);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(fi_atomic(a_.ep, operand, 3, nullptr, a_to_b_, 0, key, FI_UINT64, FI_SUM, nullptr), -FI_EMSGSIZE);
    ASSERT_EQ(retry([&] { return fi_inject_atomic(a_.ep, operand, 1, a_to_b_, 0, key, FI_UINT64, FI_SUM); }), 0);
    EXPECT_EQ(fi_inject_atomic(a_.ep, operand, 2, a_to_b_, 0, key, FI_UINT64, FI_SUM), -FI_EMSGSIZE);
    EXPECT_TRUE(quiet(a_.cq));
}

}  // namespace
}  // namespace ufi::msg_test
