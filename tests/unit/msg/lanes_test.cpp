// The lane a peer's traffic takes: with UFI_CONNECT_TO_EP naming the transport (meson's
// *_p2p sets name tcp), both endpoints connect endpoint to endpoint after the handshake on a
// connect-to-iface lane and move their traffic there; otherwise they stay on the first lane.
// Both sides start at once (crossing handshakes), and messages sent before, during and after
// the move arrive whole and in order.
#include "msg_fixture.h"

#include "runtime/config/config.h"
#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <algorithm>

namespace ufi::msg_test {
namespace {

runtime::proto::DataPath *data_path(fid_ep *ep) {
    return runtime::ep::endpoint_of(&ep->fid)->data_path();
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

}  // namespace
}  // namespace ufi::msg_test
