// Scalable endpoints (fi_scalable_ep, runtime/ep/scalable.h): two scalable endpoints of three
// transmit and three receive contexts each, every context with its own CQ, and an ordinary
// endpoint beside them. Every transmit context reaches every receive context by fi_rx_addr
// (eager and rendezvous sizes, data checked, the source reported as the sender's AV entry);
// RMA lands at the receive context named; threads on separate contexts; names in the AV
// (walked in mixed arrays, looked up whole, refused when damaged); and the rules and bad input.
#include "msg_fixture.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

namespace ufi::msg_test {
namespace {

constexpr int kContexts = 3;
constexpr int kRxBits = 2;  // 2^2 >= 3

struct Sep {
    fid_ep *sep = nullptr;
    fid_av *av = nullptr;
    fid_ep *tx[kContexts] = {};
    fid_ep *rx[kContexts] = {};
    fid_cq *txcq[kContexts] = {};
    fid_cq *rxcq[kContexts] = {};
    std::vector<uint8_t> name;
};

class ScalableEpTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->caps |= FI_RMA | FI_NAMED_RX_CTX;
        hints->ep_attr->tx_ctx_cnt = kContexts;
        hints->ep_attr->rx_ctx_cnt = kContexts;
    }

    void SetUp() override {
        MsgTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ASSERT_EQ(info_->ep_attr->tx_ctx_cnt, size_t{kContexts});
        for (Sep *s : {&s1_, &s2_}) open_sep(*s);
        s1_to_s2_ = insert_into(s1_.av, s2_.name);
        s2_to_s1_ = insert_into(s2_.av, s1_.name);
    }

    void TearDown() override {
        for (Sep *s : {&s1_, &s2_}) close_sep(*s);
        MsgTest::TearDown();
    }

    fid_cq *open_cq() {
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        cq_attr.size = 4096;
        fid_cq *cq = nullptr;
        EXPECT_EQ(fi_cq_open(domain_, &cq_attr, &cq, nullptr), 0);
        return cq;
    }

    void open_sep(Sep &s) {
        fi_av_attr av_attr{};
        av_attr.rx_ctx_bits = kRxBits;
        ASSERT_EQ(fi_av_open(domain_, &av_attr, &s.av, nullptr), 0);
        ASSERT_EQ(fi_scalable_ep(domain_, info_, &s.sep, nullptr), 0);
        // Contexts first, the AV after (as fabtests' scalable_ep does): they take it at enable.
        for (int i = 0; i < kContexts; ++i) {
            ASSERT_EQ(fi_tx_context(s.sep, i, nullptr, &s.tx[i], nullptr), 0);
            ASSERT_EQ(fi_rx_context(s.sep, i, nullptr, &s.rx[i], nullptr), 0);
            EXPECT_EQ(s.tx[i]->fid.fclass, size_t{FI_CLASS_TX_CTX});
            EXPECT_EQ(s.rx[i]->fid.fclass, size_t{FI_CLASS_RX_CTX});
        }
        ASSERT_EQ(fi_scalable_ep_bind(s.sep, &s.av->fid, 0), 0);
        for (int i = 0; i < kContexts; ++i) {
            s.txcq[i] = open_cq();
            s.rxcq[i] = open_cq();
            ASSERT_EQ(fi_ep_bind(s.tx[i], &s.txcq[i]->fid, FI_SEND), 0);
            ASSERT_EQ(fi_ep_bind(s.rx[i], &s.rxcq[i]->fid, FI_RECV), 0);
            ASSERT_EQ(fi_enable(s.tx[i]), 0);
            ASSERT_EQ(fi_enable(s.rx[i]), 0);
        }
        ASSERT_EQ(fi_enable(s.sep), 0);
        size_t len = 0;
        ASSERT_EQ(fi_getname(&s.sep->fid, nullptr, &len), -FI_ETOOSMALL);
        s.name.resize(len);
        ASSERT_EQ(fi_getname(&s.sep->fid, s.name.data(), &len), 0);
        EXPECT_GT(len, a_.name.size()) << "a scalable name holds one name per context";
    }

    void close_sep(Sep &s) {
        for (int i = 0; i < kContexts; ++i) {
            for (fid_ep *c : {s.tx[i], s.rx[i]}) {
                if (c != nullptr) {
                    EXPECT_EQ(fi_close(&c->fid), 0);
                }
            }
            for (fid_cq *q : {s.txcq[i], s.rxcq[i]}) {
                if (q != nullptr) {
                    EXPECT_EQ(fi_close(&q->fid), 0);
                }
            }
        }
        if (s.sep != nullptr) {
            EXPECT_EQ(fi_close(&s.sep->fid), 0);
        }
        if (s.av != nullptr) {
            EXPECT_EQ(fi_close(&s.av->fid), 0);
        }
        s = Sep{};
    }

    static fi_addr_t insert_into(fid_av *av, const std::vector<uint8_t> &name) {
        fi_addr_t a = FI_ADDR_NOTAVAIL;
        EXPECT_EQ(fi_av_insert(av, name.data(), 1, &a, 0, nullptr), 1);
        return a;
    }

    // Progresses every context of both scalable endpoints (and the ordinary sides).
    void progress_seps() {
        fi_cq_tagged_entry none;
        for (Sep *s : {&s1_, &s2_}) {
            for (int i = 0; i < kContexts; ++i) {
                for (fid_cq *q : {s->txcq[i], s->rxcq[i]}) {
                    if (q != nullptr) (void)fi_cq_read(q, &none, 0);
                }
            }
        }
        progress_all();
    }

    ssize_t wait_cq(fid_cq *cq, fi_cq_tagged_entry &e, fi_addr_t *src = nullptr) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_cq_readfrom(cq, &e, 1, src);
            if (rc != -FI_EAGAIN) return rc;
            progress_seps();
        }
        return -FI_ETIMEDOUT;
    }

    template <typename Post>
    ssize_t post(Post &&p) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        for (;;) {
            const ssize_t rc = p();
            if (rc != -FI_EAGAIN || std::chrono::steady_clock::now() > deadline) return rc;
            progress_seps();
        }
    }

    // tx context k of s1_ sends `data` (tag t) to receive context j of s2_; checks it lands
    // there, whole, reported from s1_'s entry.
    void send_k_to_j(int k, int j, const std::vector<uint8_t> &data, uint64_t t) {
        std::vector<uint8_t> got(data.size() + 8, 0);
        ASSERT_EQ(fi_trecv(s2_.rx[j], got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, t, 0, &got), 0);
        const fi_addr_t to = fi_rx_addr(s1_to_s2_, j, kRxBits);
        ASSERT_EQ(post([&] { return fi_tsend(s1_.tx[k], data.data(), data.size(), nullptr, to, t, nullptr); }), 0);
        fi_cq_tagged_entry e{};
        fi_addr_t src = FI_ADDR_NOTAVAIL;
        ASSERT_EQ(wait_cq(s2_.rxcq[j], e, &src), 1) << "tx " << k << " -> rx " << j;
        EXPECT_EQ(e.op_context, &got);
        EXPECT_EQ(e.tag, t);
        ASSERT_EQ(e.len, data.size());
        EXPECT_EQ(std::memcmp(got.data(), data.data(), data.size()), 0);
        EXPECT_EQ(src, s2_to_s1_) << "a transmit context's messages come from its scalable endpoint's entry";
        ASSERT_EQ(wait_cq(s1_.txcq[k], e), 1);
        // Nothing reached the other receive contexts.
        for (int o = 0; o < kContexts; ++o) {
            if (o != j) {
                EXPECT_EQ(fi_cq_read(s2_.rxcq[o], &e, 1), -FI_EAGAIN);
            }
        }
    }

    Sep s1_, s2_;
    fi_addr_t s1_to_s2_ = FI_ADDR_NOTAVAIL;
    fi_addr_t s2_to_s1_ = FI_ADDR_NOTAVAIL;
};

TEST_F(ScalableEpTest, GetinfoOffersContextsUpToTheMaximum) {
    EXPECT_EQ(info_->domain_attr->max_ep_tx_ctx, 64u);
    EXPECT_EQ(info_->domain_attr->max_ep_rx_ctx, 64u);
    EXPECT_TRUE(info_->caps & FI_NAMED_RX_CTX);
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_NAMED_RX_CTX;
    hints->ep_attr->type = FI_EP_RDM;
    hints->ep_attr->tx_ctx_cnt = 65;
    fi_info *out = nullptr;
    EXPECT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &out), -FI_ENODATA);
    hints->ep_attr->tx_ctx_cnt = 64;
    hints->ep_attr->rx_ctx_cnt = 2;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &out), 0);
    EXPECT_EQ(out->ep_attr->tx_ctx_cnt, 64u);
    EXPECT_EQ(out->ep_attr->rx_ctx_cnt, 2u);
    fi_freeinfo(out);
    // An application that asks for no scalable endpoint is told 1 context per endpoint (Open
    // MPI 4.1's btl/ofi opens a scalable endpoint whenever more are offered, and keeps names
    // in FI_NAME_MAX bytes); one that names FI_NAMED_RX_CTX is told 64.
    hints->ep_attr->tx_ctx_cnt = 0;
    hints->ep_attr->rx_ctx_cnt = 0;
    hints->caps = FI_RMA | FI_ATOMIC;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &out), 0);
    EXPECT_EQ(out->domain_attr->max_ep_tx_ctx, 1u);
    EXPECT_EQ(out->domain_attr->max_ep_rx_ctx, 1u);
    fi_freeinfo(out);
    hints->caps = FI_RMA | FI_NAMED_RX_CTX;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &out), 0);
    EXPECT_EQ(out->domain_attr->max_ep_tx_ctx, 64u);
    fi_freeinfo(out);
    fi_freeinfo(hints);
}

TEST_F(ScalableEpTest, EveryTransmitContextReachesEveryReceiveContext) {
    uint64_t tag = 1;
    for (int k = 0; k < kContexts; ++k) {
        for (int j = 0; j < kContexts; ++j) {
            send_k_to_j(k, j, pattern(40 + k * 3 + j, static_cast<uint8_t>(tag)), tag);
            ++tag;
        }
    }
}

TEST_F(ScalableEpTest, LargeMessagesTooByRendezvous) {
    send_k_to_j(2, 1, pattern(1 << 20, 9), 77);
    send_k_to_j(0, 2, pattern(300000, 5), 78);
}

TEST_F(ScalableEpTest, AnAddressWithoutAReceiveIndexReachesContextZero) {
    std::vector<uint8_t> got(16, 0);
    ASSERT_EQ(fi_trecv(s2_.rx[0], got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, 5, 0, nullptr), 0);
    const auto data = pattern(16, 3);
    ASSERT_EQ(post([&] { return fi_tsend(s1_.tx[1], data.data(), data.size(), nullptr, s1_to_s2_, 5, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait_cq(s2_.rxcq[0], e), 1);
    EXPECT_EQ(got, data);
}

TEST_F(ScalableEpTest, OrdinaryEndpointsAndScalableOnesTalk) {
    // c_: an ordinary endpoint whose AV has receive-context bits.
    fi_av_attr av_attr{};
    av_attr.rx_ctx_bits = kRxBits;
    ASSERT_EQ(fi_av_open(domain_, &av_attr, &c_.av, nullptr), 0);
    c_.cq = open_cq();
    ASSERT_EQ(fi_endpoint(domain_, info_, &c_.ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(c_.ep, &c_.av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(c_.ep, &c_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(c_.ep), 0);
    size_t len = 0;
    ASSERT_EQ(fi_getname(&c_.ep->fid, nullptr, &len), -FI_ETOOSMALL);
    c_.name.resize(len);
    ASSERT_EQ(fi_getname(&c_.ep->fid, c_.name.data(), &len), 0);
    const fi_addr_t c_to_s2 = insert_into(c_.av, s2_.name);
    const fi_addr_t s2_to_c = insert_into(s2_.av, c_.name);

    // c_ -> s2_'s receive context 2.
    std::vector<uint8_t> got(32, 0);
    ASSERT_EQ(fi_trecv(s2_.rx[2], got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, nullptr), 0);
    const auto data = pattern(32, 1);
    ASSERT_EQ(post([&] {
                  return fi_tsend(c_.ep, data.data(), data.size(), nullptr,
                                  fi_rx_addr(c_to_s2, 2, kRxBits), 42, nullptr);
              }),
              0);
    fi_cq_tagged_entry e{};
    fi_addr_t src = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(wait_cq(s2_.rxcq[2], e, &src), 1);
    EXPECT_EQ(got, data);
    EXPECT_EQ(src, s2_to_c);

    // s2_'s transmit context 1 -> c_, which reports s2_'s entry as the source.
    std::vector<uint8_t> back(32, 0);
    ASSERT_EQ(fi_trecv(c_.ep, back.data(), back.size(), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, nullptr), 0);
    const auto reply = pattern(20, 4);
    ASSERT_EQ(post([&] { return fi_tsend(s2_.tx[1], reply.data(), reply.size(), nullptr, s2_to_c, 43, nullptr); }), 0);
    src = FI_ADDR_NOTAVAIL;
    for (;;) {
        const ssize_t rc = wait_cq(c_.cq, e, &src);
        ASSERT_EQ(rc, 1);
        if (e.flags & FI_RECV) break;  // (c_'s own send completed in the same CQ)
    }
    EXPECT_EQ(std::memcmp(back.data(), reply.data(), reply.size()), 0);
    EXPECT_EQ(src, c_to_s2);
}

TEST_F(ScalableEpTest, RmaLandsAtTheReceiveContextNamed) {
    std::vector<uint8_t> target(4096, 0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(domain_, target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ, 0,
                        7001, 0, &mr, nullptr),
              0);
    const auto data = pattern(3000, 6);
    ASSERT_EQ(post([&] {
                  return fi_write(s1_.tx[1], data.data(), data.size(), nullptr,
                                  fi_rx_addr(s1_to_s2_, 2, kRxBits), 0, fi_mr_key(mr), nullptr);
              }),
              0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait_cq(s1_.txcq[1], e), 1);
    EXPECT_TRUE(e.flags & FI_WRITE);
    EXPECT_EQ(std::memcmp(target.data(), data.data(), data.size()), 0);
    std::vector<uint8_t> back(3000, 0);
    ASSERT_EQ(post([&] {
                  return fi_read(s1_.tx[0], back.data(), back.size(), nullptr,
                                 fi_rx_addr(s1_to_s2_, 1, kRxBits), 0, fi_mr_key(mr), nullptr);
              }),
              0);
    ASSERT_EQ(wait_cq(s1_.txcq[0], e), 1);
    EXPECT_EQ(back, data);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(ScalableEpTest, ThreadsOnSeparateContextsLoseNothing) {
    constexpr int kMessages = 3000;
    std::atomic<int> failures{0};
    auto worker = [&](int t) {
        // Thread t: s1_'s transmit context t to s2_'s receive context t, each message numbered.
        const fi_addr_t to = fi_rx_addr(s1_to_s2_, t, kRxBits);
        fi_cq_tagged_entry e;
        int received = 0, sent = 0, posted = 0;
        std::vector<uint64_t> slots(16, 0);
        uint64_t next_expected = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        // Receives first (16 at a time, in order of posting: one peer, one lane, in order).
        auto post_recv = [&](int slot) {
            return fi_trecv(s2_.rx[t], &slots[slot], sizeof(uint64_t), nullptr, FI_ADDR_UNSPEC, 0, ~0ULL,
                            reinterpret_cast<void *>(static_cast<uintptr_t>(slot)));
        };
        for (int s = 0; s < 16; ++s) {
            if (post_recv(s) != 0) ++failures;
        }
        uint64_t value = 0;
        while (received < kMessages && std::chrono::steady_clock::now() < deadline) {
            if (posted < kMessages && posted - sent < 8) {
                value = static_cast<uint64_t>(posted) | (static_cast<uint64_t>(t) << 32);
                const ssize_t rc = fi_tinject(s1_.tx[t], &value, sizeof value, to, 1);
                if (rc == 0) {
                    ++posted;
                    ++sent;  // (inject: nothing completes)
                } else if (rc != -FI_EAGAIN) {
                    ++failures;
                    return;
                }
            }
            (void)fi_cq_read(s1_.txcq[t], &e, 0);
            if (fi_cq_read(s2_.rxcq[t], &e, 1) == 1) {
                const int slot = static_cast<int>(reinterpret_cast<uintptr_t>(e.op_context));
                const uint64_t want = next_expected | (static_cast<uint64_t>(t) << 32);
                if (slots[slot] != want) ++failures;
                ++next_expected;
                ++received;
                if (received + 16 <= kMessages + 15 && post_recv(slot) != 0) ++failures;
            }
        }
        if (received != kMessages) ++failures;
    };
    std::thread a(worker, 0), b(worker, 1);
    a.join();
    b.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST_F(ScalableEpTest, NamesInTheAv) {
    // fi_av_lookup gives the whole scalable name back.
    std::vector<uint8_t> out(s2_.name.size() + 16, 0);
    size_t len = out.size();
    ASSERT_EQ(fi_av_lookup(s1_.av, s1_to_s2_, out.data(), &len), 0);
    ASSERT_EQ(len, s2_.name.size());
    EXPECT_EQ(std::memcmp(out.data(), s2_.name.data(), len), 0);
    // A packed array of an ordinary name, a scalable one and an ordinary one: all three.
    std::vector<uint8_t> packed(a_.name);
    packed.insert(packed.end(), s1_.name.begin(), s1_.name.end());
    packed.insert(packed.end(), b_.name.begin(), b_.name.end());
    fi_addr_t addrs[3];
    ASSERT_EQ(fi_av_insert(s2_.av, packed.data(), 3, addrs, 0, nullptr), 3);
    len = out.size();
    ASSERT_EQ(fi_av_lookup(s2_.av, addrs[1], out.data(), &len), 0);
    EXPECT_EQ(len, s1_.name.size());
    len = out.size();
    ASSERT_EQ(fi_av_lookup(s2_.av, addrs[2], out.data(), &len), 0);
    EXPECT_EQ(len, b_.name.size());
    EXPECT_EQ(std::memcmp(out.data(), b_.name.data(), len), 0);
    // A damaged one is refused.
    std::vector<uint8_t> bad(s1_.name);
    bad[bad.size() / 2] ^= 0x40;
    fi_addr_t b = 0;
    EXPECT_EQ(fi_av_insert(s2_.av, bad.data(), 1, &b, 0, nullptr), 0);
    EXPECT_EQ(b, FI_ADDR_NOTAVAIL);
    // fi_av_straddr prints it.
    char text[8] = {};
    size_t tlen = sizeof text;
    ASSERT_NE(fi_av_straddr(s2_.av, s1_.name.data(), text, &tlen), nullptr);
    EXPECT_GT(tlen, s1_.name.size());
}

TEST_F(ScalableEpTest, RulesAndBadInput) {
    fid_ep *ctx = nullptr;
    EXPECT_EQ(fi_tx_context(s1_.sep, kContexts, nullptr, &ctx, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_rx_context(s1_.sep, -1, nullptr, &ctx, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_tx_context(s1_.sep, 0, nullptr, &ctx, nullptr), -FI_EBUSY);
    EXPECT_EQ(fi_close(&s1_.sep->fid), -FI_EBUSY) << "contexts are open";
    EXPECT_EQ(fi_enable(s1_.sep), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_ep_bind(s1_.tx[0], &s1_.av->fid, 0), -FI_EINVAL);
    // The scalable endpoint carries no traffic itself.
    uint8_t byte = 0;
    EXPECT_EQ(fi_send(s1_.sep, &byte, 1, nullptr, s1_to_s2_, nullptr), -FI_ENOSYS);
    // Ordinary endpoints have no contexts to hand out.
    EXPECT_EQ(fi_tx_context(a_.ep, 0, nullptr, &ctx, nullptr), -FI_ENOSYS);
    // A receive context the peer does not have.
    EXPECT_NE(fi_tsend(s1_.tx[0], &byte, 1, nullptr, fi_rx_addr(s1_to_s2_, 3, kRxBits), 0, nullptr), 0);

    // A second scalable endpoint: the name waits for every context.
    fid_ep *sep = nullptr;
    ASSERT_EQ(fi_scalable_ep(domain_, info_, &sep, nullptr), 0);
    size_t len = 64;
    std::vector<uint8_t> name(len);
    EXPECT_EQ(fi_getname(&sep->fid, name.data(), &len), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_enable(sep), -FI_ENOAV);
    fid_ep *tx = nullptr;
    fi_tx_attr attr{};
    attr.caps = FI_TAGGED | FI_SEND;
    ASSERT_EQ(fi_tx_context(sep, 1, &attr, &tx, nullptr), 0);
    EXPECT_TRUE(attr.caps & FI_TAGGED);
    EXPECT_FALSE(attr.caps & FI_RECV);
    EXPECT_GT(attr.size, 0u);
    fi_tx_attr too_much{};
    too_much.caps = FI_ATOMIC;  // not the endpoint's
    fid_ep *tx2 = nullptr;
    EXPECT_EQ(fi_tx_context(sep, 2, &too_much, &tx2, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_enable(tx), -FI_ENOAV) << "its AV comes from the scalable endpoint";
    // A transmit context enabled without its CQ fails, and succeeds once the CQ is bound.
    fid_cq *cq = open_cq();
    fid_av *av = nullptr;
    fi_av_attr av_attr{};
    ASSERT_EQ(fi_av_open(domain_, &av_attr, &av, nullptr), 0);
    ASSERT_EQ(fi_scalable_ep_bind(sep, &av->fid, 0), 0);
    EXPECT_EQ(fi_scalable_ep_bind(sep, &av->fid, 0), -FI_EINVAL);
    EXPECT_EQ(fi_enable(tx), -FI_ENOCQ);
    ASSERT_EQ(fi_ep_bind(tx, &cq->fid, FI_SEND), 0);
    EXPECT_EQ(fi_enable(tx), 0) << "a second fi_enable after a failed one";
    EXPECT_EQ(fi_enable(sep), -FI_EOPBADSTATE) << "context 0 is not open";
    EXPECT_EQ(fi_close(&av->fid), -FI_EBUSY) << "bound to the scalable endpoint";
    EXPECT_EQ(fi_close(&tx->fid), 0);
    EXPECT_EQ(fi_close(&cq->fid), 0);
    EXPECT_EQ(fi_close(&sep->fid), 0);
    EXPECT_EQ(fi_close(&av->fid), 0);

    // Counts beyond the maximum.
    fi_info *big = fi_dupinfo(info_);
    big->ep_attr->tx_ctx_cnt = 65;
    EXPECT_EQ(fi_scalable_ep(domain_, big, &sep, nullptr), -FI_EINVAL);
    big->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
    EXPECT_EQ(fi_scalable_ep(domain_, big, &sep, nullptr), -FI_EINVAL);
    fi_freeinfo(big);
}

// Manual progress across contexts: a transmit context's first message to a peer waits for the
// handshake's answer, which only its own progress reads. The program here never reads that
// context's CQ, only a sibling receive context's (as fabtests' fi_scalable_ep waits): the
// sibling's empty polls lend it the progress, and the message arrives.
TEST_F(ScalableEpTest, SiblingContextsProgressATransmitContextNobodyPolls) {
    uint64_t got = 0;
    ASSERT_EQ(fi_trecv(s2_.rx[1], &got, sizeof got, nullptr, FI_ADDR_UNSPEC, 9, 0, &got), 0);
    const uint64_t value = 0x5ca1ab1e;
    const fi_addr_t to = fi_rx_addr(s1_to_s2_, 1, kRxBits);
    fi_cq_tagged_entry e{};
    // Polls s2_'s receive context 1 (the receiver) and s1_'s receive context 0 (the sender's
    // sibling), never s1_.txcq[2].
    auto poll_allowed = [&] {
        fi_cq_tagged_entry none;
        (void)fi_cq_read(s1_.rxcq[0], &none, 0);
        return fi_cq_read(s2_.rxcq[1], &e, 1);
    };
    ssize_t rc = -FI_EAGAIN;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while ((rc = fi_tinject(s1_.tx[2], &value, sizeof value, to, 9)) == -FI_EAGAIN &&
           std::chrono::steady_clock::now() < deadline) {
        (void)poll_allowed();
    }
    ASSERT_EQ(rc, 0);
    rc = -FI_EAGAIN;
    while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) rc = poll_allowed();
    ASSERT_EQ(rc, 1) << "the message of a transmit context nobody polls did not arrive";
    EXPECT_EQ(got, value);
}

// By host and port: a scalable endpoint opened from fi_getinfo(node, service, FI_SOURCE)
// listens with receive context j at the service's port + j, and a peer that knows it only by
// host and port (fi_av_insertsvc) reaches context j at fi_rx_addr(addr, j): fabtests'
// fi_scalable_ep client. tcp on loopback only.
class ScalableByHostAndPortTest : public ScalableEpTest {
  protected:
    bool needs_loopback_tcp() const override { return true; }
};

// Two consecutive ports free now (the kernel's pick, then the next one).
static int free_port_pair() {
    for (int attempt = 0; attempt < 20; ++attempt) {
        int fds[2] = {-1, -1};
        int port = 0;
        bool ok = true;
        for (int k = 0; k < 2 && ok; ++k) {
            fds[k] = socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in sa{};
            sa.sin_family = AF_INET;
            sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            sa.sin_port = htons(static_cast<uint16_t>(k == 0 ? 0 : port + 1));
            ok = fds[k] >= 0 && bind(fds[k], reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0;
            if (ok && k == 0) {
                socklen_t len = sizeof sa;
                getsockname(fds[0], reinterpret_cast<sockaddr *>(&sa), &len);
                port = ntohs(sa.sin_port);
                ok = port < 65535;
            }
        }
        for (int fd : fds) {
            if (fd >= 0) close(fd);
        }
        if (ok) return port;
    }
    return 0;
}

TEST_F(ScalableByHostAndPortTest, AHostAndPortReachesEveryReceiveContext) {
    const int port = free_port_pair();
    ASSERT_NE(port, 0);
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_NAMED_RX_CTX;
    hints->ep_attr->type = FI_EP_RDM;
    hints->ep_attr->tx_ctx_cnt = 2;
    hints->ep_attr->rx_ctx_cnt = 2;
    fi_info *src = nullptr;
    const std::string service = std::to_string(port);
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", service.c_str(), FI_SOURCE, hints, &src), 0);
    fi_freeinfo(hints);
    // The server: a scalable endpoint of 2 + 2 contexts listening on `port` and `port` + 1.
    fid_ep *sep = nullptr, *tx[2] = {}, *rx[2] = {};
    fid_cq *txcq[2] = {}, *rxcq[2] = {};
    fid_av *av = nullptr;
    fi_av_attr av_attr{};
    av_attr.rx_ctx_bits = 1;
    ASSERT_EQ(fi_av_open(domain_, &av_attr, &av, nullptr), 0);
    ASSERT_EQ(fi_scalable_ep(domain_, src, &sep, nullptr), 0);
    fi_freeinfo(src);
    ASSERT_EQ(fi_scalable_ep_bind(sep, &av->fid, 0), 0);
    for (int i = 0; i < 2; ++i) {
        txcq[i] = open_cq();
        rxcq[i] = open_cq();
        ASSERT_EQ(fi_tx_context(sep, i, nullptr, &tx[i], nullptr), 0);
        ASSERT_EQ(fi_rx_context(sep, i, nullptr, &rx[i], nullptr), 0);
        ASSERT_EQ(fi_ep_bind(tx[i], &txcq[i]->fid, FI_SEND), 0);
        ASSERT_EQ(fi_ep_bind(rx[i], &rxcq[i]->fid, FI_RECV), 0);
        ASSERT_EQ(fi_enable(tx[i]), 0);
        ASSERT_EQ(fi_enable(rx[i]), 0) << "receive context " << i << " listens on port " << port + i;
    }
    ASSERT_EQ(fi_enable(sep), 0);
    // The client: an ordinary endpoint that knows the server by host and port only.
    fi_av_attr c_attr{};
    c_attr.rx_ctx_bits = 1;
    ASSERT_EQ(fi_av_open(domain_, &c_attr, &c_.av, nullptr), 0);
    c_.cq = open_cq();
    ASSERT_EQ(fi_endpoint(domain_, info_, &c_.ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(c_.ep, &c_.av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(c_.ep, &c_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(c_.ep), 0);
    fi_addr_t server = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insertsvc(c_.av, "127.0.0.1", service.c_str(), &server, 0, nullptr), 1);
    for (int j = 0; j < 2; ++j) {
        uint64_t got = 0;
        ASSERT_EQ(fi_trecv(rx[j], &got, sizeof got, nullptr, FI_ADDR_UNSPEC, 0, ~0ULL, &got), 0);
        const uint64_t value = 0x1000 + static_cast<uint64_t>(j);
        ASSERT_EQ(post([&] {
                      return fi_tsend(c_.ep, &value, sizeof value, nullptr, fi_rx_addr(server, j, 1),
                                      20 + j, nullptr);
                  }),
                  0);
        fi_cq_tagged_entry e{};
        ssize_t rc = -FI_EAGAIN;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
            fi_cq_tagged_entry none;
            for (fid_cq *q : {txcq[0], txcq[1], rxcq[1 - j]}) (void)fi_cq_read(q, &none, 0);
            (void)fi_cq_read(c_.cq, &none, 0);
            rc = fi_cq_read(rxcq[j], &e, 1);
        }
        ASSERT_EQ(rc, 1) << "receive context " << j << " got nothing by host and port";
        EXPECT_EQ(got, value);
        EXPECT_EQ(e.tag, static_cast<uint64_t>(20 + j));
        EXPECT_EQ(fi_cq_read(rxcq[1 - j], &e, 1), -FI_EAGAIN) << "the other context got it";
    }
    // An ordinary name with a receive index other than 0 names nothing.
    uint64_t one = 1;
    const fi_addr_t bad = fi_rx_addr(insert(c_, a_.name), 1, 1);
    EXPECT_NE(fi_tsend(c_.ep, &one, sizeof one, nullptr, bad, 1, nullptr), 0);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(fi_close(&tx[i]->fid), 0);
        EXPECT_EQ(fi_close(&rx[i]->fid), 0);
        EXPECT_EQ(fi_close(&txcq[i]->fid), 0);
        EXPECT_EQ(fi_close(&rxcq[i]->fid), 0);
    }
    EXPECT_EQ(fi_close(&sep->fid), 0);
    EXPECT_EQ(fi_close(&av->fid), 0);
}

}  // namespace
}  // namespace ufi::msg_test
