// Shared contexts (fi_stx_context, fi_srx_context; runtime/ep/shared_rx.h): two receiving
// endpoints bound to one shared receive context (and one shared transmit context), sharing an
// AV with a third endpoint that sends to both. Receives posted to the context serve both
// endpoints, in the order they were posted, and complete in the CQ of the endpoint whose
// message they took; binding rules, closing rules, cancel and bad input.
#include "msg_fixture.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstring>

namespace ufi::msg_test {
namespace {

class SharedContextTest : public MsgTest {
  protected:
    void SetUp() override {
        fi_info *hints = fi_allocinfo();
        hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
        hints->ep_attr->type = FI_EP_RDM;
        hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
        hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
        const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info_);
        fi_freeinfo(hints);
        ASSERT_EQ(rc, 0) << fi_strerror(-rc);
        ASSERT_EQ(info_->ep_attr->rx_ctx_cnt, FI_SHARED_CONTEXT);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
        fi_av_attr av_attr{};
        ASSERT_EQ(fi_av_open(domain_, &av_attr, &av_, nullptr), 0);
        ASSERT_EQ(fi_srx_context(domain_, info_->rx_attr, &srx_, nullptr), 0);
        ASSERT_EQ(fi_stx_context(domain_, info_->tx_attr, &stx_, nullptr), 0);
        // a_ and b_ receive through the shared contexts; c_ sends (and holds the AV for
        // close_side: the AV closes after every endpoint).
        open_member(a_, true);
        open_member(b_, true);
        open_member(c_, false);
        c_.av = av_;
        for (Side *s : {&a_, &b_, &c_}) {
            fi_addr_t addr = FI_ADDR_NOTAVAIL;
            ASSERT_EQ(fi_av_insert(av_, s->name.data(), 1, &addr, 0, nullptr), 1);
            addr_.push_back(addr);
        }
    }

    void TearDown() override {
        for (Side *s : {&a_, &b_, &c_}) close_side(*s);
        if (srx_ != nullptr) {
            EXPECT_EQ(fi_close(&srx_->fid), 0);
        }
        if (stx_ != nullptr) {
            EXPECT_EQ(fi_close(&stx_->fid), 0);
        }
        srx_ = nullptr;
        stx_ = nullptr;
        MsgTest::TearDown();
    }

    void open_member(Side &s, bool shared) {
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        cq_attr.size = 1024;
        ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &s.cq, nullptr), 0);
        ASSERT_EQ(fi_endpoint(domain_, info_, &s.ep, nullptr), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &av_->fid, 0), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV), 0);
        if (shared) {
            ASSERT_EQ(fi_ep_bind(s.ep, &srx_->fid, 0), 0);
            ASSERT_EQ(fi_ep_bind(s.ep, &stx_->fid, 0), 0);
        }
        ASSERT_EQ(fi_enable(s.ep), 0);
        size_t len = 0;
        ASSERT_EQ(fi_getname(&s.ep->fid, nullptr, &len), -FI_ETOOSMALL);
        s.name.resize(len);
        ASSERT_EQ(fi_getname(&s.ep->fid, s.name.data(), &len), 0);
    }

    // c_ sends `data` with `tag` to the endpoint at AV index `to`.
    void post_send(size_t to, const std::vector<uint8_t> &data, uint64_t tag) {
        ASSERT_EQ(retry([&] {
                      return fi_tsend(c_.ep, data.data(), data.size(), nullptr, addr_[to], tag,
                                      nullptr);
                  }),
                  0);
    }
    // ... and sees it complete (which a rendezvous send does only once a receive took it).
    void send_to(size_t to, const std::vector<uint8_t> &data, uint64_t tag) {
        post_send(to, data, tag);
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(c_.cq, e), 1);
    }

    // Waits for one completion in a_'s or b_'s CQ: which one (0 or 1), and the entry.
    int wait_either(fi_cq_tagged_entry &e) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (std::chrono::steady_clock::now() < deadline) {
            if (fi_cq_read(a_.cq, &e, 1) == 1) return 0;
            if (fi_cq_read(b_.cq, &e, 1) == 1) return 1;
            progress_all();
        }
        return -1;
    }

    fid_av *av_ = nullptr;
    fid_ep *srx_ = nullptr;
    fid_stx *stx_ = nullptr;
    std::vector<fi_addr_t> addr_;  // a_, b_, c_ in the shared AV
};

TEST_F(SharedContextTest, ReceivesPostedFirstServeEitherEndpoint) {
    std::vector<uint8_t> buf1(64, 0), buf2(64, 0);
    ASSERT_EQ(fi_trecv(srx_, buf1.data(), buf1.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &buf1), 0);
    ASSERT_EQ(fi_trecv(srx_, buf2.data(), buf2.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &buf2), 0);
    const auto to_b = pattern(40, 2), to_a = pattern(24, 1);
    send_to(1, to_b, 22);
    send_to(0, to_a, 11);
    int seen[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        fi_cq_tagged_entry e{};
        const int which = wait_either(e);
        ASSERT_GE(which, 0) << "no completion within " << kWaitMs << " ms";
        ++seen[which];
        const auto &want = which == 0 ? to_a : to_b;
        EXPECT_EQ(e.tag, which == 0 ? 11u : 22u) << "the completion is in the CQ of the endpoint whose message it took";
        ASSERT_EQ(e.len, want.size());
        const auto *got = static_cast<const uint8_t *>(e.op_context == &buf1 ? buf1.data() : buf2.data());
        EXPECT_EQ(std::memcmp(got, want.data(), want.size()), 0);
    }
    EXPECT_EQ(seen[0], 1);
    EXPECT_EQ(seen[1], 1);
}

TEST_F(SharedContextTest, MessagesThatCameFirstAreTakenByLaterReceives) {
    const auto to_a = pattern(100, 3), to_b = pattern(7, 4);
    post_send(0, to_a, 1);
    post_send(1, to_b, 2);
    // Let both arrive (unexpected at their endpoints) before any receive exists.
    for (int i = 0; i < 200; ++i) progress_all();
    std::vector<uint8_t> into_b(16), into_a(128);
    ASSERT_EQ(fi_trecv(srx_, into_b.data(), into_b.size(), nullptr, FI_ADDR_UNSPEC, 2, 0, &into_b), 0);
    ASSERT_EQ(fi_trecv(srx_, into_a.data(), into_a.size(), nullptr, FI_ADDR_UNSPEC, 1, 0, &into_a), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(e.op_context, &into_a);
    EXPECT_EQ(std::memcmp(into_a.data(), to_a.data(), to_a.size()), 0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.op_context, &into_b);
    EXPECT_EQ(std::memcmp(into_b.data(), to_b.data(), to_b.size()), 0);
    ASSERT_EQ(wait(c_.cq, e), 1);
    ASSERT_EQ(wait(c_.cq, e), 1);
}

TEST_F(SharedContextTest, ReceivesAreServedInPostingOrder) {
    std::vector<uint8_t> exact(32), any(32);
    ASSERT_EQ(fi_trecv(srx_, exact.data(), exact.size(), nullptr, FI_ADDR_UNSPEC, 5, 0, &exact), 0);
    ASSERT_EQ(fi_trecv(srx_, any.data(), any.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &any), 0);
    send_to(0, pattern(8, 9), 7);  // only `any` takes tag 7
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(e.op_context, &any);
    EXPECT_EQ(e.tag, 7u);
    send_to(1, pattern(8, 10), 5);
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.op_context, &exact);
    EXPECT_EQ(e.tag, 5u);
}

TEST_F(SharedContextTest, UntaggedAndLargeMessages) {
    // Large enough for rendezvous (and for several eager fragments where it is not).
    const auto big = pattern(256 * 1024, 5);
    std::vector<uint8_t> into(big.size());
    ASSERT_EQ(fi_recv(srx_, into.data(), into.size(), nullptr, FI_ADDR_UNSPEC, &into), 0);
    ASSERT_EQ(retry([&] {
                  return fi_send(c_.ep, big.data(), big.size(), nullptr, addr_[1], nullptr);
              }),
              0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.op_context, &into);
    EXPECT_EQ(e.len, big.size());
    EXPECT_TRUE(into == big);
    ASSERT_EQ(wait(c_.cq, e), 1);
}

TEST_F(SharedContextTest, DirectedReceivesNameTheSharedAvsSources) {
    std::vector<uint8_t> from_c(16);
    ASSERT_EQ(fi_trecv(srx_, from_c.data(), from_c.size(), nullptr, addr_[2], 3, 0, &from_c), 0);
    send_to(0, pattern(16, 6), 3);
    fi_cq_tagged_entry e{};
    fi_addr_t src = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(wait(a_.cq, e, &src), 1);
    EXPECT_EQ(e.op_context, &from_c);
    EXPECT_EQ(src, addr_[2]);
    std::vector<uint8_t> nobody(16);
    EXPECT_EQ(fi_trecv(srx_, nobody.data(), nobody.size(), nullptr, 99, 0, 0, nullptr), -FI_EINVAL)
        << "a source that is not in the AV";
}

TEST_F(SharedContextTest, CancelReportsInABoundEndpointsCq) {
    std::vector<uint8_t> buf(16);
    int ctx = 0;
    ASSERT_EQ(fi_trecv(srx_, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, 77, 0, &ctx), 0);
    ASSERT_EQ(fi_cancel(&srx_->fid, &ctx), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(a_.cq, e), -FI_EAVAIL);
    const fi_cq_err_entry err = error(a_.cq);
    EXPECT_EQ(err.err, FI_ECANCELED);
    EXPECT_EQ(err.op_context, &ctx);
    // Canceled: a message with its tag waits for another receive.
    const auto msg = pattern(4, 1);
    post_send(0, msg, 77);
    EXPECT_TRUE(quiet(a_.cq));
    std::vector<uint8_t> again(16);
    ASSERT_EQ(fi_trecv(srx_, again.data(), again.size(), nullptr, FI_ADDR_UNSPEC, 77, 0, &again), 0);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(e.op_context, &again);
    EXPECT_EQ(std::memcmp(again.data(), msg.data(), msg.size()), 0);
    ASSERT_EQ(wait(c_.cq, e), 1);
}

TEST_F(SharedContextTest, WhatTheContextsRefuse) {
    std::vector<uint8_t> buf(16);
    iovec iov{buf.data(), buf.size()};
    fi_msg_tagged msg{};
    msg.msg_iov = &iov;
    msg.iov_count = 1;
    msg.addr = FI_ADDR_UNSPEC;
    EXPECT_EQ(fi_trecvmsg(srx_, &msg, FI_PEEK), -FI_EBADFLAGS);
    fi_msg m{};
    m.msg_iov = &iov;
    m.iov_count = 1;
    m.addr = FI_ADDR_UNSPEC;
    EXPECT_EQ(fi_recvmsg(srx_, &m, FI_MULTI_RECV), -FI_EBADFLAGS);
    EXPECT_EQ(fi_send(srx_, buf.data(), buf.size(), nullptr, addr_[0], nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_write(srx_, buf.data(), buf.size(), nullptr, addr_[0], 0, 0, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_enable(srx_), 0) << "usable from the start";
    EXPECT_EQ(fi_ep_bind(srx_, &a_.cq->fid, FI_RECV), -FI_EINVAL) << "CQs bind to the endpoints";
    EXPECT_EQ(fi_control(&stx_->fid, FI_GETOPSFLAG, nullptr), -FI_ENOSYS);
    // Endpoints are bound: neither context closes.
    EXPECT_EQ(fi_close(&srx_->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&stx_->fid), -FI_EBUSY);
    // One of each per endpoint.
    fid_ep *ep = nullptr;
    ASSERT_EQ(fi_endpoint(domain_, info_, &ep, nullptr), 0);
    EXPECT_EQ(fi_ep_bind(ep, &srx_->fid, 0), 0);
    EXPECT_EQ(fi_ep_bind(ep, &srx_->fid, 0), -FI_EINVAL);
    EXPECT_EQ(fi_ep_bind(ep, &stx_->fid, FI_SEND), -FI_EBADFLAGS);
    EXPECT_EQ(fi_close(&ep->fid), 0);
}

TEST_F(SharedContextTest, ItsSizeBoundsTheReceivesWaitingInIt) {
    fi_rx_attr attr = *info_->rx_attr;
    attr.size = 2;
    fid_ep *small = nullptr;
    ASSERT_EQ(fi_srx_context(domain_, &attr, &small, nullptr), 0);
    std::vector<uint8_t> buf(8);
    EXPECT_EQ(fi_trecv(small, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    EXPECT_EQ(fi_trecv(small, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, 2, 0, nullptr), 0);
    EXPECT_EQ(fi_trecv(small, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, 3, 0, nullptr), -FI_EAGAIN);
    EXPECT_EQ(fi_close(&small->fid), 0) << "nothing bound: it closes with receives waiting";
}

TEST_F(SharedContextTest, ConnectionlessEndpointsMustShareTheAv) {
    fid_av *other = nullptr;
    fi_av_attr av_attr{};
    ASSERT_EQ(fi_av_open(domain_, &av_attr, &other, nullptr), 0);
    fid_cq *cq = nullptr;
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &cq, nullptr), 0);
    fid_ep *ep = nullptr;
    ASSERT_EQ(fi_endpoint(domain_, info_, &ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(ep, &other->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_ep_bind(ep, &srx_->fid, 0), 0);
    EXPECT_EQ(fi_enable(ep), -FI_EINVAL);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    EXPECT_EQ(fi_close(&cq->fid), 0);
    EXPECT_EQ(fi_close(&other->fid), 0);
    // The members still work.
    std::vector<uint8_t> buf(8);
    ASSERT_EQ(fi_trecv(srx_, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &buf), 0);
    send_to(1, pattern(8, 2), 4);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.op_context, &buf);
}

TEST_F(SharedContextTest, AnEndpointThatClosesLeavesTheOthersServed) {
    close_side(a_);  // (not the AV: c_ holds it)
    std::vector<uint8_t> buf(8);
    ASSERT_EQ(fi_trecv(srx_, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &buf), 0);
    send_to(1, pattern(8, 3), 9);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.op_context, &buf);
}

}  // namespace
}  // namespace ufi::msg_test
