// FI_MSG_PREFIX (fi_getinfo(3)): an application that offers it gets it, with msg_prefix_size
// bytes in front of every message buffer it posts; the payload lands after the receiver's
// prefix, a receive's length counts the prefix, and the limits (max_msg_size, inject size)
// leave it out. On RDM and DGRAM endpoints alike.
#include "msg_fixture.h"

#include <cstring>

namespace ufi::msg_test {
namespace {

template <fi_ep_type kType>
class PrefixTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->ep_attr->type = kType;
        hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
        hints->mode |= FI_MSG_PREFIX;  // (offered in mode only, as fabtests' -k does)
    }

    void check_prefix_mode() {
        ASSERT_TRUE(info_->mode & FI_MSG_PREFIX);
        ASSERT_TRUE(info_->tx_attr->mode & FI_MSG_PREFIX);
        ASSERT_TRUE(info_->rx_attr->mode & FI_MSG_PREFIX);
        ASSERT_GT(info_->ep_attr->msg_prefix_size, 0u);
        EXPECT_EQ(info_->ep_attr->msg_prefix_size % 8, 0u);
    }

    // Sends `n` payload bytes (behind the prefix) from A to B and checks where they land.
    void round(size_t n, bool tagged, bool inject) {
        const size_t pre = info_->ep_attr->msg_prefix_size;
        std::vector<uint8_t> out(pre + n, 0xEE);
        const auto payload = pattern(n, static_cast<uint8_t>(n + 3));
        std::copy(payload.begin(), payload.end(), out.begin() + pre);
        std::vector<uint8_t> in(pre + n + 64, 0);
        fi_cq_tagged_entry e{};
        if (tagged) {
            ASSERT_EQ(fi_trecv(b_.ep, in.data(), in.size(), nullptr, b_to_a_, 5, 0, nullptr), 0);
        } else {
            ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, b_to_a_, nullptr), 0);
        }
        ASSERT_EQ(retry([&] {
                      if (inject) {
                          return tagged ? fi_tinject(a_.ep, out.data(), out.size(), a_to_b_, 5)
                                        : fi_inject(a_.ep, out.data(), out.size(), a_to_b_);
                      }
                      return tagged ? fi_tsend(a_.ep, out.data(), out.size(), nullptr, a_to_b_, 5, nullptr)
                                    : fi_send(a_.ep, out.data(), out.size(), nullptr, a_to_b_, nullptr);
                  }),
                  0)
            << n << " B";
        ASSERT_EQ(wait(b_.cq, e), 1) << n << " B";
        EXPECT_EQ(e.len, pre + n) << "a receive's length counts the prefix";
        EXPECT_TRUE(std::equal(payload.begin(), payload.end(), in.begin() + pre)) << n << " B";
        if (!inject) {
            ASSERT_EQ(wait(a_.cq, e), 1);
        }
    }
};

using RdmPrefixTest = PrefixTest<FI_EP_RDM>;
using DgramPrefixTest = PrefixTest<FI_EP_DGRAM>;

TEST_F(RdmPrefixTest, PayloadLandsBehindThePrefixAndLimitsLeaveItOut) {
    check_prefix_mode();
    const size_t inject = info_->tx_attr->inject_size;
    for (const bool tagged : {false, true}) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{70000}}) round(n, tagged, false);
        round(inject, tagged, true);  // the whole inject size, prefix on top
    }
}

TEST_F(DgramPrefixTest, PayloadLandsBehindThePrefixAndLimitsLeaveItOut) {
    check_prefix_mode();
    const size_t max = info_->ep_attr->max_msg_size;
    const size_t pre = info_->ep_attr->msg_prefix_size;
    for (const bool tagged : {false, true}) {
        for (size_t n : {size_t{0}, size_t{1}, size_t{100}, max}) round(n, tagged, false);
        round(info_->tx_attr->inject_size, tagged, true);
    }
    // One byte beyond max_msg_size, prefix not counted: refused.
    std::vector<uint8_t> big(pre + max + 1, 1);
    EXPECT_EQ(fi_send(a_.ep, big.data(), big.size(), nullptr, a_to_b_, nullptr), -FI_EMSGSIZE);
}

// Without the offer, no prefix.
TEST(PrefixInfo, OnlyWhenTheApplicationOffersIt) {
    for (const fi_ep_type type : {FI_EP_RDM, FI_EP_DGRAM}) {
        fi_info *hints = fi_allocinfo();
        hints->ep_attr->type = type;
        fi_info *info = nullptr;
        ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info), 0);
        EXPECT_EQ(info->mode & FI_MSG_PREFIX, 0u);
        EXPECT_EQ(info->tx_attr->mode & FI_MSG_PREFIX, 0u);
        EXPECT_EQ(info->ep_attr->msg_prefix_size, 0u);
        const size_t plain_inject = info->tx_attr->inject_size;
        const size_t plain_max = info->ep_attr->max_msg_size;
        fi_freeinfo(info);
        // Offered in the transmit attributes only: taken for both directions.
        hints->tx_attr->mode = FI_MSG_PREFIX;
        ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info), 0);
        EXPECT_TRUE(info->mode & FI_MSG_PREFIX);
        EXPECT_TRUE(info->rx_attr->mode & FI_MSG_PREFIX);
        const size_t pre = info->ep_attr->msg_prefix_size;
        EXPECT_EQ(pre, 8u);
        // Prefix and payload still fit what they fitted: one short message, one datagram.
        EXPECT_EQ(info->tx_attr->inject_size, plain_inject - pre);
        EXPECT_EQ(info->ep_attr->max_msg_size, type == FI_EP_DGRAM ? plain_max - pre : plain_max);
        fi_freeinfo(info);
        fi_freeinfo(hints);
    }
}

}  // namespace
}  // namespace ufi::msg_test
