// A peer's endpoint closes while this side still talks to it (its process lives on: shared
// memory sees nothing of it by itself). fi_close tells every connected peer (WIREUP_CLOSE),
// so what this side sends it next fails instead of going into a FIFO nobody reads, and a
// rendezvous send waiting for it completes with an error instead of never. Over tcp the
// closed connection says the same.
#include "data_path_of.h"
#include "msg_fixture.h"

#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"

#include <chrono>

namespace ufi::msg_test {
namespace {

class PeerClose : public MsgTest {
  protected:
    // Both ways once: connected, and each knows the other's incarnation.
    void connect_both() {
        for (int dir = 0; dir < 2; ++dir) {
            Side &from = dir == 0 ? a_ : b_;
            Side &to = dir == 0 ? b_ : a_;
            const fi_addr_t dest = dir == 0 ? a_to_b_ : b_to_a_;
            uint64_t in = 0;
            const uint64_t out = 42 + dir;
            ASSERT_EQ(fi_trecv(to.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
            ASSERT_EQ(retry([&] { return fi_tsend(from.ep, &out, sizeof out, nullptr, dest, 1, nullptr); }), 0);
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait(to.cq, e), 1);
            ASSERT_EQ(wait(from.cq, e), 1);
            ASSERT_EQ(in, out);
        }
    }
    // Progresses A (B is gone) until its peer failed, for at most 5 s.
    bool a_sees_b_fail() {
        runtime::proto::DataPath *da = data_path(a_.ep);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (da->peer(0)->state != runtime::proto::PeerState::kFailed &&
               std::chrono::steady_clock::now() < deadline) {
            progress_all();
        }
        return da->peer(0)->state == runtime::proto::PeerState::kFailed;
    }
};

TEST_F(PeerClose, SendsToAClosedEndpointFailInsteadOfGoingNowhere) {
    ASSERT_NO_FATAL_FAILURE(connect_both());
    close_side(b_);
    ASSERT_TRUE(a_sees_b_fail()) << "A was not told that B closed";
    const uint64_t one = 1;
    const ssize_t rc = fi_tsend(a_.ep, &one, sizeof one, nullptr, a_to_b_, 2, nullptr);
    EXPECT_LT(rc, 0) << "a send to the closed endpoint was taken";
    // Shared memory learns it from the close message; tcp may see the connection go first.
    const auto &tls = config::registry().get_list("UFI_TLS");
    if (!(tls.size() == 1 && tls[0] == "tcp")) {
        EXPECT_EQ(rc, -FI_ECONNRESET) << fi_strerror(static_cast<int>(-rc));
    }
}

TEST_F(PeerClose, ARendezvousSendWaitingForAClosedEndpointCompletesWithAnError) {
    constexpr size_t kBig = 8u << 20;  // above every automatic rendezvous threshold
    ASSERT_NO_FATAL_FAILURE(connect_both());
    runtime::proto::DataPath *da = data_path(a_.ep);
    const uint64_t announced_before = da->stats().rndv_sends;
    // B never posts a receive for it: by rendezvous, the send waits for B's answer.
    const std::vector<uint8_t> big = pattern(kBig, 5);
    int ctx = 0;
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, big.data(), kBig, nullptr, a_to_b_, 3, &ctx); }), 0);
    for (int i = 0; i < 100; ++i) progress_all();
    ASSERT_EQ(da->stats().rndv_sends, announced_before + 1) << "sent by rendezvous";
    close_side(b_);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(a_.cq, e), -FI_EAVAIL) << "the send completes, with an error";
    const fi_cq_err_entry err = error(a_.cq);
    EXPECT_EQ(err.op_context, &ctx);
    EXPECT_NE(err.err, 0);
    const auto &tls = config::registry().get_list("UFI_TLS");
    if (!(tls.size() == 1 && tls[0] == "tcp")) {
        EXPECT_EQ(err.err, FI_ECONNRESET) << fi_strerror(err.err);
    }
}

TEST_F(PeerClose, ACloseNamingAnotherIncarnationFailsNobody) {
    ASSERT_NO_FATAL_FAILURE(connect_both());
    runtime::proto::DataPath *da = data_path(a_.ep);
    const runtime::proto::Peer *a_peer = da->peer(0);
    // A close as B would send it, but with an incarnation that is not B's (anyone who knows
    // B's name knows its identity; only its peers know its incarnation).
    runtime::proto::wire::WireupHdr h{};
    h.type = runtime::proto::wire::kWireupClose;
    h.version = runtime::proto::wire::kProtocolVersion;
    h.sender_idx = 0;  // A's index for B
    h.uuid = a_peer->address.uuid;
    h.endpoint_id = a_peer->address.endpoint_id;
    h.incarnation = a_peer->remote_incarnation ^ 1;
    const uint64_t dropped = da->stats().dropped_malformed;
    ASSERT_TRUE(da->deliver_for_test(runtime::proto::wire::kAmWireup, &h, sizeof h));
    progress_all();
    EXPECT_EQ(da->stats().dropped_malformed, dropped + 1);
    EXPECT_EQ(da->peer(0)->state, runtime::proto::PeerState::kConnected);
    // And B's real close does fail it.
    close_side(b_);
    EXPECT_TRUE(a_sees_b_fail());
}

}  // namespace
}  // namespace ufi::msg_test
