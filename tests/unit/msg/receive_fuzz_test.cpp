// The receive path against hostile input: every active message id, random lengths and bytes,
// half of them naming the real peer (so they pass the source check and reach the parsers
// behind it). Nothing may crash, hang or leak (the suite also runs under ASan/UBSan); the
// data path drops and counts what is malformed; afterwards the endpoints still talk.
#include "msg_fixture.h"

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"

#include <random>

namespace ufi::msg_test {
namespace {

namespace wire = runtime::proto::wire;

// Where each message's sender index sits (so a fuzzed message can name the real peer).
size_t src_offset(uint8_t id) {
    switch (id) {
        case wire::kAmEager:
        case wire::kAmEagerFirst:
        case wire::kAmRts: return offsetof(wire::EagerHdr, src);
        default: return 0;  // the other headers start with it (AtomicHdr, RmaHdr, RmaRespHdr...)
    }
}

TEST_F(MsgTest, ReceivePathSurvivesHostileMessages) {
    // Connected both ways first: B knows A as a peer (index 0).
    uint64_t v = 7, in = 0;
    ASSERT_EQ(fi_trecv(b_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tinject(a_.ep, &v, 8, a_to_b_, 1); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    runtime::proto::DataPath *dp = runtime::ep::endpoint_of(&b_.ep->fid)->data_path();
    ASSERT_NE(dp, nullptr);
    ASSERT_EQ(dp->peer_count(), 1u);

    std::mt19937_64 rng(20261201);
    std::vector<uint8_t> buf(512);
    const auto before = dp->stats();
    for (int i = 0; i < 50000; ++i) {
        // kAmLast + 1: no such message
        const auto id = static_cast<uint8_t>(1 + rng() % (wire::kAmLast + 1));
        const size_t len = rng() % (i % 4 == 0 ? 512 : 96);
        for (auto &b : buf) b = static_cast<uint8_t>(rng());
        if (rng() % 2 == 0 && src_offset(id) + 4 <= len) {
            const uint32_t real = 0;
            std::memcpy(buf.data() + src_offset(id), &real, sizeof real);
        }
        // Copied to a buffer of its own length: an overread is ASan's to find.
        std::vector<uint8_t> msg(buf.begin(), buf.begin() + static_cast<long>(len));
        const bool known = dp->deliver_for_test(id, msg.data(), msg.size());
        EXPECT_EQ(known, id <= wire::kAmLast);
        if (i % 1000 == 0) progress_all();
    }
    const auto after = dp->stats();
    EXPECT_GT(after.dropped_malformed, before.dropped_malformed + 1000);
    EXPECT_GT(after.dropped_unknown_src, before.dropped_unknown_src + 1000);
    // Still talking: a tagged message with a tag no fuzzed message used.
    const uint64_t tag = 0x7e57ed0000000001ULL;
    uint64_t out = 0x600d;
    ASSERT_EQ(fi_trecv(b_.ep, &in, 8, nullptr, b_to_a_, tag, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &out, 8, nullptr, a_to_b_, tag, nullptr); }), 0);
    fi_addr_t src = FI_ADDR_NOTAVAIL;
    for (;;) {
        ASSERT_EQ(wait(b_.cq, e, &src), 1);
        if (e.tag == tag) break;  // (a fuzzed message that matched nothing never completes)
    }
    EXPECT_EQ(in, out);
    EXPECT_EQ(src, b_to_a_);
    ASSERT_EQ(wait(a_.cq, e), 1);
}

}  // namespace
}  // namespace ufi::msg_test
