// Matching alone (runtime/proto/match.h): posted receives and unexpected messages as records,
// no worker, endpoint or peer. The order of matches, the kinds kept apart, sources, tags
// under ignore bits, claimed messages skipped, and the source rule from the capabilities.
#include "runtime/proto/match.h"

#include <rdma/fi_tagged.h>

#include <gtest/gtest.h>

#include <deque>

namespace ufi::runtime::proto {
namespace {

class MatchTest : public ::testing::Test {
  protected:
    RecvReq *recv(bool tagged, uint32_t src, uint64_t tag = 0, uint64_t ignore = 0) {
        RecvReq &r = recvs_.emplace_back();
        r.tagged = tagged;
        r.src = src;
        r.tag = tag;
        r.ignore = ignore;
        return &r;
    }
    UnexpMsg *unexp(bool tagged, uint32_t src, uint64_t tag = 0) {
        UnexpMsg &u = unexps_.emplace_back();
        u.tagged = tagged;
        u.src = src;
        u.tag = tag;
        return &u;
    }
    MatchQueues q_;
    std::deque<RecvReq> recvs_;  // deque: records never move
    std::deque<UnexpMsg> unexps_;
};

TEST_F(MatchTest, TheRule) {
    RecvReq any_src;
    any_src.tagged = true;
    any_src.tag = 0x1234;
    any_src.ignore = 0x00ff;
    EXPECT_TRUE(MatchQueues::matches(any_src, 7, true, 0x1234));
    EXPECT_TRUE(MatchQueues::matches(any_src, 7, true, 0x12ab)) << "ignored bits differ";
    EXPECT_TRUE(MatchQueues::matches(any_src, kNoPeer, true, 0x1200)) << "unknown sender";
    EXPECT_FALSE(MatchQueues::matches(any_src, 7, true, 0x1334)) << "a bit outside the mask";
    EXPECT_FALSE(MatchQueues::matches(any_src, 7, false, 0x1234)) << "an untagged message";

    RecvReq from_3;  // (records are not copyable: they own registrations)
    from_3.tagged = true;
    from_3.tag = 0x1234;
    from_3.ignore = 0x00ff;
    from_3.src = 3;
    EXPECT_TRUE(MatchQueues::matches(from_3, 3, true, 0x1234));
    EXPECT_FALSE(MatchQueues::matches(from_3, 4, true, 0x1234));
    EXPECT_FALSE(MatchQueues::matches(from_3, kNoPeer, true, 0x1234))
        << "a directed receive never takes a sender it cannot name";

    RecvReq untagged;
    untagged.tag = 1;  // ignored for untagged receives
    EXPECT_TRUE(MatchQueues::matches(untagged, 9, false, 0));
    EXPECT_TRUE(MatchQueues::matches(untagged, 9, false, 0xdead));
    EXPECT_FALSE(MatchQueues::matches(untagged, 9, true, 1));
}

TEST_F(MatchTest, PostedReceivesMatchInOrderAndStayUntilTaken) {
    RecvReq *a = recv(true, kNoPeer, 5);
    RecvReq *b = recv(true, kNoPeer, 5);
    RecvReq *c = recv(true, kNoPeer, 6);
    for (RecvReq *r : {a, b, c}) q_.post(r);
    EXPECT_EQ(q_.first_posted(1, true, 5), a);
    EXPECT_EQ(q_.first_posted(1, true, 5), a) << "finding does not take";
    q_.unpost(a);
    EXPECT_EQ(q_.first_posted(1, true, 5), b);
    EXPECT_EQ(q_.first_posted(1, true, 6), c) << "c matches though b is before it";
    q_.unpost(c);
    EXPECT_EQ(q_.first_posted(1, true, 6), nullptr);
    EXPECT_EQ(q_.first_posted(1, false, 5), nullptr) << "untagged messages have their own queue";
    q_.unpost(b);
    EXPECT_TRUE(q_.posted(true).empty());
}

TEST_F(MatchTest, KindsAreKeptApart) {
    RecvReq *untagged = recv(false, kNoPeer);
    RecvReq *tagged = recv(true, kNoPeer, 0, ~uint64_t{0});
    q_.post(untagged);
    q_.post(tagged);
    EXPECT_EQ(q_.first_posted(2, false, 0), untagged);
    EXPECT_EQ(q_.first_posted(2, true, 99), tagged);
    EXPECT_EQ(q_.posted(false).front(), untagged);
    EXPECT_EQ(q_.posted(true).front(), tagged);

    q_.add_unexpected(unexp(true, 2, 1));
    EXPECT_TRUE(q_.has_unexpected(true));
    EXPECT_FALSE(q_.has_unexpected(false));
}

TEST_F(MatchTest, DirectedReceivesTakeOnlyTheirSource) {
    RecvReq *from_4 = recv(true, 4, 1);
    RecvReq *any = recv(true, kNoPeer, 1);
    q_.post(from_4);
    q_.post(any);
    EXPECT_EQ(q_.first_posted(5, true, 1), any) << "skips the receive directed elsewhere";
    EXPECT_EQ(q_.first_posted(4, true, 1), from_4);
}

TEST_F(MatchTest, UnexpectedMessagesInArrivalOrderClaimedOnesSkipped) {
    UnexpMsg *m1 = unexp(true, 1, 10);
    UnexpMsg *m2 = unexp(true, 2, 10);
    UnexpMsg *m3 = unexp(true, 1, 11);
    for (UnexpMsg *u : {m1, m2, m3}) q_.add_unexpected(u);

    RecvReq *tag10 = recv(true, kNoPeer, 10);
    EXPECT_EQ(q_.first_unexpected(*tag10), m1);
    int peek_ctx = 0;
    m1->claim_ctx = &peek_ctx;  // FI_PEEK | FI_CLAIM holds it for a later FI_CLAIM
    EXPECT_EQ(q_.first_unexpected(*tag10), m2) << "a claimed message is not matched again";

    RecvReq *from_1_any_tag = recv(true, 1, 0, ~uint64_t{0});
    EXPECT_EQ(q_.first_unexpected(*from_1_any_tag), m3);
    q_.remove_unexpected(m3);
    EXPECT_EQ(q_.first_unexpected(*from_1_any_tag), nullptr);

    RecvReq *untagged = recv(false, kNoPeer);
    EXPECT_EQ(q_.first_unexpected(*untagged), nullptr);
    UnexpMsg *plain = unexp(false, 3);
    q_.add_unexpected(plain);
    EXPECT_EQ(q_.first_unexpected(*untagged), plain);
    q_.remove_unexpected(plain);
    EXPECT_FALSE(q_.has_unexpected(false));
}

TEST(SourceRule, FromCapabilities) {
    const SourceRule none = SourceRule::from_caps(FI_MSG | FI_TAGGED);
    EXPECT_FALSE(none.directed(false));
    EXPECT_FALSE(none.directed(true));
    EXPECT_FALSE(none.exact);

    const SourceRule both = SourceRule::from_caps(FI_DIRECTED_RECV);
    EXPECT_TRUE(both.directed(false));
    EXPECT_TRUE(both.directed(true));
    EXPECT_FALSE(both.exact);

    const SourceRule tagged_only = SourceRule::from_caps(FI_TAGGED_DIRECTED_RECV);
    EXPECT_FALSE(tagged_only.directed(false));
    EXPECT_TRUE(tagged_only.directed(true));

    // FI_EXACT_DIRECTED_RECV alone is FI_DIRECTED_RECV without FI_ADDR_UNSPEC...
    const SourceRule exact = SourceRule::from_caps(FI_EXACT_DIRECTED_RECV);
    EXPECT_TRUE(exact.directed(false));
    EXPECT_TRUE(exact.directed(true));
    EXPECT_TRUE(exact.exact);
    // ... and beside FI_TAGGED_DIRECTED_RECV only takes FI_ADDR_UNSPEC away from tagged ones.
    const SourceRule exact_tagged =
        SourceRule::from_caps(FI_EXACT_DIRECTED_RECV | FI_TAGGED_DIRECTED_RECV);
    EXPECT_FALSE(exact_tagged.directed(false));
    EXPECT_TRUE(exact_tagged.directed(true));
    EXPECT_TRUE(exact_tagged.exact);
}

}  // namespace
}  // namespace ufi::runtime::proto
