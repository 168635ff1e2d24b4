// libfabric 2.0's receive capabilities: FI_TAGGED_MULTI_RECV (a tagged buffer that takes
// message after matching message), FI_TAGGED_DIRECTED_RECV (only tagged receives match their
// source) and FI_EXACT_DIRECTED_RECV (FI_ADDR_UNSPEC refused as a source); and that an
// application built for 1.x never gets their bits, which meant other things there. Over every
// transport set and protocol the suite runs (meson), eager and rendezvous sizes.
#include "msg_fixture.h"

#include <rdma/fi_endpoint.h>

#include <sys/uio.h>

namespace ufi::msg_test {
namespace {

// An fi_addr_t that names no AV entry: a directed receive refuses it, an undirected one
// ignores it.
constexpr fi_addr_t kNoEntry = 4242;

class TaggedMultiRecvTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override { hints->caps |= FI_TAGGED_MULTI_RECV; }
    ssize_t post_multi(void *buf, size_t len, uint64_t tag, uint64_t ignore, void *ctx,
                       uint64_t flags = FI_MULTI_RECV) {
        iovec iov{buf, len};
        fi_msg_tagged m{};
        m.msg_iov = &iov;
        m.iov_count = 1;
        m.addr = FI_ADDR_UNSPEC;
        m.tag = tag;
        m.ignore = ignore;
        m.context = ctx;
        return fi_trecvmsg(b_.ep, &m, flags);
    }
    void tsend(size_t n, uint8_t seed, uint64_t tag) {
        sent_.push_back(pattern(n, seed));  // its buffer lives until the send completes
        const uint8_t *out = sent_.back().data();
        ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out, n, nullptr, a_to_b_, tag, nullptr); }),
                  0);
    }
    void sends_complete() {
        for (size_t i = 0; i < sent_.size(); ++i) {
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait(a_.cq, e), 1) << i;
        }
        sent_.clear();
    }
    std::vector<std::vector<uint8_t>> sent_;
};

TEST_F(TaggedMultiRecvTest, OfferedToApi2AndMatchesTagsIntoOneBuffer) {
    ASSERT_NE(info_->caps & FI_TAGGED_MULTI_RECV, 0u) << "given to an API 2.0 caller asking";
    EXPECT_NE(info_->rx_attr->caps & FI_TAGGED_MULTI_RECV, 0u);
    EXPECT_EQ(info_->tx_attr->caps & FI_TAGGED_MULTI_RECV, 0u) << "a receive capability";
    for (size_t scale : {size_t{1}, size_t{1000}}) {  // eager sizes, then rendezvous sizes
        SCOPED_TRACE(scale);
        std::vector<uint8_t> buf(1024 * scale, 0);
        std::vector<uint8_t> other(512 * scale, 0);
        const size_t min = 64 * scale;
        ASSERT_EQ(fi_setopt(&b_.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof min),
                  0);
        int ctx = 0, other_ctx = 0;
        // Tags 0x10..0x1f go to the multi-receive buffer; 0x20 to a plain receive.
        tsend(100 * scale, 1, 0x11);   // before the buffer is posted
        tsend(300 * scale, 2, 0x20);   // matches only the plain receive
        ASSERT_EQ(post_multi(buf.data(), buf.size(), 0x10, 0x0f, &ctx), 0);
        ASSERT_EQ(fi_trecv(b_.ep, other.data(), other.size(), nullptr, FI_ADDR_UNSPEC, 0x20, 0,
                           &other_ctx),
                  0);
        tsend(300 * scale, 3, 0x1f);
        tsend(600 * scale, 4, 0x10);  // 1000 of 1024 used: released with this one
        const size_t lens[] = {100 * scale, 300 * scale, 600 * scale};
        const uint64_t tags[] = {0x11, 0x1f, 0x10};
        const size_t which[] = {0, 2, 3};
        size_t offset = 0, in_buf = 0;
        bool other_seen = false;
        for (int i = 0; i < 4; ++i) {
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait(b_.cq, e), 1) << i;
            if (e.op_context == &other_ctx) {
                other_seen = true;
                EXPECT_EQ(e.tag, 0x20u);
                EXPECT_EQ(e.len, 300 * scale);
                EXPECT_EQ(e.flags, FI_RECV | FI_TAGGED);
                EXPECT_TRUE(std::equal(sent_[1].begin(), sent_[1].end(), other.begin()));
                continue;
            }
            ASSERT_EQ(e.op_context, &ctx);
            ASSERT_LT(in_buf, 3u);
            EXPECT_EQ(e.tag, tags[in_buf]) << "each message's own tag";
            EXPECT_EQ(e.len, lens[in_buf]);
            EXPECT_EQ(e.buf, buf.data() + offset);
            const auto &sent = sent_[which[in_buf]];
            EXPECT_TRUE(std::equal(sent.begin(), sent.end(), buf.begin() + offset));
            EXPECT_EQ(e.flags, FI_RECV | FI_TAGGED | (in_buf == 2 ? FI_MULTI_RECV : 0));
            offset += lens[in_buf];
            ++in_buf;
        }
        EXPECT_TRUE(other_seen);
        sends_complete();
        EXPECT_TRUE(quiet(b_.cq)) << "nothing more";
    }
}

TEST_F(TaggedMultiRecvTest, RefusedFlagsAndCancel) {
    std::vector<uint8_t> buf(256, 0);
    int ctx = 0;
    EXPECT_EQ(post_multi(buf.data(), buf.size(), 1, 0, &ctx, FI_MULTI_RECV | FI_PEEK),
              -FI_EBADFLAGS);
    EXPECT_EQ(post_multi(buf.data(), buf.size(), 1, 0, &ctx, FI_MULTI_RECV | FI_CLAIM),
              -FI_EBADFLAGS);
    // Only one buffer per FI_MULTI_RECV receive.
    iovec two[2] = {{buf.data(), 100}, {buf.data() + 100, 100}};
    fi_msg_tagged m{};
    m.msg_iov = two;
    m.iov_count = 2;
    m.addr = FI_ADDR_UNSPEC;
    EXPECT_EQ(fi_trecvmsg(b_.ep, &m, FI_MULTI_RECV), -FI_EINVAL);
    // Cancelled before any message: FI_ECANCELED with the release flag.
    ASSERT_EQ(post_multi(buf.data(), buf.size(), 1, 0, &ctx), 0);
    EXPECT_EQ(fi_cancel(&b_.ep->fid, &ctx), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), -FI_EAVAIL);
    const fi_cq_err_entry err = error(b_.cq);
    EXPECT_EQ(err.err, FI_ECANCELED);
    EXPECT_EQ(err.op_context, &ctx);
    EXPECT_EQ(err.flags & FI_MULTI_RECV, FI_MULTI_RECV);
}

// Without FI_TAGGED_MULTI_RECV (not asked for; an application built for API 1.x cannot) a
// tagged FI_MULTI_RECV is refused (untagged multi-receive buffers still work).
class WithoutTaggedMultiRecvTest : public MsgTest {
  protected:
    void check_refused() {
        ASSERT_EQ(info_->caps & FI_TAGGED_MULTI_RECV, 0u);
        std::vector<uint8_t> buf(256, 0);
        iovec iov{buf.data(), buf.size()};
        fi_msg_tagged m{};
        m.msg_iov = &iov;
        m.iov_count = 1;
        m.addr = FI_ADDR_UNSPEC;
        EXPECT_EQ(fi_trecvmsg(b_.ep, &m, FI_MULTI_RECV), -FI_EBADFLAGS);
        fi_msg um{};
        um.msg_iov = &iov;
        um.iov_count = 1;
        um.addr = FI_ADDR_UNSPEC;
        EXPECT_EQ(fi_recvmsg(b_.ep, &um, FI_MULTI_RECV), 0);
        EXPECT_EQ(fi_cancel(&b_.ep->fid, nullptr), 0);
    }
};
class Api1EndpointTest : public WithoutTaggedMultiRecvTest {
  protected:
    uint32_t api_version() const override { return FI_VERSION(1, 18); }
};

TEST_F(WithoutTaggedMultiRecvTest, TaggedMultiRecvRefused) { check_refused(); }
TEST_F(Api1EndpointTest, TaggedMultiRecvRefused) { check_refused(); }

class ReceiveCapsGetinfo : public ::testing::Test {};

TEST_F(ReceiveCapsGetinfo, Api2BitsOnlyOnRequestAndNeverForOlderApplications) {
    fi_info *hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    fi_info *info = nullptr;
    ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info), 0);
    constexpr uint64_t kBits = FI_TAGGED_DIRECTED_RECV | FI_TAGGED_MULTI_RECV |
                               FI_EXACT_DIRECTED_RECV;  // bits 45, 46, 48
    for (fi_info *i = info; i != nullptr; i = i->next) {
        EXPECT_EQ(i->caps & kBits, 0u) << i->domain_attr->name;
        EXPECT_EQ(i->rx_attr->caps & kBits, 0u);
    }
    fi_freeinfo(info);
    // Asking an old API for bit 48 (FI_VARIABLE_MSG there) finds nothing.
    hints->caps = FI_MSG | (1ULL << 48);
    EXPECT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info), -FI_ENODATA);
    // API 2.0 gets them only when it asks (fabtests' fi_getinfo_test counts them as bits
    // nobody asked for), each on its own.
    hints->caps = 0;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info), 0);
    for (fi_info *i = info; i != nullptr; i = i->next) EXPECT_EQ(i->caps & kBits, 0u);
    fi_freeinfo(info);
    for (uint64_t bit : {FI_TAGGED_DIRECTED_RECV, FI_TAGGED_MULTI_RECV, FI_EXACT_DIRECTED_RECV}) {
        hints->caps = FI_TAGGED | bit;
        ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info), 0);
        for (fi_info *i = info; i != nullptr; i = i->next) {
            EXPECT_EQ(i->caps & kBits, bit);
            EXPECT_EQ(i->rx_attr->caps & kBits, bit);
            EXPECT_EQ(i->tx_attr->caps & kBits, 0u);
        }
        fi_freeinfo(info);
    }
    fi_freeinfo(hints);
}

// FI_TAGGED_DIRECTED_RECV alone: tagged receives match their source, untagged ones ignore it.
class TaggedDirectedTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->caps = FI_MSG | FI_TAGGED | FI_TAGGED_DIRECTED_RECV;
    }
};

TEST_F(TaggedDirectedTest, OnlyTaggedReceivesUseTheSource) {
    EXPECT_NE(info_->caps & FI_TAGGED_DIRECTED_RECV, 0u);
    EXPECT_EQ(info_->caps & (FI_DIRECTED_RECV | FI_EXACT_DIRECTED_RECV), 0u)
        << "only what was asked among the primaries";
    uint8_t in[16] = {}, out[16] = {1, 2, 3};
    EXPECT_EQ(fi_trecv(b_.ep, in, sizeof in, nullptr, kNoEntry, 5, 0, nullptr), -FI_EINVAL)
        << "a tagged receive's source is checked";
    ASSERT_EQ(fi_recv(b_.ep, in, sizeof in, nullptr, kNoEntry, nullptr), 0)
        << "an untagged receive's source is ignored";
    ASSERT_EQ(retry([&] { return fi_send(a_.ep, out, sizeof out, nullptr, a_to_b_, nullptr); }),
              0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.flags, FI_RECV | FI_MSG);
    EXPECT_EQ(in[2], 3);
    // A directed tagged receive from A gets A's message.
    ASSERT_EQ(fi_trecv(b_.ep, in, sizeof in, nullptr, b_to_a_, 5, 0, nullptr), 0);
    out[2] = 9;
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, out, sizeof out, nullptr, a_to_b_, 5, nullptr); }),
              0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.flags, FI_RECV | FI_TAGGED);
    EXPECT_EQ(in[2], 9);
    ASSERT_EQ(wait(a_.cq, e), 1);
    ASSERT_EQ(wait(a_.cq, e), 1);
}

// FI_EXACT_DIRECTED_RECV (with FI_DIRECTED_RECV): FI_ADDR_UNSPEC is refused, named sources
// work, on both kinds of receive and on FI_PEEK.
class ExactDirectedTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_EXACT_DIRECTED_RECV;
    }
};

TEST_F(ExactDirectedTest, UnspecifiedSourceRefused) {
    EXPECT_NE(info_->caps & FI_EXACT_DIRECTED_RECV, 0u) << "returned when asked";
    EXPECT_NE(info_->rx_attr->caps & FI_EXACT_DIRECTED_RECV, 0u);
    uint8_t in[16] = {}, out[16] = {4, 5, 6};
    EXPECT_EQ(fi_recv(b_.ep, in, sizeof in, nullptr, FI_ADDR_UNSPEC, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_trecv(b_.ep, in, sizeof in, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), -FI_EINVAL);
    fi_msg_tagged peek{};
    peek.addr = FI_ADDR_UNSPEC;
    EXPECT_EQ(fi_trecvmsg(b_.ep, &peek, FI_PEEK), -FI_EINVAL);
    ASSERT_EQ(fi_recv(b_.ep, in, sizeof in, nullptr, b_to_a_, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_send(a_.ep, out, sizeof out, nullptr, a_to_b_, nullptr); }),
              0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(in[2], 6);
    ASSERT_EQ(wait(a_.cq, e), 1);
}

}  // namespace
}  // namespace ufi::msg_test
