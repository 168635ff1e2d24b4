// RMA between two endpoints of one process (fi_rma(3)), over every transport set of the suite:
// reads and writes of every size into registered memory, vectors and several target
// segments, remote CQ data, inject, raw keys, counters, and every access the target must
// refuse (unknown or closed key, missing right, out of bounds) leaving its memory untouched.
// Two mr_mode flavours: offsets with requested keys (mr_mode 0) and virtual addresses with
// provider keys (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY).
#include "data_path_of.h"
#include "msg_fixture.h"

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include <sys/mman.h>
#include <unistd.h>

namespace ufi::msg_test {
namespace {

class RmaTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *h) override {
        h->caps |= FI_RMA;
        h->domain_attr->mr_mode = mr_mode();
    }
    virtual int mr_mode() const { return 0; }
    bool virt() const { return (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0; }

    // Registers [buf, +len) in the (shared) domain; the MR is closed at teardown.
    fid_mr *reg(void *buf, size_t len, uint64_t access) {
        fid_mr *mr = nullptr;
        EXPECT_EQ(fi_mr_reg(domain_, buf, len, access, 0, next_key_++, 0, &mr, nullptr), 0);
        if (mr != nullptr) mrs_.push_back(mr);
        return mr;
    }
    // The address a peer names `at` of the region starting at `base` with.
    uint64_t addr(const void *base, const void *at) const {
        return virt() ? reinterpret_cast<uint64_t>(at)
                      : static_cast<uint64_t>(static_cast<const uint8_t *>(at) -
                                              static_cast<const uint8_t *>(base));
    }
    void TearDown() override {
        for (fid_mr *mr : mrs_) EXPECT_EQ(fi_close(&mr->fid), 0);
        mrs_.clear();
        MsgTest::TearDown();
    }
    // Waits for A's completion of `context`, a success with `flags`.
    void expect_done(void *context, uint64_t flags) {
        fi_cq_tagged_entry e{};
        const ssize_t rc = wait(a_.cq, e);
        ASSERT_EQ(rc, 1) << (rc == -FI_EAVAIL ? fi_strerror(error(a_.cq).err) : fi_strerror(int(-rc)));
        EXPECT_EQ(e.op_context, context);
        EXPECT_EQ(e.flags, flags);
    }
    // Waits for A's error completion of `context`; its error number.
    int expect_error(void *context) {
        fi_cq_tagged_entry e{};
        EXPECT_EQ(wait(a_.cq, e), -FI_EAVAIL);
        const fi_cq_err_entry err = error(a_.cq);
        EXPECT_EQ(err.op_context, context);
        EXPECT_NE(err.flags & FI_RMA, 0u);
        return err.err;
    }

    // Writes each size into B's region, then reads it back: the bytes, nothing around them,
    // each completion's flags.
    void round_trip_every_size();
    // fi_mr_reg(NULL, UINTPTR_MAX) used by RMA (AddressSpaceRegionFromNull).
    void address_space_region();

    // Opens a third endpoint, C, with each counter bound with its flags (A's endpoint is
    // enabled already, so counters need another); C's name is in c_.name. Its address for B.
    fi_addr_t open_c_with_counters(std::initializer_list<std::pair<fid_cntr *, uint64_t>> counters) {
        fi_av_attr av_attr{};
        EXPECT_EQ(fi_av_open(domain_, &av_attr, &c_.av, nullptr), 0);
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        EXPECT_EQ(fi_cq_open(domain_, &cq_attr, &c_.cq, nullptr), 0);
        EXPECT_EQ(fi_endpoint(domain_, info_, &c_.ep, nullptr), 0);
        EXPECT_EQ(fi_ep_bind(c_.ep, &c_.av->fid, 0), 0);
        EXPECT_EQ(fi_ep_bind(c_.ep, &c_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
        for (const auto &[cntr, flags] : counters) EXPECT_EQ(fi_ep_bind(c_.ep, &cntr->fid, flags), 0);
        EXPECT_EQ(fi_enable(c_.ep), 0);
        size_t len = 0;
        EXPECT_EQ(fi_getname(&c_.ep->fid, nullptr, &len), -FI_ETOOSMALL);
        c_.name.resize(len);
        EXPECT_EQ(fi_getname(&c_.ep->fid, c_.name.data(), &len), 0);
        return insert(c_, b_.name);
    }

    std::vector<fid_mr *> mrs_;
    uint64_t next_key_ = 0x5000;
};

class RmaVirtTest : public RmaTest {
  protected:
    int mr_mode() const override { return FI_MR_VIRT_ADDR | FI_MR_PROV_KEY; }
};

// memcmp for buffers that may be empty (an empty vector's data() may be null).
bool same(const void *a, const void *b, size_t n) {
    return n == 0 || std::memcmp(a, b, n) == 0;
}

const size_t kRmaSizes[] = {0, 1, 8, 100, 4000, 8192, 9000, 65536, 300000, (2 << 20) + 5};

void RmaTest::round_trip_every_size() {
    const size_t max = (2 << 20) + 5;
    std::vector<uint8_t> target(max + 64, 0xEE);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    const uint64_t key = fi_mr_key(mr);
    int ctx = 0;
    for (size_t n : kRmaSizes) {  // growing: the byte after each range was never written
        SCOPED_TRACE("size " + std::to_string(n));
        const auto out = pattern(n, static_cast<uint8_t>(n));
        uint8_t *at = target.data() + 32;
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, out.data(), n, nullptr, a_to_b_,
                                      addr(target.data(), at), key, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_WRITE);
        ASSERT_TRUE(same(at, out.data(), n));
        EXPECT_EQ(target[31], 0xEE) << "nothing before the range";
        EXPECT_EQ(at[n], 0xEE) << "nothing after the range";
        std::vector<uint8_t> back(n + 1, 0x11);
        ASSERT_EQ(retry([&] {
                      return fi_read(a_.ep, back.data(), n, nullptr, a_to_b_,
                                     addr(target.data(), at), key, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_READ);
        ASSERT_TRUE(same(back.data(), out.data(), n));
        EXPECT_EQ(back[n], 0x11) << "the read wrote past its buffer";
    }
}

TEST_F(RmaTest, OffersRmaWithTheNegotiatedMode) {
    EXPECT_EQ(info_->caps & (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE),
              FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
    EXPECT_FALSE(virt());
    EXPECT_GE(info_->tx_attr->rma_iov_limit, 1u);
}

TEST_F(RmaTest, WriteThenReadBackEverySize) {
    round_trip_every_size();
}

TEST_F(RmaVirtTest, WriteThenReadBackEverySizeByVirtualAddress) {
    ASSERT_TRUE(virt());
    round_trip_every_size();
}

TEST_F(RmaTest, VectorsAndSeveralTargetSegments) {
    std::vector<uint8_t> t1(5000, 0), t2(70000, 0);
    fid_mr *m1 = reg(t1.data(), t1.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
    fid_mr *m2 = reg(t2.data(), t2.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_TRUE(m1 && m2);
    // fi_writev: three local buffers into one target range.
    auto p1 = pattern(10, 1), p2 = pattern(9000, 2), p3 = pattern(3, 3);
    iovec iov[3] = {{p1.data(), p1.size()}, {p2.data(), p2.size()}, {p3.data(), p3.size()}};
    int ctx = 0;
    ASSERT_EQ(retry([&] {
                  return fi_writev(a_.ep, iov, nullptr, 3, a_to_b_, addr(t2.data(), t2.data() + 100),
                                   fi_mr_key(m2), &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    EXPECT_EQ(std::memcmp(t2.data() + 100, p1.data(), 10), 0);
    EXPECT_EQ(std::memcmp(t2.data() + 110, p2.data(), 9000), 0);
    EXPECT_EQ(std::memcmp(t2.data() + 9110, p3.data(), 3), 0);
    // fi_writemsg: two local buffers spread over two regions (the split falls elsewhere).
    auto q1 = pattern(3000, 4), q2 = pattern(60000, 5);
    iovec local[2] = {{q1.data(), q1.size()}, {q2.data(), q2.size()}};
    fi_rma_iov remote[2] = {{addr(t1.data(), t1.data() + 7), 4000, fi_mr_key(m1)},
                            {addr(t2.data(), t2.data() + 10000), 59000, fi_mr_key(m2)}};
    fi_msg_rma msg{};
    msg.msg_iov = local;
    msg.iov_count = 2;
    msg.addr = a_to_b_;
    msg.rma_iov = remote;
    msg.rma_iov_count = 2;
    msg.context = &ctx;
    ASSERT_EQ(retry([&] { return fi_writemsg(a_.ep, &msg, FI_COMPLETION); }), 0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    std::vector<uint8_t> all(q1);
    all.insert(all.end(), q2.begin(), q2.end());
    EXPECT_EQ(std::memcmp(t1.data() + 7, all.data(), 4000), 0);
    EXPECT_EQ(std::memcmp(t2.data() + 10000, all.data() + 4000, 59000), 0);
    // fi_readmsg back through the same segments, into three local buffers.
    std::vector<uint8_t> r1(1), r2(50000), r3(12999);
    iovec rl[3] = {{r1.data(), r1.size()}, {r2.data(), r2.size()}, {r3.data(), r3.size()}};
    msg.msg_iov = rl;
    msg.iov_count = 3;
    ASSERT_EQ(retry([&] { return fi_readmsg(a_.ep, &msg, 0); }), 0);
    expect_done(&ctx, FI_RMA | FI_READ);
    std::vector<uint8_t> got(r1);
    got.insert(got.end(), r2.begin(), r2.end());
    got.insert(got.end(), r3.begin(), r3.end());
    EXPECT_EQ(got, all);
    // fi_readv: one target range into two buffers.
    std::vector<uint8_t> v1(6), v2(5);
    iovec rv[2] = {{v1.data(), v1.size()}, {v2.data(), v2.size()}};
    ASSERT_EQ(retry([&] {
                  return fi_readv(a_.ep, rv, nullptr, 2, a_to_b_, addr(t2.data(), t2.data() + 100),
                                  fi_mr_key(m2), &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_READ);
    EXPECT_EQ(std::memcmp(v1.data(), p1.data(), 6), 0);
    EXPECT_EQ(std::memcmp(v2.data(), p1.data() + 6, 4), 0);
    EXPECT_EQ(v2[4], p2[0]);
}

TEST_F(RmaTest, WriteDataReachesTheTargetCq) {
    std::vector<uint8_t> target(64, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    const uint64_t v = 0x1122334455667788ULL;
    int ctx = 0;
    ASSERT_EQ(retry([&] {
                  return fi_writedata(a_.ep, &v, 8, nullptr, 0xfeedULL, a_to_b_,
                                      addr(target.data(), target.data() + 8), fi_mr_key(mr), &ctx);
              }),
              0);
    fi_cq_tagged_entry e{};
    fi_addr_t src = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(wait(b_.cq, e, &src), 1);
    EXPECT_EQ(e.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
    EXPECT_EQ(e.data, 0xfeedULL);
    EXPECT_EQ(e.len, 8u);
    EXPECT_EQ(e.op_context, nullptr);
    EXPECT_EQ(src, b_to_a_);
    EXPECT_EQ(std::memcmp(target.data() + 8, &v, 8), 0) << "the data is in place at the entry";
    expect_done(&ctx, FI_RMA | FI_WRITE);
    // fi_inject_writedata: the entry at the target, none at the initiator.
    ASSERT_EQ(retry([&] {
                  return fi_inject_writedata(a_.ep, &v, 4, 7, a_to_b_,
                                             addr(target.data(), target.data()), fi_mr_key(mr));
              }),
              0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.data, 7u);
    EXPECT_TRUE(quiet(a_.cq));
    // A plain write reports nothing at the target.
    ASSERT_EQ(retry([&] {
                  return fi_write(a_.ep, &v, 8, nullptr, a_to_b_, addr(target.data(), target.data()),
                                  fi_mr_key(mr), &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    EXPECT_TRUE(quiet(b_.cq));
}

TEST_F(RmaTest, InjectWriteCopiesAtTheCall) {
    std::vector<uint8_t> target(256, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    ASSERT_GE(info_->tx_attr->inject_size, 16u);
    uint8_t buf[16];
    std::memset(buf, 0x42, sizeof buf);
    ASSERT_EQ(retry([&] {
                  return fi_inject_write(a_.ep, buf, sizeof buf, a_to_b_,
                                         addr(target.data(), target.data() + 1), fi_mr_key(mr));
              }),
              0);
    std::memset(buf, 0, sizeof buf);  // reused at once
    // Completes without an entry: a read behind it (handled after it) sees the data.
    uint8_t back[16] = {};
    int ctx = 0;
    ASSERT_EQ(retry([&] {
                  return fi_read(a_.ep, back, sizeof back, nullptr, a_to_b_,
                                 addr(target.data(), target.data() + 1), fi_mr_key(mr), &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_READ);
    for (uint8_t b : back) EXPECT_EQ(b, 0x42);
    std::vector<uint8_t> big(info_->tx_attr->inject_size + 1);
    EXPECT_EQ(fi_inject_write(a_.ep, big.data(), big.size(), a_to_b_, 0, fi_mr_key(mr)),
              -FI_EMSGSIZE);
}

TEST_F(RmaTest, RefusedAccessesFailAtTheInitiatorAndLeaveTheTargetAlone) {
    std::vector<uint8_t> ro(4096, 0xA5), wo(4096, 0x5A);
    fid_mr *mro = reg(ro.data(), ro.size(), FI_REMOTE_READ);
    fid_mr *mwo = reg(wo.data(), wo.size(), FI_REMOTE_WRITE);
    ASSERT_TRUE(mro && mwo);
    const auto junk = pattern(4096, 9);
    std::vector<uint8_t> back(4096, 0);
    int ctx = 0;
    auto write = [&](uint64_t a, size_t n, uint64_t key) {
        return retry([&] { return fi_write(a_.ep, junk.data(), n, nullptr, a_to_b_, a, key, &ctx); });
    };
    auto read = [&](uint64_t a, size_t n, uint64_t key) {
        return retry([&] { return fi_read(a_.ep, back.data(), n, nullptr, a_to_b_, a, key, &ctx); });
    };
    // No FI_REMOTE_WRITE: a write is refused (small, and in several fragments).
    for (size_t n : {size_t(8), size_t(4096)}) {
        ASSERT_EQ(write(addr(ro.data(), ro.data()), n, fi_mr_key(mro)), 0);
        EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    }
    // No FI_REMOTE_READ: a read is refused.
    ASSERT_EQ(read(addr(wo.data(), wo.data()), 64, fi_mr_key(mwo)), 0);
    EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    // Beyond the region, by one byte.
    ASSERT_EQ(read(addr(ro.data(), ro.data() + 1), 4096, fi_mr_key(mro)), 0);
    EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    ASSERT_EQ(write(addr(wo.data(), wo.data() + 4000), 97, fi_mr_key(mwo)), 0);
    EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    // A key nobody registered.
    ASSERT_EQ(write(0, 8, 0x7777777ULL), 0);
    EXPECT_EQ(expect_error(&ctx), FI_EKEYREJECTED);
    // A closed region's key.
    std::vector<uint8_t> gone(64, 0x33);
    fid_mr *mg = nullptr;
    ASSERT_EQ(fi_mr_reg(domain_, gone.data(), gone.size(), FI_REMOTE_WRITE | FI_REMOTE_READ, 0,
                        0x9999, 0, &mg, nullptr),
              0);
    const uint64_t gone_key = fi_mr_key(mg);
    ASSERT_EQ(fi_close(&mg->fid), 0);
    ASSERT_EQ(write(addr(gone.data(), gone.data()), 8, gone_key), 0);
    EXPECT_EQ(expect_error(&ctx), FI_EKEYREJECTED);
    // Untouched, and still working.
    for (uint8_t b : ro) ASSERT_EQ(b, 0xA5);
    for (uint8_t b : wo) ASSERT_EQ(b, 0x5A);
    for (uint8_t b : gone) ASSERT_EQ(b, 0x33);
    ASSERT_EQ(read(addr(ro.data(), ro.data()), 4096, fi_mr_key(mro)), 0);
    expect_done(&ctx, FI_RMA | FI_READ);
    EXPECT_EQ(back, ro);
}

// A write from the rendezvous threshold on, over a transport that puts but cannot get (tcp):
// B checks the access, lets A put the bytes into its memory (RTR), and counts the write and
// writes its CQ data once A says they are in place (RMA_WRITE_DONE). A read and a message
// posted right behind it see it, as they would on active messages (A holds them until its
// puts are on their way); a refused one never reaches B's memory; a forged
// RMA_WRITE_DONE is dropped. On the other sets the same calls go their own way (B's gets over
// cma, or fragments), and every check but the grant count holds as well.
TEST_F(RmaTest, LargeWritesOverAPutOnlyTransportArePutByTheInitiator) {
    namespace wire = runtime::proto::wire;
    constexpr size_t kLen = (1 << 20) + 3;
    std::vector<uint8_t> target(kLen + 64, 0xEE), ro(kLen, 0xA5);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    fid_mr *mro = reg(ro.data(), ro.size(), FI_REMOTE_READ);
    ASSERT_TRUE(mr && mro);
    runtime::proto::DataPath *a_dp = data_path(a_.ep);
    runtime::proto::DataPath *b_dp = data_path(b_.ep);
    // Connected first, so that the protocols towards B are chosen.
    uint64_t word = 0;
    int ctx = 0;
    ASSERT_EQ(retry([&] { return fi_read(a_.ep, &word, 8, nullptr, a_to_b_, addr(target.data(), target.data()), fi_mr_key(mr), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_READ);
    ASSERT_EQ(a_dp->peer_count(), 1u);
    const runtime::proto::Peer *to_b = a_dp->peer(0);
    const bool put_by_a = to_b->rndv_protocol == wire::kRndvPut && kLen >= to_b->rma_thresh;
    const uint64_t grants = b_dp->stats().rma_put_grants;

    const auto out = pattern(kLen, 3);
    uint8_t *at = target.data() + 32;
    ASSERT_EQ(retry([&] {
                  return fi_writedata(a_.ep, out.data(), kLen, nullptr, 0xda7a, a_to_b_,
                                      addr(target.data(), at), fi_mr_key(mr), &ctx);
              }),
              0);
    // Right behind it, before anything completed: a read of its last bytes and a message.
    std::vector<uint8_t> back(4096, 0);
    int read_ctx = 0;
    ASSERT_EQ(fi_read(a_.ep, back.data(), back.size(), nullptr, a_to_b_,
                      addr(target.data(), at + kLen - back.size()), fi_mr_key(mr), &read_ctx),
              0);
    uint64_t in = 0, note = 0x5e7d;
    ASSERT_EQ(fi_trecv(b_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 0x77, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &note, 8, nullptr, a_to_b_, 0x77, nullptr); }), 0);
    bool wrote = false, read = false, sent = false;
    while (!(wrote && read && sent)) {
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(a_.cq, e), 1);
        if (e.op_context == &ctx) wrote = true;
        else if (e.op_context == &read_ctx) read = true;
        else if (e.op_context == nullptr && (e.flags & FI_SEND)) sent = true;
    }
    ASSERT_TRUE(same(at, out.data(), kLen));
    EXPECT_EQ(target[31], 0xEE) << "nothing before the range";
    EXPECT_EQ(at[kLen], 0xEE) << "nothing after the range";
    // (B's gets of a write it reads over cma run from its progress: there a read behind the
    // write may be answered first, unless the endpoint asked for ordering; docs/rma.md.)
    if (to_b->rndv_protocol != wire::kRndvGet || kLen < to_b->rma_thresh) {
        EXPECT_TRUE(same(back.data(), out.data() + kLen - back.size(), back.size()))
            << "the read behind the write did not see it";
    }
    // B: the write's CQ data (the data in place by then), and the message behind it.
    bool data_seen = false, msg_seen = false;
    while (!(data_seen && msg_seen)) {
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(b_.cq, e), 1);
        if (e.flags & FI_REMOTE_CQ_DATA) {
            EXPECT_EQ(e.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
            EXPECT_EQ(e.data, 0xda7au);
            EXPECT_EQ(e.len, kLen);
            data_seen = true;
        } else {
            EXPECT_EQ(in, note);
            msg_seen = true;
        }
    }
    EXPECT_EQ(b_dp->stats().rma_put_grants, grants + (put_by_a ? 1u : 0u));

    // Refused: no FI_REMOTE_WRITE. Nothing granted, nothing written.
    ASSERT_EQ(retry([&] {
                  return fi_write(a_.ep, out.data(), kLen, nullptr, a_to_b_,
                                  addr(ro.data(), ro.data()), fi_mr_key(mro), &ctx);
              }),
              0);
    EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    for (uint8_t b : ro) ASSERT_EQ(b, 0xA5);
    EXPECT_EQ(b_dp->stats().rma_put_grants, grants + (put_by_a ? 1u : 0u));

    // A forged RMA_WRITE_DONE (no write of A's is granted now) changes nothing.
    const uint64_t dropped = b_dp->stats().dropped_malformed;
    for (uint64_t id : {uint64_t{1}, uint64_t{2}, uint64_t{1000}}) {
        const wire::AckHdr done{0, 0, id};
        std::vector<uint8_t> m(sizeof done);
        std::memcpy(m.data(), &done, sizeof done);
        EXPECT_TRUE(b_dp->deliver_for_test(wire::kAmRmaWriteDone, m.data(), m.size()));
    }
    EXPECT_EQ(b_dp->stats().dropped_malformed, dropped + 3);
    EXPECT_TRUE(quiet(b_.cq));
    EXPECT_TRUE(quiet(a_.cq));
}

// From the peer's zero-copy threshold on, where a zero-copy transport joins the two (cma, tcp
// for reads and put writes), a write and a read go as one request each that the target serves
// zero copy (RmaZcopyProtocol::choose decides once, before sending); below it, by active messages.
TEST_F(RmaTest, LargeAccessesGoZeroCopyWhereATransportJoinsThePeers) {
    constexpr size_t kLen = (1 << 20) + 3;
    std::vector<uint8_t> target(kLen, 0xEE);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    runtime::proto::DataPath *a_dp = data_path(a_.ep);
    uint64_t word = 0;
    int ctx = 0;
    ASSERT_EQ(retry([&] { return fi_read(a_.ep, &word, 8, nullptr, a_to_b_, addr(target.data(), target.data()), fi_mr_key(mr), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_READ);
    ASSERT_EQ(a_dp->peer_count(), 1u);
    const runtime::proto::Peer *to_b = a_dp->peer(0);
    const auto goes_zcopy = [&](size_t n) { return to_b->rma_iface != SIZE_MAX && n >= to_b->rma_thresh; };
    const bool zcopy = goes_zcopy(kLen);
    const uint64_t before = a_dp->stats().rma_zcopy;
    EXPECT_EQ(before, goes_zcopy(8) ? 1u : 0u) << "threshold " << to_b->rma_thresh;

    const auto out = pattern(kLen, 9);
    ASSERT_EQ(retry([&] { return fi_write(a_.ep, out.data(), kLen, nullptr, a_to_b_, addr(target.data(), target.data()), fi_mr_key(mr), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    ASSERT_TRUE(same(target.data(), out.data(), kLen));
    std::vector<uint8_t> back(kLen, 0);
    ASSERT_EQ(retry([&] { return fi_read(a_.ep, back.data(), kLen, nullptr, a_to_b_, addr(target.data(), target.data()), fi_mr_key(mr), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_READ);
    ASSERT_TRUE(same(back.data(), out.data(), kLen));
    EXPECT_EQ(a_dp->stats().rma_zcopy, before + (zcopy ? 2u : 0u))
        << "zero-copy transport to the peer: " << (to_b->rma_iface != SIZE_MAX)
        << ", threshold " << to_b->rma_thresh;
}

// An injected write lands without its initiator's progress, whatever its size up to the inject
// size (fi_inject_write has no completion the application waits for): it goes by active
// messages even above the zero-copy threshold (1 byte in the *_rndv sets), where a write put
// over tcp would wait for the initiator to see the target's grant.
TEST_F(RmaTest, InjectedWritesLandWithoutTheInitiatorsProgress) {
    const size_t n = std::min<size_t>(info_->tx_attr->inject_size, 1000);
    ASSERT_GT(n, 8u);
    std::vector<uint8_t> target(n, 0xEE);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    uint64_t word = 0;
    int ctx = 0;
    ASSERT_EQ(retry([&] { return fi_read(a_.ep, &word, 8, nullptr, a_to_b_, addr(target.data(), target.data()), fi_mr_key(mr), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_READ);  // connected (the handshake needs both sides)
    std::vector<uint8_t> out = pattern(n, 11);
    ASSERT_EQ(retry([&] { return fi_inject_write(a_.ep, out.data(), n, a_to_b_, addr(target.data(), target.data()), fi_mr_key(mr)); }), 0);
    std::fill(out.begin(), out.end(), 0);  // the caller's again at once
    // Only B progresses from here on.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    const std::vector<uint8_t> want = pattern(n, 11);
    fi_cq_tagged_entry none;
    while (target != want && std::chrono::steady_clock::now() < deadline) {
        (void)fi_cq_read(b_.cq, &none, 0);
    }
    EXPECT_TRUE(target == want) << "the injected write waits for its initiator";
    EXPECT_TRUE(quiet(a_.cq)) << "fi_inject_write writes no completion";
}

TEST_F(RmaTest, CallsCheckTheirArguments) {
    std::vector<uint8_t> target(64, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    uint8_t buf[8] = {};
    iovec local{buf, sizeof buf};
    fi_rma_iov remote{0, 4, fi_mr_key(mr)};  // 4 remote bytes for 8 local ones
    fi_msg_rma msg{};
    msg.msg_iov = &local;
    msg.iov_count = 1;
    msg.addr = a_to_b_;
    msg.rma_iov = &remote;
    msg.rma_iov_count = 1;
    EXPECT_EQ(fi_writemsg(a_.ep, &msg, 0), -FI_EINVAL);
    EXPECT_EQ(fi_readmsg(a_.ep, &msg, 0), -FI_EINVAL);
    msg.rma_iov_count = 0;
    EXPECT_EQ(fi_writemsg(a_.ep, &msg, 0), -FI_EINVAL);
    EXPECT_EQ(fi_writemsg(a_.ep, nullptr, 0), -FI_EINVAL);
    remote.len = 8;
    msg.rma_iov_count = 1;
    EXPECT_EQ(fi_readmsg(a_.ep, &msg, FI_REMOTE_CQ_DATA), -FI_EBADFLAGS);
    EXPECT_EQ(fi_readmsg(a_.ep, &msg, FI_INJECT), -FI_EBADFLAGS);
    EXPECT_EQ(fi_writemsg(a_.ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
    EXPECT_EQ(fi_write(a_.ep, nullptr, 8, nullptr, a_to_b_, 0, fi_mr_key(mr), nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_write(a_.ep, buf, 8, nullptr, 12345, 0, fi_mr_key(mr), nullptr), -FI_EINVAL)
        << "no such AV entry";
    // A key with the top bit that this domain has not mapped is the peer's own key (requested
    // keys may have the top bit): it goes out, and the target, which has no such key, refuses.
    int ctx = 0;
    ASSERT_EQ(retry([&] {
                  return fi_read(a_.ep, buf, 8, nullptr, a_to_b_, 0, (1ULL << 63) | 5, &ctx);
              }),
              0);
    EXPECT_NE(expect_error(&ctx), 0);
}

// Requested keys with the top bit set (MPICH's window keys are `context_id | 1 << 63`) work for
// writes, reads and atomics, also while the initiator's domain has raw keys mapped (whose
// handles have the top bit too).
TEST_F(RmaTest, KeysWithTheTopBitSet) {
    std::vector<uint8_t> target(256, 0), other(64, 0);
    fid_mr *mr = nullptr, *mo = nullptr;
    const uint64_t key = (uint64_t{1} << 63) | 3;
    ASSERT_EQ(fi_mr_reg(domain_, target.data(), target.size(), FI_REMOTE_READ | FI_REMOTE_WRITE,
                        0, key, 0, &mr, nullptr),
              0);
    mrs_.push_back(mr);
    EXPECT_EQ(fi_mr_key(mr), key);
    ASSERT_EQ(fi_mr_reg(domain_, other.data(), other.size(), FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                        UINT64_MAX - 1, 0, &mo, nullptr),
              0)
        << "the largest key";
    mrs_.push_back(mo);
    for (bool with_mapping : {false, true}) {
        SCOPED_TRACE(with_mapping ? "a raw key mapped" : "nothing mapped");
        uint64_t mapped = 0;
        if (with_mapping) {  // a mapped handle of another region, live during the accesses
            uint64_t base = 0;
            size_t size = 0;
            ASSERT_EQ(fi_mr_raw_attr(mo, &base, nullptr, &size, 0), -FI_ETOOSMALL);
            std::vector<uint8_t> raw(size);
            ASSERT_EQ(fi_mr_raw_attr(mo, &base, raw.data(), &size, 0), 0);
            ASSERT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, &mapped, 0), 0);
            EXPECT_NE(mapped, key);
        }
        const auto out = pattern(100, with_mapping ? 7 : 8);
        int ctx = 0;
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, out.data(), out.size(), nullptr, a_to_b_,
                                      addr(target.data(), target.data() + 8), key, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_WRITE);
        EXPECT_TRUE(same(target.data() + 8, out.data(), out.size()));
        std::vector<uint8_t> back(out.size());
        ASSERT_EQ(retry([&] {
                      return fi_read(a_.ep, back.data(), back.size(), nullptr, a_to_b_,
                                     addr(target.data(), target.data() + 8), key, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_READ);
        EXPECT_EQ(back, out);
        const uint64_t v = 0xabcdef;
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, &v, sizeof v, nullptr, a_to_b_,
                                      addr(other.data(), other.data()), UINT64_MAX - 1, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_WRITE);
        EXPECT_EQ(std::memcmp(other.data(), &v, sizeof v), 0);
        if (with_mapping) {
            EXPECT_EQ(fi_mr_unmap_key(domain_, mapped), 0);
        }
    }
}

// fi_mr_reg(NULL, UINTPTR_MAX): the whole address space, as MPICH registers a dynamic window
// (docs/memory-keys.md). Peers address it by virtual address (an offset from 0 is one) under
// either addressing; every size reaches heap memory by every protocol (active messages, zero
// copy, the put grant); a range the target does not map, or not for that access, fails with
// FI_EFAULT and leaves the target running and its memory untouched.
void RmaTest::address_space_region() {
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(domain_, nullptr, UINTPTR_MAX, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                        next_key_++, 0, &mr, nullptr),
              0);
    mrs_.push_back(mr);
    const uint64_t key = fi_mr_key(mr);
    auto at = [](const void *p) { return reinterpret_cast<uint64_t>(p); };
    std::vector<uint8_t> heap((2 << 20) + 64, 0xEE);
    int ctx = 0;
    for (size_t n : kRmaSizes) {
        SCOPED_TRACE("size " + std::to_string(n));
        const auto out = pattern(n, static_cast<uint8_t>(n + 1));
        uint8_t *dst = heap.data() + 16;
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, out.data(), n, nullptr, a_to_b_, at(dst), key, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_WRITE);
        ASSERT_TRUE(same(dst, out.data(), n));
        EXPECT_EQ(dst[n], 0xEE) << "nothing after the range (the sizes grow)";
        std::vector<uint8_t> back(n + 1, 0x11);
        ASSERT_EQ(retry([&] {
                      return fi_read(a_.ep, back.data(), n, nullptr, a_to_b_, at(dst), key, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_READ);
        ASSERT_TRUE(same(back.data(), out.data(), n));
        EXPECT_EQ(back[n], 0x11);
    }
    EXPECT_EQ(heap[15], 0xEE) << "nothing before the range";

    // Pages the target does not map, maps read-only, or maps with no access. (Every buffer
    // is mapped before the hole is made: the next mapping could land in it.)
    const auto junk = pattern(300000, 3);
    std::vector<uint8_t> back(300000, 0);
    const size_t page = static_cast<size_t>(getpagesize());
    auto *ro = static_cast<uint8_t *>(
        mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(ro, MAP_FAILED);
    std::memset(ro, 0xA7, page);
    ASSERT_EQ(mprotect(ro, page, PROT_READ), 0);
    auto *none = static_cast<uint8_t *>(
        mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(none, MAP_FAILED);
    auto *gone = static_cast<uint8_t *>(
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(gone, MAP_FAILED);
    std::memset(gone, 0x5C, page);
    ASSERT_EQ(munmap(gone + page, page), 0);  // the first page stays, the second is a hole
    struct Case {
        const char *what;
        uint64_t where;
        size_t len;
        bool write;
    };
    const Case refused[] = {
        {"a write into the hole", at(gone + page), 8, true},
        {"a read of the hole", at(gone + page), 8, false},
        {"a write across the page and the hole", at(gone + page - 8), 16, true},
        {"a large write across the page and the hole", at(gone + page - 100), 300000, true},
        {"a large read across the page and the hole", at(gone + page - 100), 300000, false},
        {"a write into a read-only page", at(ro), 8, true},
        {"a large write into a read-only page", at(ro), page, true},
        {"a read of a page without access", at(none), 8, false},
        {"a write to address 0", 0, 8, true},
    };
    for (const Case &c : refused) {
        SCOPED_TRACE(c.what);
        ASSERT_NE(msync(gone + page, page, MS_ASYNC), 0) << "the hole is still a hole";
        ASSERT_EQ(retry([&] {
                      return c.write ? fi_write(a_.ep, junk.data(), c.len, nullptr, a_to_b_,
                                                c.where, key, &ctx)
                                     : fi_read(a_.ep, back.data(), c.len, nullptr, a_to_b_,
                                               c.where, key, &ctx);
                  }),
                  0);
        EXPECT_EQ(expect_error(&ctx), FI_EFAULT);
    }
    for (size_t i = 0; i < page; ++i) ASSERT_EQ(gone[i], 0x5C) << "the mapped page, untouched";
    for (size_t i = 0; i < page; ++i) ASSERT_EQ(ro[i], 0xA7) << "the read-only page, untouched";
    // The read-only page reads.
    ASSERT_EQ(retry([&] {
                  return fi_read(a_.ep, back.data(), 64, nullptr, a_to_b_, at(ro + 8), key, &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_READ);
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(back[i], 0xA7);
    EXPECT_EQ(munmap(gone, page), 0);
    EXPECT_EQ(munmap(ro, page), 0);
    EXPECT_EQ(munmap(none, page), 0);
}

TEST_F(RmaTest, AddressSpaceRegionFromNull) { address_space_region(); }
TEST_F(RmaVirtTest, AddressSpaceRegionFromNull) { address_space_region(); }

// Lengths whose sums wrap are refused at the call, before anything is sent: local iov lists
// (fi_writev / fi_readv / fi_writemsg), target ranges (rma_iov lengths that add up past
// 2^64, a range past the end of the address space). The target's memory stays as it was.
TEST_F(RmaTest, LengthsThatOverflowAreRefusedAtTheCall) {
    std::vector<uint8_t> target(64, 0xEE);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    const uint64_t key = fi_mr_key(mr);
    const uint64_t at = addr(target.data(), target.data());
    std::vector<uint8_t> a(64, 0x11), b(16, 0x22);
    iovec wrap[2] = {{a.data(), SIZE_MAX - 5}, {b.data(), 16}};
    int ctx = 0;
    EXPECT_EQ(fi_writev(a_.ep, wrap, nullptr, 2, a_to_b_, at, key, &ctx), -FI_EINVAL);
    EXPECT_EQ(fi_readv(a_.ep, wrap, nullptr, 2, a_to_b_, at, key, &ctx), -FI_EINVAL);
    fi_rma_iov remote[2] = {{at, 10, key}, {at, 0, key}};
    fi_msg_rma msg{};
    msg.msg_iov = wrap;
    msg.iov_count = 2;
    msg.addr = a_to_b_;
    msg.rma_iov = remote;
    msg.rma_iov_count = 1;
    msg.context = &ctx;
    EXPECT_EQ(fi_writemsg(a_.ep, &msg, 0), -FI_EINVAL) << "local lengths wrap";
    EXPECT_EQ(fi_readmsg(a_.ep, &msg, 0), -FI_EINVAL) << "local lengths wrap";
    // Ten local bytes; remote lengths {UINT64_MAX - 5, 16} also "sum" to 10.
    iovec ten{a.data(), 10};
    msg.msg_iov = &ten;
    msg.iov_count = 1;
    remote[0] = {at, UINT64_MAX - 5, key};
    remote[1] = {at, 16, key};
    msg.rma_iov_count = 2;
    EXPECT_EQ(fi_writemsg(a_.ep, &msg, 0), -FI_EINVAL) << "remote lengths wrap";
    EXPECT_EQ(fi_readmsg(a_.ep, &msg, 0), -FI_EINVAL) << "remote lengths wrap";
    // One range from the last bytes of the address space on.
    remote[0] = {UINT64_MAX - 4, 10, key};
    msg.rma_iov_count = 1;
    EXPECT_EQ(fi_writemsg(a_.ep, &msg, 0), -FI_EINVAL) << "range wraps the address space";
    EXPECT_EQ(fi_writev(a_.ep, &ten, nullptr, 1, a_to_b_, UINT64_MAX - 4, key, &ctx), -FI_EINVAL);
    EXPECT_TRUE(quiet(a_.cq));
    for (uint8_t v : target) EXPECT_EQ(v, 0xEE);
}

// FI_INJECT on fi_writemsg frees the buffer at once but still writes a completion (only
// fi_inject_write writes none), also for the short writes that go without a request record.
TEST_F(RmaTest, InjectFlagOnWritemsgStillCompletes) {
    std::vector<uint8_t> target(64, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    uint64_t v = 0x0102030405060708;
    iovec local{&v, sizeof v};
    fi_rma_iov remote{addr(target.data(), target.data() + 8), sizeof v, fi_mr_key(mr)};
    fi_msg_rma msg{};
    msg.msg_iov = &local;
    msg.iov_count = 1;
    msg.addr = a_to_b_;
    msg.rma_iov = &remote;
    msg.rma_iov_count = 1;
    int ctx = 0;
    msg.context = &ctx;
    ASSERT_EQ(retry([&] { return fi_writemsg(a_.ep, &msg, FI_INJECT); }), 0);
    v = 0;  // reusable at once
    expect_done(&ctx, FI_RMA | FI_WRITE);
    EXPECT_EQ(std::memcmp(target.data() + 8, "\x08\x07\x06\x05\x04\x03\x02\x01", 8), 0);
    // With FI_INJECT_COMPLETE too, and a larger buffer (a request record).
    std::vector<uint8_t> more(48, 0x3C);
    local = {more.data(), more.size()};
    remote = {addr(target.data(), target.data() + 16), more.size(), fi_mr_key(mr)};
    ASSERT_EQ(retry([&] { return fi_writemsg(a_.ep, &msg, FI_INJECT | FI_INJECT_COMPLETE); }), 0);
    std::fill(more.begin(), more.end(), 0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    for (size_t i = 16; i < 64; ++i) EXPECT_EQ(target[i], 0x3C) << i;
    // fi_inject_write: none.
    ASSERT_EQ(retry([&] {
                  return fi_inject_write(a_.ep, &v, sizeof v, a_to_b_,
                                         addr(target.data(), target.data()), fi_mr_key(mr));
              }),
              0);
    EXPECT_TRUE(quiet(a_.cq));
}

// fi_readmsg with FI_DELIVERY_COMPLETE (MPICH's MPI_Rget) or FI_TRANSMIT_COMPLETE: a read is
// complete when its data is in the local buffer, which both levels ask.
TEST_F(RmaTest, ReadmsgTakesDeliveryAndTransmitComplete) {
    const auto src = pattern(3000, 21);
    std::vector<uint8_t> target(src);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    for (uint64_t level : {FI_DELIVERY_COMPLETE, FI_TRANSMIT_COMPLETE}) {
        std::vector<uint8_t> back(src.size(), 0);
        iovec local{back.data(), back.size()};
        fi_rma_iov remote{addr(target.data(), target.data()), back.size(), fi_mr_key(mr)};
        fi_msg_rma msg{};
        msg.msg_iov = &local;
        msg.iov_count = 1;
        msg.addr = a_to_b_;
        msg.rma_iov = &remote;
        msg.rma_iov_count = 1;
        int ctx = 0;
        msg.context = &ctx;
        ASSERT_EQ(retry([&] { return fi_readmsg(a_.ep, &msg, level | FI_COMPLETION); }), 0);
        expect_done(&ctx, FI_RMA | FI_READ);
        EXPECT_EQ(back, src);
    }
}

TEST_F(RmaTest, RawKeyMappedByThePeer) {
    std::vector<uint8_t> target(1024, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    uint64_t base = 0;
    size_t size = 0;
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, nullptr, &size, 0), -FI_ETOOSMALL);
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    uint64_t mapped = 0;
    ASSERT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, &mapped, 0), 0);
    const auto out = pattern(500, 77);
    int ctx = 0;
    ASSERT_EQ(retry([&] {
                  return fi_write(a_.ep, out.data(), out.size(), nullptr, a_to_b_,
                                  addr(target.data(), target.data() + 3), mapped, &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    EXPECT_EQ(std::memcmp(target.data() + 3, out.data(), out.size()), 0);
    EXPECT_EQ(fi_mr_unmap_key(domain_, mapped), 0);
}

TEST_F(RmaTest, CountersCountReadsWritesAndErrors) {
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr *reads = nullptr, *writes = nullptr;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &reads, nullptr), 0);
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &writes, nullptr), 0);
    const fi_addr_t c_to_b = open_c_with_counters({{reads, FI_READ}, {writes, FI_WRITE}});
    ASSERT_FALSE(HasFailure());
    std::vector<uint8_t> target(128, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    uint64_t v = 5;
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(retry([&] {
                      return fi_inject_write(c_.ep, &v, 8, c_to_b, addr(target.data(), target.data()),
                                             fi_mr_key(mr));
                  }),
                  0);
    }
    ASSERT_EQ(retry([&] {
                  return fi_read(c_.ep, &v, 8, nullptr, c_to_b, addr(target.data(), target.data()),
                                 fi_mr_key(mr), nullptr);
              }),
              0);  // no FI_REMOTE_READ: an error
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while ((fi_cntr_read(writes) < 3 || fi_cntr_readerr(reads) < 1) &&
           std::chrono::steady_clock::now() < deadline) {
        progress_all();
        (void)fi_cntr_read(reads);
    }
    EXPECT_EQ(fi_cntr_read(writes), 3u);
    EXPECT_EQ(fi_cntr_readerr(writes), 0u);
    EXPECT_EQ(fi_cntr_read(reads), 0u);
    EXPECT_EQ(fi_cntr_readerr(reads), 1u);
    fi_cq_tagged_entry e{};
    EXPECT_EQ(wait(c_.cq, e), -FI_EAVAIL);
    EXPECT_EQ(error(c_.cq).err, FI_EACCES);
    close_side(c_);
    EXPECT_EQ(fi_close(&reads->fid), 0);
    EXPECT_EQ(fi_close(&writes->fid), 0);
}

// Injected writes small enough for one short message go with no request record (the
// initiator counts them per peer; the target's acknowledgement finishes them by count): a
// burst of them lands and is counted, a fenced read waits for their acknowledgements, a
// refused one gives an error entry without a context, and forged acknowledgements or
// inconsistent short writes are dropped without touching the counts.
TEST_F(RmaTest, InjectedShortWritesFinishByTheirAcknowledgements) {
    namespace wire = runtime::proto::wire;
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr *reads = nullptr, *writes = nullptr;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &reads, nullptr), 0);
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &writes, nullptr), 0);
    const fi_addr_t c_to_b = open_c_with_counters({{reads, FI_READ}, {writes, FI_WRITE}});
    ASSERT_FALSE(HasFailure());
    runtime::proto::DataPath *dp = runtime::ep::endpoint_of(&c_.ep->fid)->data_path();
    ASSERT_NE(dp, nullptr);
    const size_t tx_left = dp->tx_left();

    constexpr size_t kWrites = 16;
    std::vector<uint64_t> target(kWrites, 0), readonly(4, 0xAB);
    fid_mr *mr = reg(target.data(), target.size() * 8, FI_REMOTE_READ | FI_REMOTE_WRITE);
    fid_mr *ro = reg(readonly.data(), readonly.size() * 8, FI_REMOTE_READ);
    ASSERT_TRUE(mr && ro);
    const uint64_t base = addr(target.data(), target.data());
    // Connected first (a first write waits for the handshake in the queue, with a record).
    uint64_t word = 0;
    int ctx = 0;
    ASSERT_EQ(retry([&] { return fi_read(c_.ep, &word, 8, nullptr, c_to_b, base, fi_mr_key(mr), &ctx); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(c_.cq, e), 1);
    ASSERT_EQ(dp->peer_count(), 1u);
    const runtime::proto::Peer *peer = dp->peer(0);
    ASSERT_EQ(peer->state, runtime::proto::PeerState::kConnected);

    // B does not progress meanwhile: every write waits for its acknowledgement, unrecorded
    // (unless UFI_RNDV_THRESH puts even 8 bytes above the zero-copy threshold: then with a
    // record, still by active messages: an injected write never goes zero copy, whose put over
    // tcp would wait for B's grant; InjectedWritesLandWithoutTheInitiatorsProgress).
    const bool unrecorded = 8 < peer->rma_thresh;
    for (size_t i = 0; i < kWrites; ++i) {
        const uint64_t v = 1000 + i;
        ASSERT_EQ(fi_inject_write(c_.ep, &v, 8, c_to_b, base + i * 8, fi_mr_key(mr)), 0);
    }
    EXPECT_EQ(peer->untracked_writes, unrecorded ? kWrites : 0u);
    EXPECT_EQ(peer->handed_off, kWrites);
    EXPECT_EQ(peer->put_writes_held, 0u);
    EXPECT_EQ(dp->tx_left(), tx_left - kWrites);
    EXPECT_TRUE(peer->queue.empty()) << "every write went at its call";
    // A fenced read waits behind them (queued until they are acknowledged).
    std::vector<uint64_t> back(kWrites, 0);
    iovec local{back.data(), back.size() * 8};
    fi_rma_iov remote{base, back.size() * 8, fi_mr_key(mr)};
    fi_msg_rma msg{};
    msg.msg_iov = &local;
    msg.iov_count = 1;
    msg.addr = c_to_b;
    msg.rma_iov = &remote;
    msg.rma_iov_count = 1;
    msg.context = &ctx;
    ASSERT_EQ(fi_readmsg(c_.ep, &msg, FI_FENCE | FI_COMPLETION), 0);
    EXPECT_FALSE(peer->queue.empty()) << "the fenced read went before the writes were acknowledged";
    ASSERT_EQ(wait(c_.cq, e), 1);
    EXPECT_EQ(e.op_context, &ctx);
    for (size_t i = 0; i < kWrites; ++i) {
        EXPECT_EQ(target[i], 1000 + i);
        EXPECT_EQ(back[i], 1000 + i);
    }
    EXPECT_EQ(fi_cntr_read(writes), kWrites);
    EXPECT_EQ(peer->untracked_writes, 0u);
    EXPECT_EQ(peer->handed_off, 0u);
    EXPECT_EQ(dp->tx_left(), tx_left);

    // Refused (no FI_REMOTE_WRITE; an unknown key): error entries with no context, the
    // write's length, and the counter's errors.
    const uint32_t v4 = 7;
    ASSERT_EQ(fi_inject_write(c_.ep, &v4, 4, c_to_b, addr(readonly.data(), readonly.data()), fi_mr_key(ro)), 0);
    ASSERT_EQ(fi_inject_write(c_.ep, &v4, 4, c_to_b, 0, 0x7777777ULL), 0);
    for (int expected : {FI_EACCES, FI_EKEYREJECTED}) {
        ASSERT_EQ(wait(c_.cq, e), -FI_EAVAIL);
        const fi_cq_err_entry err = error(c_.cq);
        EXPECT_EQ(err.err, expected);
        EXPECT_EQ(err.op_context, nullptr);
        EXPECT_EQ(err.flags, uint64_t{FI_RMA | FI_WRITE});
        EXPECT_EQ(err.len, 4u);
    }
    EXPECT_EQ(fi_cntr_readerr(writes), 2u);
    EXPECT_EQ(fi_cntr_read(writes), kWrites);
    for (uint64_t w : readonly) EXPECT_EQ(w, 0xABu);

    // Forged: an acknowledgement of an unrecorded write when none waits, and a short write
    // whose unrecorded id names another length than it carries.
    const uint64_t dropped = dp->stats().dropped_malformed;
    const wire::AckHdr ack{0, 0, wire::kRmaUntracked | 8};
    std::vector<uint8_t> m(sizeof ack);
    std::memcpy(m.data(), &ack, sizeof ack);
    EXPECT_TRUE(dp->deliver_for_test(wire::kAmRmaAck, m.data(), m.size()));
    const wire::RmaShortHdr h{0, 0, wire::kRmaUntracked | 7, fi_mr_key(mr), base};
    const uint64_t forged = 0xBAD;
    m.resize(sizeof h + sizeof forged);
    std::memcpy(m.data(), &h, sizeof h);
    std::memcpy(m.data() + sizeof h, &forged, sizeof forged);
    EXPECT_TRUE(dp->deliver_for_test(wire::kAmRmaWriteShort, m.data(), m.size()));
    EXPECT_EQ(dp->stats().dropped_malformed, dropped + 2);
    EXPECT_EQ(peer->untracked_writes, 0u);
    EXPECT_EQ(dp->tx_left(), tx_left);
    EXPECT_EQ(fi_cntr_read(writes), kWrites);
    EXPECT_EQ(target[0], 1000u);

    close_side(c_);
    EXPECT_EQ(fi_close(&reads->fid), 0);
    EXPECT_EQ(fi_close(&writes->fid), 0);
}

// A region registered from two buffers (fi_mr_regv, offsets): writes that cross from one
// buffer into the next land in both, by the short path and by fragments; a single-use key
// serves the first such write whole and refuses the next (the target checks one range
// first, then walks the buffers without using the key up twice).
TEST_F(RmaTest, WritesAcrossTheBuffersOfARegionFromSeveral) {
    std::vector<uint8_t> first(16, 0), second(16, 0);
    const iovec parts[2] = {{first.data(), first.size()}, {second.data(), second.size()}};
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_regv(domain_, parts, 2, FI_REMOTE_WRITE | FI_REMOTE_READ, 0, next_key_++, 0,
                         &mr, nullptr),
              0);
    mrs_.push_back(mr);
    const uint8_t out[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_EQ(retry([&] { return fi_inject_write(a_.ep, out, 8, a_to_b_, 12, fi_mr_key(mr)); }), 0);
    int ctx = 0;
    const uint8_t more[8] = {9, 10, 11, 12, 13, 14, 15, 16};
    ASSERT_EQ(retry([&] { return fi_write(a_.ep, more, 8, nullptr, a_to_b_, 16 + 8, fi_mr_key(mr), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_WRITE);  // (after the inject: handled in order)
    const uint8_t want_first[4] = {1, 2, 3, 4}, want_second[4] = {5, 6, 7, 8};
    EXPECT_EQ(std::memcmp(first.data() + 12, want_first, 4), 0);
    EXPECT_EQ(std::memcmp(second.data(), want_second, 4), 0);
    EXPECT_EQ(std::memcmp(second.data() + 8, more, 8), 0);
    uint8_t back[32] = {};
    ASSERT_EQ(retry([&] { return fi_read(a_.ep, back, 32, nullptr, a_to_b_, 0, fi_mr_key(mr), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_READ);
    EXPECT_EQ(std::memcmp(back, first.data(), 16), 0);
    EXPECT_EQ(std::memcmp(back + 16, second.data(), 16), 0);

    std::vector<uint8_t> a(8, 0), b(8, 0);
    const iovec once_parts[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
    fid_mr *once = nullptr;
    ASSERT_EQ(fi_mr_regv(domain_, once_parts, 2, FI_REMOTE_WRITE, 0, next_key_++,
                         FI_MR_SINGLE_USE, &once, nullptr),
              0);
    mrs_.push_back(once);
    ASSERT_EQ(retry([&] { return fi_write(a_.ep, out, 8, nullptr, a_to_b_, 4, fi_mr_key(once), &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    EXPECT_EQ(std::memcmp(a.data() + 4, out, 4), 0);
    EXPECT_EQ(std::memcmp(b.data(), out + 4, 4), 0);
    ASSERT_EQ(retry([&] { return fi_write(a_.ep, more, 8, nullptr, a_to_b_, 4, fi_mr_key(once), &ctx); }), 0);
    EXPECT_EQ(expect_error(&ctx), FI_EKEYREJECTED);
    EXPECT_EQ(std::memcmp(a.data() + 4, out, 4), 0) << "a used-up key changed nothing";
}

// A counter bound to an MR that peers already wrote counts the writes after the binding, by
// active messages and by zero copy alike (the target looks MRs' counters up only once some MR
// of the domain has one: the first binding must switch that on).
TEST_F(RmaTest, CounterBoundToAnMrInUseCountsTheWritesAfterIt) {
    std::vector<uint8_t> target(400000, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ);
    ASSERT_NE(mr, nullptr);
    const uint64_t key = fi_mr_key(mr);
    const auto out = pattern(300000, 5);
    int ctx = 0;
    const auto write_each_size = [&](uint8_t salt) {
        for (size_t n : {size_t(8), out.size()}) {
            SCOPED_TRACE("size " + std::to_string(n));
            std::vector<uint8_t> data = pattern(n, salt);
            ASSERT_EQ(retry([&] {
                          return fi_write(a_.ep, data.data(), n, nullptr, a_to_b_,
                                          addr(target.data(), target.data()), key, &ctx);
                      }),
                      0);
            expect_done(&ctx, FI_RMA | FI_WRITE);
            ASSERT_TRUE(same(target.data(), data.data(), n));
        }
    };
    // A write the initiator put itself (tcp) completes when its puts did; the target counts
    // it when its progress handles RMA_WRITE_DONE, which comes before anything the initiator
    // sends after the completion (the other writes are acknowledged after the target counted
    // them). So a message from A, received by B, settles the writes before it.
    const auto settle = [&] {
        uint64_t in = 0, note = 1;
        ASSERT_EQ(fi_trecv(b_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 0x5e, 0, nullptr), 0);
        ASSERT_EQ(retry([&] { return fi_tinject(a_.ep, &note, 8, a_to_b_, 0x5e); }), 0);
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(b_.cq, e), 1);
        ASSERT_EQ(e.tag, 0x5eu);
    };
    write_each_size(1);
    settle();
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr *writes = nullptr;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &writes, nullptr), 0);
    ASSERT_EQ(fi_mr_bind(mr, &writes->fid, FI_REMOTE_WRITE), 0);
    write_each_size(2);
    settle();
    EXPECT_EQ(fi_cntr_read(writes), 2u) << "the writes after the binding, and only those";
    std::vector<uint8_t> back(64);
    ASSERT_EQ(retry([&] {
                  return fi_read(a_.ep, back.data(), back.size(), nullptr, a_to_b_,
                                 addr(target.data(), target.data()), key, &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_READ);
    progress_all();
    EXPECT_EQ(fi_cntr_read(writes), 2u) << "a read is not a write";
    for (fid_mr *m : mrs_) EXPECT_EQ(fi_close(&m->fid), 0);
    mrs_.clear();
    EXPECT_EQ(fi_close(&writes->fid), 0);
}

// FI_RMA_EVENT with FI_MR_RMA_EVENT: the target counts peers' accesses on counters bound to
// its endpoint and to the MR (which starts disabled until fi_mr_enable).
class RmaEventTest : public RmaTest {
  protected:
    void adjust_hints(fi_info *h) override {
        h->caps |= FI_RMA | FI_RMA_EVENT;
        h->domain_attr->mr_mode = FI_MR_RMA_EVENT;
    }
};

TEST_F(RmaEventTest, TargetCountsPeersAccesses) {
    ASSERT_NE(info_->caps & FI_RMA_EVENT, 0u);
    ASSERT_EQ(info_->domain_attr->mr_mode, FI_MR_RMA_EVENT);
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr *ep_writes = nullptr, *ep_reads = nullptr, *mr_writes = nullptr;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &ep_writes, nullptr), 0);
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &ep_reads, nullptr), 0);
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &mr_writes, nullptr), 0);
    // The target: a third endpoint with its remote-access counters.
    (void)open_c_with_counters({{ep_writes, FI_REMOTE_WRITE}, {ep_reads, FI_REMOTE_READ}});
    ASSERT_FALSE(HasFailure());
    const fi_addr_t a_to_c = insert(a_, c_.name);

    std::vector<uint8_t> target(200000, 0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(domain_, target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ, 0,
                        0x77, FI_RMA_EVENT, &mr, nullptr),
              0);
    mrs_.push_back(mr);
    const auto out = pattern(100000, 3);
    int ctx = 0;
    // Not enabled yet: refused.
    ASSERT_EQ(retry([&] { return fi_write(a_.ep, out.data(), 8, nullptr, a_to_c, 0, 0x77, &ctx); }), 0);
    EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    ASSERT_EQ(fi_mr_bind(mr, &mr_writes->fid, FI_REMOTE_WRITE), 0);
    ASSERT_EQ(fi_mr_enable(mr), 0);
    for (size_t n : {size_t(8), out.size()}) {
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, out.data(), n, nullptr, a_to_c, 16, 0x77, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_WRITE);
    }
    std::vector<uint8_t> back(64);
    ASSERT_EQ(retry([&] { return fi_read(a_.ep, back.data(), 64, nullptr, a_to_c, 16, 0x77, &ctx); }), 0);
    expect_done(&ctx, FI_RMA | FI_READ);
    EXPECT_EQ(std::memcmp(back.data(), out.data(), 64), 0);
    EXPECT_EQ(std::memcmp(target.data() + 16, out.data(), out.size()), 0);
    // The write is acknowledged after the target counted it; a read's count follows its last
    // bytes out: wait for it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (fi_cntr_read(ep_reads) < 1 && std::chrono::steady_clock::now() < deadline) progress_all();
    EXPECT_EQ(fi_cntr_read(ep_writes), 2u);
    EXPECT_EQ(fi_cntr_read(ep_reads), 1u);
    EXPECT_EQ(fi_cntr_read(mr_writes), 2u) << "the MR's counter counts writes only";
    EXPECT_EQ(fi_cntr_readerr(ep_writes), 0u);
    for (fid_mr *m : mrs_) EXPECT_EQ(fi_close(&m->fid), 0);
    mrs_.clear();
    close_side(c_);
    for (fid_cntr *c : {ep_writes, ep_reads, mr_writes}) EXPECT_EQ(fi_close(&c->fid), 0);
}

// One counter bound to the target endpoint (FI_REMOTE_WRITE) and to the MR (fi_mr_bind) counts
// each access once, however many bindings lead to it; a byte counter bound to the MR counts
// every byte once, also of an access with two segments on the MR.
TEST_F(RmaEventTest, CounterBoundToEndpointAndRegionCountsEachAccessOnce) {
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr *writes = nullptr, *bytes = nullptr;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &writes, nullptr), 0);
    attr.events = FI_CNTR_EVENTS_BYTES;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &bytes, nullptr), 0);
    (void)open_c_with_counters({{writes, FI_REMOTE_WRITE}});  // `bytes`: the MR's only
    ASSERT_FALSE(HasFailure());
    const fi_addr_t a_to_c = insert(a_, c_.name);
    std::vector<uint8_t> target(4096, 0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_reg(domain_, target.data(), target.size(), FI_REMOTE_WRITE | FI_REMOTE_READ, 0,
                        0x78, FI_RMA_EVENT, &mr, nullptr),
              0);
    mrs_.push_back(mr);
    ASSERT_EQ(fi_mr_bind(mr, &writes->fid, FI_REMOTE_WRITE), 0);
    ASSERT_EQ(fi_mr_bind(mr, &bytes->fid, FI_REMOTE_WRITE), 0);
    ASSERT_EQ(fi_mr_enable(mr), 0);
    const auto out = pattern(3000, 5);
    int ctx = 0;
    for (size_t n : {size_t(8), size_t(100), out.size()}) {
        ASSERT_EQ(retry([&] { return fi_write(a_.ep, out.data(), n, nullptr, a_to_c, 0, 0x78, &ctx); }), 0);
        expect_done(&ctx, FI_RMA | FI_WRITE);
    }
    // Two target segments on the same MR: still one access.
    iovec local{const_cast<uint8_t *>(out.data()), 64};
    fi_rma_iov remote[2] = {{0, 32, 0x78}, {1000, 32, 0x78}};
    fi_msg_rma msg{};
    msg.msg_iov = &local;
    msg.iov_count = 1;
    msg.addr = a_to_c;
    msg.rma_iov = remote;
    msg.rma_iov_count = 2;
    msg.context = &ctx;
    ASSERT_EQ(retry([&] { return fi_writemsg(a_.ep, &msg, 0); }), 0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    progress_all();
    EXPECT_EQ(fi_cntr_read(writes), 4u) << "three writes and a two-segment one, each once";
    EXPECT_EQ(fi_cntr_read(bytes), 8u + 100u + 3000u + 64u) << "every byte once";
    for (fid_mr *m : mrs_) EXPECT_EQ(fi_close(&m->fid), 0);
    mrs_.clear();
    close_side(c_);
    for (fid_cntr *c : {writes, bytes}) EXPECT_EQ(fi_close(&c->fid), 0);
}

}  // namespace
}  // namespace ufi::msg_test

namespace ufi::msg_test {
namespace {

// An endpoint's RMA and atomics to its own address (MPI's one-sided layer does this).
class RmaSelfTest : public RmaTest {
  protected:
    void adjust_hints(fi_info *h) override { h->caps |= FI_RMA | FI_ATOMIC; }
};

TEST_F(RmaSelfTest, WriteReadAndFetchAddToItself) {
    const fi_addr_t a_to_a = insert(a_, a_.name);
    std::vector<uint8_t> target(100000, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    int ctx = 0;
    for (size_t n : {size_t(8), target.size()}) {
        const auto out = pattern(n, 5);
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, out.data(), n, nullptr, a_to_a,
                                      addr(target.data(), target.data()), fi_mr_key(mr), &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_WRITE);
        EXPECT_TRUE(same(target.data(), out.data(), n));
        std::vector<uint8_t> back(n);
        ASSERT_EQ(retry([&] {
                      return fi_read(a_.ep, back.data(), n, nullptr, a_to_a,
                                     addr(target.data(), target.data()), fi_mr_key(mr), &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_RMA | FI_READ);
        EXPECT_EQ(back, out);
    }
    uint64_t one = 1, old = 99;
    std::memset(target.data(), 0, 8);
    ASSERT_EQ(retry([&] {
                  return fi_fetch_atomic(a_.ep, &one, 1, nullptr, &old, nullptr, a_to_a,
                                         addr(target.data(), target.data()), fi_mr_key(mr),
                                         FI_UINT64, FI_SUM, &ctx);
              }),
              0);
    expect_done(&ctx, FI_ATOMIC | FI_READ);
    EXPECT_EQ(old, 0u);
    uint64_t now = 0;
    std::memcpy(&now, target.data(), 8);
    EXPECT_EQ(now, 1u);
    // Its own name leaves self out (names carry what peers need), yet the endpoint reaches
    // itself over self where the domain has it: it resolves its own name to its full address.
    const auto &full = runtime::ep::endpoint_of(&a_.ep->fid)->address();
    const bool has_self = std::any_of(full.records.begin(), full.records.end(),
                                      [](const auto &r) { return r.tl == "self"; });
    runtime::proto::DataPath *dp = runtime::ep::endpoint_of(&a_.ep->fid)->data_path();
    ASSERT_EQ(dp->peer_count(), 1u);
    if (has_self) {
        EXPECT_EQ(dp->peer(0)->lane.resource().tl, "self");
    }
}

}  // namespace
}  // namespace ufi::msg_test

namespace ufi::msg_test {
namespace {

// FI_FENCE: a fenced read waits for an earlier large write (zero copy where the transports
// allow, finished by the target later) and sees all of it; a fenced write waits for an
// earlier read, which sees the old bytes.
TEST_F(RmaTest, FencedOperationsWaitForEarlierOnes) {
    ASSERT_NE(info_->caps & FI_FENCE, 0u);
    const size_t n = 4 << 20;
    std::vector<uint8_t> target(n, 0x11);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    for (int round = 0; round < 3; ++round) {
        const auto fresh = pattern(n, static_cast<uint8_t>(40 + round));
        int wctx = 0, rctx = 0;
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, fresh.data(), n, nullptr, a_to_b_,
                                      addr(target.data(), target.data()), fi_mr_key(mr), &wctx);
                  }),
                  0);
        std::vector<uint8_t> back(n, 0);
        iovec local{back.data(), n};
        fi_rma_iov remote{addr(target.data(), target.data()), n, fi_mr_key(mr)};
        fi_msg_rma msg{};
        msg.msg_iov = &local;
        msg.iov_count = 1;
        msg.addr = a_to_b_;
        msg.rma_iov = &remote;
        msg.rma_iov_count = 1;
        msg.context = &rctx;
        ASSERT_EQ(retry([&] { return fi_readmsg(a_.ep, &msg, FI_FENCE | FI_COMPLETION); }), 0);
        for (int i = 0; i < 2; ++i) {
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait(a_.cq, e), 1);
            EXPECT_EQ(e.op_context, i == 0 ? static_cast<void *>(&wctx) : static_cast<void *>(&rctx))
                << "the fenced read completes after the write";
        }
        EXPECT_TRUE(back == fresh) << "the fenced read saw all of the write";
        // WAR: a read, then a fenced write of other bytes: the read has the old ones.
        const auto later = pattern(n, static_cast<uint8_t>(90 + round));
        ASSERT_EQ(retry([&] {
                      return fi_read(a_.ep, back.data(), n, nullptr, a_to_b_,
                                     addr(target.data(), target.data()), fi_mr_key(mr), &rctx);
                  }),
                  0);
        iovec wlocal{const_cast<uint8_t *>(later.data()), n};
        msg.msg_iov = &wlocal;
        msg.context = &wctx;
        ASSERT_EQ(retry([&] { return fi_writemsg(a_.ep, &msg, FI_FENCE | FI_COMPLETION); }), 0);
        for (int i = 0; i < 2; ++i) {
            fi_cq_tagged_entry e{};
            ASSERT_EQ(wait(a_.cq, e), 1);
        }
        EXPECT_TRUE(back == fresh) << "the read before the fenced write saw the old bytes";
        EXPECT_TRUE(target == later);
    }
}

}  // namespace
}  // namespace ufi::msg_test

namespace ufi::msg_test {
namespace {

// An endpoint that asked for RMA orderings (RAW, WAW, SAW...) gets them without FI_FENCE:
// a read after a large (zero-copy) write sees it, and a message sent after it finds it in
// place when it is received.
class RmaOrderedTest : public RmaTest {
  protected:
    void adjust_hints(fi_info *h) override {
        RmaTest::adjust_hints(h);
        h->tx_attr->msg_order = FI_ORDER_RAW | FI_ORDER_WAW | FI_ORDER_SAW | FI_ORDER_SAS |
                                FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAW;
    }
};

TEST_F(RmaOrderedTest, ReadAndSendAfterALargeWriteSeeIt) {
    ASSERT_NE(info_->tx_attr->msg_order & FI_ORDER_RAW, 0u);
    const size_t n = 4 << 20;
    std::vector<uint8_t> target(n, 0);
    fid_mr *mr = reg(target.data(), target.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    for (int round = 0; round < 3; ++round) {
        const auto fresh = pattern(n, static_cast<uint8_t>(7 + round));
        std::vector<uint8_t> back(n, 0);
        uint64_t note = 0, got = 0;
        ASSERT_EQ(fi_trecv(b_.ep, &got, 8, nullptr, FI_ADDR_UNSPEC, 77, 0, nullptr), 0);
        ASSERT_EQ(retry([&] {
                      return fi_write(a_.ep, fresh.data(), n, nullptr, a_to_b_,
                                      addr(target.data(), target.data()), fi_mr_key(mr), nullptr);
                  }),
                  0);
        ASSERT_EQ(retry([&] {
                      return fi_read(a_.ep, back.data(), n, nullptr, a_to_b_,
                                     addr(target.data(), target.data()), fi_mr_key(mr), nullptr);
                  }),
                  0);
        note = 1 + round;
        ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &note, 8, nullptr, a_to_b_, 77, nullptr); }), 0);
        // B's receive: the write is in place by then (SAW).
        fi_cq_tagged_entry e{};
        ASSERT_EQ(wait(b_.cq, e), 1);
        EXPECT_EQ(got, note);
        EXPECT_TRUE(target == fresh) << "the message overtook the write";
        for (int i = 0; i < 3; ++i) ASSERT_EQ(wait(a_.cq, e), 1);
        EXPECT_TRUE(back == fresh) << "the read overtook the write";
    }
}

// Many small reads posted back to back on an ordered endpoint (MPICH's MPI_Get loop, test5):
// each waits behind the one before it, and every one completes.
TEST_F(RmaOrderedTest, ManySmallReadsBackToBackAllComplete) {
    constexpr size_t kReads = 2000;
    std::vector<int> target(kReads), back(kReads, -1);
    for (size_t i = 0; i < kReads; ++i) target[i] = int(1000 + i);
    fid_mr *mr = reg(target.data(), target.size() * sizeof(int), FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    size_t done = 0;
    fi_cq_tagged_entry e{};
    for (size_t i = 0; i < kReads; ++i) {
        ssize_t rc;
        while ((rc = fi_read(a_.ep, &back[i], sizeof(int), nullptr, a_to_b_,
                             addr(target.data(), &target[i]), fi_mr_key(mr), nullptr)) == -FI_EAGAIN) {
            ASSERT_EQ(wait(a_.cq, e), 1) << "after " << done << " of " << i << " posted";
            ++done;
        }
        ASSERT_EQ(rc, 0);
        progress_all();
    }
    while (done < kReads) {
        ASSERT_EQ(wait(a_.cq, e), 1) << "after " << done << " of " << kReads;
        ++done;
    }
    EXPECT_EQ(back, target);
}

// Both sides reading from each other at once, each read waiting behind the one before it
// (MPICH's test5 in a fence): each side's answers to the other's reads go ahead of its own
// reads still waiting, or both wait for ever.
TEST_F(RmaOrderedTest, BothSidesReadingEachOtherAtOnceAllComplete) {
    constexpr size_t kReads = 500;
    std::vector<int> at_a(kReads), at_b(kReads), back_a(kReads, -1), back_b(kReads, -1);
    for (size_t i = 0; i < kReads; ++i) {
        at_a[i] = int(500 + i);
        at_b[i] = int(1000 + i);
    }
    const uint64_t rw = FI_REMOTE_READ | FI_REMOTE_WRITE;
    fid_mr *ma = reg(at_a.data(), kReads * sizeof(int), rw);
    fid_mr *mb = reg(at_b.data(), kReads * sizeof(int), rw);
    ASSERT_TRUE(ma && mb);
    size_t done_a = 0, done_b = 0;
    fi_cq_tagged_entry e[16];
    auto reap = [&] {
        progress_all();
        ssize_t n;
        while ((n = fi_cq_read(a_.cq, e, 16)) > 0) done_a += size_t(n);
        while ((n = fi_cq_read(b_.cq, e, 16)) > 0) done_b += size_t(n);
    };
    for (size_t i = 0; i < kReads; ++i) {
        ASSERT_EQ(retry([&] {
                      reap();
                      return fi_read(a_.ep, &back_a[i], sizeof(int), nullptr, a_to_b_,
                                     addr(at_b.data(), &at_b[i]), fi_mr_key(mb), nullptr);
                  }),
                  0);
        ASSERT_EQ(retry([&] {
                      reap();
                      return fi_read(b_.ep, &back_b[i], sizeof(int), nullptr, b_to_a_,
                                     addr(at_a.data(), &at_a[i]), fi_mr_key(ma), nullptr);
                  }),
                  0);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while ((done_a < kReads || done_b < kReads) && std::chrono::steady_clock::now() < deadline) {
        reap();
    }
    EXPECT_EQ(done_a, kReads);
    EXPECT_EQ(done_b, kReads);
    EXPECT_EQ(back_a, at_b);
    EXPECT_EQ(back_b, at_a);
}

// The same through fi_readmsg with flags 0 (no completion asked: MPICH's MPI_Get), counted
// by a counter bound with FI_READ | FI_WRITE, the way MPICH waits for them in a fence.
TEST_F(RmaOrderedTest, ManySmallCountedReadsAllCount) {
    constexpr size_t kReads = 2000;
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr *done = nullptr;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &done, nullptr), 0);
    const fi_addr_t c_to_b = open_c_with_counters({{done, FI_READ | FI_WRITE}});
    ASSERT_FALSE(HasFailure());
    std::vector<int> target(kReads), back(kReads, -1);
    for (size_t i = 0; i < kReads; ++i) target[i] = int(1000 + i);
    fid_mr *mr = reg(target.data(), target.size() * sizeof(int), FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    for (size_t i = 0; i < kReads; ++i) {
        iovec iov{&back[i], sizeof(int)};
        fi_rma_iov riov{addr(target.data(), &target[i]), sizeof(int), fi_mr_key(mr)};
        fi_msg_rma msg{};
        msg.msg_iov = &iov;
        msg.iov_count = 1;
        msg.addr = c_to_b;
        msg.rma_iov = &riov;
        msg.rma_iov_count = 1;
        ASSERT_EQ(retry([&] { return fi_readmsg(c_.ep, &msg, 0); }), 0) << i;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (fi_cntr_read(done) < kReads && std::chrono::steady_clock::now() < deadline) {
        progress_all();
    }
    EXPECT_EQ(fi_cntr_read(done), kReads);
    EXPECT_EQ(fi_cntr_readerr(done), 0u);
    EXPECT_EQ(back, target);
    close_side(c_);
    EXPECT_EQ(fi_close(&done->fid), 0);
}

}  // namespace
}  // namespace ufi::msg_test

namespace ufi::msg_test {
namespace {

// An MR registered with its own authorization key is out of reach of peers admitted with
// another (here: the endpoints' empty key).
TEST_F(RmaTest, RegionWithAnotherAuthKeyRefusesThePeer) {
    std::vector<uint8_t> target(64, 0x3C);
    iovec iov{target.data(), target.size()};
    uint8_t secret[6] = {'s', 'e', 'c', 'r', 'e', 't'};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
    attr.requested_key = 0x5151;
    attr.auth_key = secret;
    attr.auth_key_size = sizeof secret;
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), 0);
    mrs_.push_back(mr);
    uint64_t v = 1;
    int ctx = 0;
    ASSERT_EQ(retry([&] {
                  return fi_write(a_.ep, &v, 8, nullptr, a_to_b_, addr(target.data(), target.data()),
                                  fi_mr_key(mr), &ctx);
              }),
              0);
    EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    ASSERT_EQ(retry([&] {
                  return fi_read(a_.ep, &v, 8, nullptr, a_to_b_, addr(target.data(), target.data()),
                                 fi_mr_key(mr), &ctx);
              }),
              0);
    EXPECT_EQ(expect_error(&ctx), FI_EACCES);
    for (uint8_t b : target) EXPECT_EQ(b, 0x3C);
}

}  // namespace
}  // namespace ufi::msg_test

namespace ufi::msg_test {
namespace {

// What MPI one-sided layers and SHMEM runtimes ask of one endpoint, together: FI_RMA_EVENT
// counters at the target, FI_FENCE, FI_DELIVERY_COMPLETE as the default op flag, remote CQ
// data, and 64-bit fetch-add beside 32-bit compare-swap on the same memory.
class OneSidedTest : public RmaTest {
  protected:
    void adjust_hints(fi_info *h) override {
        h->caps |= FI_RMA | FI_ATOMIC | FI_RMA_EVENT | FI_FENCE | FI_REMOTE_CQ_DATA;
        h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    }
};

TEST_F(OneSidedTest, FeaturesTogetherOnOneEndpoint) {
    ASSERT_EQ(info_->caps & (FI_RMA_EVENT | FI_FENCE | FI_ATOMIC), FI_RMA_EVENT | FI_FENCE | FI_ATOMIC);
    ASSERT_EQ(info_->tx_attr->op_flags, uint64_t{FI_DELIVERY_COMPLETE});
    alignas(8) uint8_t window[64] = {};
    fid_mr *mr = reg(window, sizeof window, FI_REMOTE_READ | FI_REMOTE_WRITE);
    ASSERT_NE(mr, nullptr);
    fi_cntr_attr cattr{};
    cattr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr *remote = nullptr;
    ASSERT_EQ(fi_cntr_open(domain_, &cattr, &remote, nullptr), 0);
    ASSERT_EQ(fi_mr_bind(mr, &remote->fid, FI_REMOTE_WRITE | FI_REMOTE_READ), 0);
    const uint64_t key = fi_mr_key(mr);
    const uint64_t base = addr(window, window);
    int ctx = 0;
    // 64-bit fetch-adds on the word.
    uint64_t add = 0x100000001ULL, old64 = 0;
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(retry([&] {
                      return fi_fetch_atomic(a_.ep, &add, 1, nullptr, &old64, nullptr, a_to_b_, base,
                                             key, FI_UINT64, FI_SUM, &ctx);
                  }),
                  0);
        expect_done(&ctx, FI_ATOMIC | FI_READ);
        EXPECT_EQ(old64, add * uint64_t(i));
    }
    // A 32-bit compare-swap on its low half (3 -> 42), fenced behind them.
    uint32_t cmp = 3, swap = 42, old32 = 0;
    fi_ioc op_ioc{&swap, 1}, cmp_ioc{&cmp, 1}, res_ioc{&old32, 1};
    fi_rma_ioc rma{base, 1, key};
    fi_msg_atomic msg{};
    msg.msg_iov = &op_ioc;
    msg.iov_count = 1;
    msg.addr = a_to_b_;
    msg.rma_iov = &rma;
    msg.rma_iov_count = 1;
    msg.datatype = FI_UINT32;
    msg.op = FI_CSWAP;
    msg.context = &ctx;
    ASSERT_EQ(retry([&] {
                  return fi_compare_atomicmsg(a_.ep, &msg, &cmp_ioc, nullptr, 1, &res_ioc, nullptr, 1,
                                              FI_FENCE | FI_DELIVERY_COMPLETE | FI_COMPLETION);
              }),
              0);
    expect_done(&ctx, FI_ATOMIC | FI_READ);
    EXPECT_EQ(old32, 3u);
    uint64_t now = 0;
    std::memcpy(&now, window, 8);
    EXPECT_EQ(now, (uint64_t{3} << 32) | 42u) << "the 64-bit adds and the 32-bit swap compose";
    // fi_writedata into the next word: the target's CQ entry, then the target's counter.
    const uint64_t v = 0xabcdef;
    ASSERT_EQ(retry([&] {
                  return fi_writedata(a_.ep, &v, 8, nullptr, 0x77, a_to_b_, base + 8, key, &ctx);
              }),
              0);
    expect_done(&ctx, FI_RMA | FI_WRITE);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(e.data, 0x77u);
    EXPECT_EQ(std::memcmp(window + 8, &v, 8), 0);
    EXPECT_EQ(fi_cntr_read(remote), 5u) << "3 fetch-adds, the compare-swap, the write";
    for (fid_mr *m : mrs_) EXPECT_EQ(fi_close(&m->fid), 0);
    mrs_.clear();
    EXPECT_EQ(fi_close(&remote->fid), 0);
}

}  // namespace
}  // namespace ufi::msg_test
