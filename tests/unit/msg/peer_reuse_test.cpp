// A server whose clients come and go keeps a peer table as large as the clients it has: the
// slot of a peer that departed (closed its endpoint) goes to the next new peer once
// UFI_PEER_REUSE_DELAY has passed and nothing refers to it, under the slot's next generation,
// and a late message carrying the departed peer's key is dropped rather than taken for its
// successor's (runtime/proto/peer_reuse.cpp). meson runs these with UFI_PEER_REUSE_DELAY=200
// and UFI_PEER_CHECK_INTERVAL=100 (msg_peer_reuse_*); elsewhere they are skipped.
#include "data_path_of.h"
#include "msg_fixture.h"

#include "runtime/proto/data_path.h"
#include "runtime/proto/peer_table.h"
#include "runtime/proto/wire.h"

#include <rdma/fi_tagged.h>

#include <chrono>
#include <cstring>

namespace ufi::msg_test {
namespace {

namespace proto = runtime::proto;

class PeerReuse : public MsgTest {
  protected:
    void SetUp() override {
        const int64_t delay = config::registry().get_int("UFI_PEER_REUSE_DELAY");
        if (delay <= 0 || delay > 1000 || config::registry().get_int("UFI_PEER_CHECK_INTERVAL") > 500) {
            GTEST_SKIP() << "needs UFI_PEER_REUSE_DELAY of at most 1000 ms and quick peer checks "
                            "(meson's msg_peer_reuse_* tests set them)";
        }
        MsgTest::SetUp();
    }

    // A client (C) opens, sends A one tagged message (`value`, tag 7) and closes. A receives
    // it; returns A's index for C.
    uint32_t client_visits(uint64_t value) {
        open_side(c_);
        const fi_addr_t to_a = insert(c_, a_.name);
        uint64_t in = 0;
        EXPECT_EQ(fi_trecv(a_.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr), 0);
        EXPECT_EQ(retry([&] { return fi_tsend(c_.ep, &value, sizeof value, nullptr, to_a, 7, nullptr); }), 0);
        fi_cq_tagged_entry e{};
        EXPECT_EQ(wait(a_.cq, e), 1);
        EXPECT_EQ(wait(c_.cq, e), 1);
        EXPECT_EQ(in, value);
        proto::DataPath *da = data_path(a_.ep);
        uint32_t idx = proto::kNoPeer;
        for (uint32_t i = 0; i < da->peer_count(); ++i) {
            const proto::Peer *p = da->peer(i);
            if (!p->retired && p->state == proto::PeerState::kConnected) idx = i;
        }
        close_side(c_);
        return idx;
    }
    // Progresses A until `done` holds, for at most 5 s.
    template <typename Done>
    bool progress_until(Done &&done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!done() && std::chrono::steady_clock::now() < deadline) progress_all();
        return done();
    }
};

TEST_F(PeerReuse, ADepartedClientsSlotGoesToTheNextClient) {
    proto::DataPath *da = data_path(a_.ep);
    uint32_t first_key = proto::kNoPeer;
    uint32_t slot = proto::kNoPeer;
    constexpr int kClients = 12;
    for (int i = 0; i < kClients; ++i) {
        const uint64_t retired = da->stats().peers_retired;
        const uint32_t idx = client_visits(1000 + i);
        ASSERT_NE(idx, proto::kNoPeer);
        const uint32_t key = da->peer(idx)->src_key;
        if (i == 0) {
            first_key = key;
            slot = idx;
        } else {
            // The same slot each time, under the next generation.
            EXPECT_EQ(idx, slot) << "client " << i;
            EXPECT_EQ(key, slot | static_cast<uint32_t>(i) << proto::PeerTable::kIndexBits) << "client " << i;
        }
        // A learns of the close, and gives the slot up after the delay.
        ASSERT_TRUE(progress_until([&] { return da->stats().peers_retired == retired + 1; }))
            << "client " << i << "'s slot was not given up";
        EXPECT_TRUE(da->peer(idx)->retired);
    }
    EXPECT_NE(first_key, da->peer(slot)->src_key);
    // Twelve clients came and went; the table holds one slot for them.
    EXPECT_LE(da->peer_count(), 2u) << "the peer table grew with the clients";
}

TEST_F(PeerReuse, ALateMessageOfADepartedPeerIsNotTakenForItsSuccessors) {
    proto::DataPath *da = data_path(a_.ep);
    const uint32_t idx = client_visits(1);
    ASSERT_NE(idx, proto::kNoPeer);
    const uint32_t old_key = da->peer(idx)->src_key;
    ASSERT_TRUE(progress_until([&] { return da->peer(idx)->retired; }));
    // The next client takes the slot and stays.
    open_side(c_);
    const fi_addr_t to_a = insert(c_, a_.name);
    uint64_t in = 0;
    fi_addr_t from = FI_ADDR_NOTAVAIL;
    const fi_addr_t a_to_c = insert(a_, c_.name);
    const uint64_t hello = 2;
    ASSERT_EQ(fi_trecv(a_.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(c_.ep, &hello, sizeof hello, nullptr, to_a, 7, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(a_.cq, e, &from), 1);
    ASSERT_EQ(wait(c_.cq, e), 1);
    ASSERT_EQ(in, hello);
    EXPECT_EQ(from, a_to_c);
    const uint32_t new_key = da->peer(idx)->src_key;
    ASSERT_NE(new_key, old_key) << "the slot was not reused";
    ASSERT_FALSE(da->peer(idx)->retired);

    // A message as the departed client would have sent it (its key in `src`): dropped, and
    // the receive A posted waits on.
    struct {
        proto::wire::EagerHdr h;
        uint64_t payload;
    } late{{7, old_key, proto::wire::kTagged}, 0xdead};
    const uint64_t unknown = da->stats().dropped_unknown_src;
    in = 0;
    ASSERT_EQ(fi_trecv(a_.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr), 0);
    ASSERT_TRUE(da->deliver_for_test(proto::wire::kAmEager, &late, sizeof late));
    EXPECT_EQ(da->stats().dropped_unknown_src, unknown + 1);
    EXPECT_TRUE(quiet(a_.cq)) << "the departed peer's message was taken";
    EXPECT_EQ(in, 0u);
    // The same message under the new peer's key is its own: taken, from C (so the forgery
    // above was well formed but for its key).
    late.h.src = new_key;
    ASSERT_TRUE(da->deliver_for_test(proto::wire::kAmEager, &late, sizeof late));
    ASSERT_EQ(wait(a_.cq, e, &from), 1);
    EXPECT_EQ(in, 0xdeadu);
    EXPECT_EQ(from, a_to_c);
}

TEST_F(PeerReuse, AnUnexpectedMessageOfADepartedClientKeepsItsSlotUntilReceived) {
    proto::DataPath *da = data_path(a_.ep);
    open_side(c_);
    const fi_addr_t to_a = insert(c_, a_.name);
    fi_addr_t a_to_c = insert(a_, c_.name);
    const uint64_t v = 9;
    fi_cq_tagged_entry e{};
    // No receive posted at A: the message waits there unexpected, naming C's slot.
    ASSERT_EQ(retry([&] { return fi_tsend(c_.ep, &v, sizeof v, nullptr, to_a, 11, nullptr); }), 0);
    ASSERT_EQ(wait(c_.cq, e), 1);
    uint32_t idx = proto::kNoPeer;
    ASSERT_TRUE(progress_until([&] {
        for (uint32_t i = 0; i < da->peer_count(); ++i) {
            if (da->peer(i)->state == proto::PeerState::kConnected) idx = i;
        }
        return idx != proto::kNoPeer;
    }));
    close_side(c_);
    ASSERT_EQ(fi_av_remove(a_.av, &a_to_c, 1, 0), 0);
    ASSERT_TRUE(progress_until([&] { return da->peer(idx)->state == proto::PeerState::kFailed; }));
    // Five times the delay: the unexpected message still names the slot.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(
                                                              5 * config::registry().get_int("UFI_PEER_REUSE_DELAY"));
    while (std::chrono::steady_clock::now() < until) progress_all();
    EXPECT_FALSE(da->peer(idx)->retired) << "a slot an unexpected message names was given up";
    // Received (whole, from the departed client), the slot goes.
    uint64_t in = 0;
    ASSERT_EQ(fi_trecv(a_.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 11, 0, nullptr), 0);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(in, v);
    EXPECT_TRUE(progress_until([&] { return da->peer(idx)->retired; }));
}

TEST_F(PeerReuse, AFailedPeerTheAvStillNamesKeepsItsSlotUntilRemoved) {
    proto::DataPath *da = data_path(a_.ep);
    open_side(c_);
    const fi_addr_t to_a = insert(c_, a_.name);
    fi_addr_t a_to_c = insert(a_, c_.name);
    const uint64_t v = 5;
    uint64_t in = 0;
    ASSERT_EQ(fi_trecv(a_.ep, &in, sizeof in, nullptr, a_to_c, 7, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(c_.ep, &v, sizeof v, nullptr, to_a, 7, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(a_.cq, e), 1);
    ASSERT_EQ(wait(c_.cq, e), 1);
    // A sends to C too (its AV entry resolved and cached).
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &v, sizeof v, nullptr, a_to_c, 8, nullptr); }), 0);
    ASSERT_EQ(wait(a_.cq, e), 1);
    uint32_t idx = proto::kNoPeer;
    for (uint32_t i = 0; i < da->peer_count(); ++i) {
        if (da->peer(i)->state == proto::PeerState::kConnected) idx = i;
    }
    ASSERT_NE(idx, proto::kNoPeer);
    close_side(c_);
    ASSERT_TRUE(progress_until([&] { return da->peer(idx)->state == proto::PeerState::kFailed; }));
    // Five times the delay: the entry keeps it, and a send to it fails at once.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(
                                                              5 * config::registry().get_int("UFI_PEER_REUSE_DELAY"));
    while (std::chrono::steady_clock::now() < until) progress_all();
    EXPECT_FALSE(da->peer(idx)->retired);
    EXPECT_EQ(da->stats().peers_retired, 0u);
    EXPECT_LT(fi_tsend(a_.ep, &v, sizeof v, nullptr, a_to_c, 8, nullptr), 0);
    // Removed from the AV: the slot goes.
    ASSERT_EQ(fi_av_remove(a_.av, &a_to_c, 1, 0), 0);
    EXPECT_TRUE(progress_until([&] { return da->peer(idx)->retired; }));
    EXPECT_EQ(da->stats().peers_retired, 1u);
}

}  // namespace
}  // namespace ufi::msg_test
