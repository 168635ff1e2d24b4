// Who may talk and how an unknown sender is reported: FI_SOURCE_ERR (a message from a sender
// not in the AV completes as an FI_EADDRNOTAVAIL error entry carrying its address; once
// inserted, the sender is reported by its new fi_addr), and FI_AV_AUTH_KEY domains (the
// wireup carries the key the sender's AV entry names; a receiver admits only keys it holds,
// and a refused sender's operations fail, never hang).
#include "msg_fixture.h"

#include <rdma/fi_rma.h>

#include <netinet/in.h>

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

namespace ufi::msg_test {
namespace {

class SourceErrTest : public MsgTest {
  protected:
    void adjust_hints(fi_info *hints) override { hints->caps |= FI_SOURCE_ERR; }
    void unknown_sender_case();
};

// The same with FI_SOCKADDR_IN names: err_data is the sender's socket address.
class SocketSourceErrTest : public SourceErrTest {
  protected:
    void adjust_hints(fi_info *hints) override {
        SourceErrTest::adjust_hints(hints);
        hints->addr_format = FI_SOCKADDR_IN;
    }
    bool needs_loopback_tcp() const override { return true; }
};

TEST_F(SourceErrTest, UnknownSenderIsAnErrorEntryWithItsAddress) { unknown_sender_case(); }

TEST_F(SocketSourceErrTest, UnknownSenderIsAnErrorEntryWithItsSocketAddress) {
    ASSERT_EQ(info_->addr_format, uint32_t{FI_SOCKADDR_IN});
    ASSERT_EQ(a_.name.size(), sizeof(sockaddr_in)) << "fi_getname gives the socket address";
    unknown_sender_case();
}

void SourceErrTest::unknown_sender_case() {
    ASSERT_NE(info_->caps & FI_SOURCE_ERR, 0u) << "offered on request";
    open_side(c_);  // C's AV is empty: A is unknown to it
    const fi_addr_t a_to_c = insert(a_, c_.name);
    uint64_t in = 0;
    const uint64_t out = 0xabc;
    int rctx = 0;
    ASSERT_EQ(fi_trecv(c_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 4, 0, &rctx), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &out, 8, nullptr, a_to_c, 4, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(c_.cq, e), -FI_EAVAIL);
    std::vector<uint8_t> data(512);
    fi_cq_err_entry err{};
    err.err_data = data.data();
    err.err_data_size = data.size();
    ASSERT_EQ(fi_cq_readerr(c_.cq, &err, 0), 1);
    EXPECT_EQ(err.err, FI_EADDRNOTAVAIL);
    EXPECT_EQ(err.op_context, &rctx);
    EXPECT_EQ(err.len, 8u);
    EXPECT_EQ(err.tag, 4u);
    EXPECT_EQ(in, out) << "the data arrived";
    ASSERT_EQ(err.err_data_size, a_.name.size()) << "the sender's address, as fi_av_insert takes it";
    data.resize(err.err_data_size);
    EXPECT_EQ(data, a_.name);
    // Inserted, the sender is reported by its fi_addr from then on.
    fi_addr_t c_to_a = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insert(c_.av, data.data(), 1, &c_to_a, 0, nullptr), 1);
    ASSERT_EQ(fi_trecv(c_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 5, 0, &rctx), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &out, 8, nullptr, a_to_c, 5, nullptr); }), 0);
    fi_addr_t src = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(wait(c_.cq, e, &src), 1);
    EXPECT_EQ(src, c_to_a);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(wait(a_.cq, e), 1);
}

TEST_F(MsgTest, WithoutSourceErrAnUnknownSenderIsNotAvail) {
    open_side(c_);
    const fi_addr_t a_to_c = insert(a_, c_.name);
    uint64_t in = 0;
    const uint64_t out = 1;
    ASSERT_EQ(fi_trecv(c_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 4, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(a_.ep, &out, 8, nullptr, a_to_c, 4, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    fi_addr_t src = 0;
    ASSERT_EQ(wait(c_.cq, e, &src), 1);
    EXPECT_EQ(src, FI_ADDR_NOTAVAIL);
    ASSERT_EQ(wait(a_.cq, e), 1);
}

// FI_AV_AUTH_KEY: each side's AV holds keys; the sender's entry for the receiver names one.
class AvKeyTest : public ::testing::Test {
  protected:
    void SetUp() override {
        fi_info *hints = fi_allocinfo();
        hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV | FI_RMA;
        hints->ep_attr->type = FI_EP_RDM;
        hints->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
        const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info_);
        fi_freeinfo(hints);
        ASSERT_EQ(rc, 0) << fi_strerror(-rc);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
    }
    void TearDown() override {
        for (Side *s : {&a_, &b_}) {
            for (fid_t f : {s->ep ? &s->ep->fid : nullptr, s->cq ? &s->cq->fid : nullptr,
                            s->av ? &s->av->fid : nullptr}) {
                if (f != nullptr) {
                    EXPECT_EQ(fi_close(f), 0);
                }
            }
        }
        if (domain_) {
            EXPECT_EQ(fi_close(&domain_->fid), 0);
        }
        if (fabric_) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        if (info_) fi_freeinfo(info_);
    }
    // An endpoint whose AV holds `key` (taken at fi_enable); its handle in *handle.
    void open_with_key(Side &s, const std::vector<uint8_t> &key, fi_addr_t *handle) {
        fi_av_attr av_attr{};
        ASSERT_EQ(fi_av_open(domain_, &av_attr, &s.av, nullptr), 0);
        ASSERT_EQ(fi_av_insert_auth_key(s.av, key.data(), key.size(), handle, 0), 0);
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &s.cq, nullptr), 0);
        ASSERT_EQ(fi_endpoint(domain_, info_, &s.ep, nullptr), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.av->fid, 0), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV), 0);
        ASSERT_EQ(fi_enable(s.ep), 0);
        size_t len = 0;
        ASSERT_EQ(fi_getname(&s.ep->fid, nullptr, &len), -FI_ETOOSMALL);
        s.name.resize(len);
        ASSERT_EQ(fi_getname(&s.ep->fid, s.name.data(), &len), 0);
    }
    // Inserts `name` into s's AV under key handle `key`.
    fi_addr_t insert_with_key(Side &s, const std::vector<uint8_t> &name, fi_addr_t key) {
        fi_addr_t a = key;
        EXPECT_EQ(fi_av_insert(s.av, name.data(), 1, &a, FI_AUTH_KEY, nullptr), 1);
        return a;
    }
    ssize_t wait(fid_cq *cq, fi_cq_tagged_entry &e) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        fi_cq_tagged_entry none;
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_cq_read(cq, &e, 1);
            if (rc != -FI_EAGAIN) return rc;
            for (Side *s : {&a_, &b_}) (void)fi_cq_read(s->cq, &none, 0);
        }
        return -FI_ETIMEDOUT;
    }

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    Side a_, b_;
};

TEST_F(AvKeyTest, ASharedKeyAdmitsAnotherIsRefused) {
    const std::vector<uint8_t> k1 = {1, 2, 3, 4}, k2 = {5, 6, 7, 8};
    fi_addr_t a_k1 = 0, b_k1 = 0;
    open_with_key(a_, k1, &a_k1);
    open_with_key(b_, k1, &b_k1);
    // A and B both hold k1: A's entry for B names k1, so B admits A.
    const fi_addr_t a_to_b = insert_with_key(a_, b_.name, a_k1);
    uint64_t in = 0, out = 77;
    ASSERT_EQ(fi_trecv(b_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(fi_tsend(a_.ep, &out, 8, nullptr, a_to_b, 1, nullptr), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(in, out);
    ASSERT_EQ(wait(a_.cq, e), 1);

    // C holds only k2: A (presenting k1) is refused; A's send fails with FI_EACCES.
    Side c;
    fi_addr_t c_k2 = 0;
    std::swap(c, b_);  // b_ slot now opens C (the fixture closes whatever it holds)
    open_with_key(b_, k2, &c_k2);
    const fi_addr_t a_to_c = insert_with_key(a_, b_.name, a_k1);
    ASSERT_EQ(fi_trecv(b_.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(fi_tsend(a_.ep, &out, 8, nullptr, a_to_c, 1, nullptr), 0);
    ASSERT_EQ(wait(a_.cq, e), -FI_EAVAIL);
    fi_cq_err_entry err{};
    ASSERT_EQ(fi_cq_readerr(a_.cq, &err, 0), 1);
    EXPECT_EQ(err.err, FI_EACCES);
    runtime::proto::DataPath *dp = runtime::ep::endpoint_of(&b_.ep->fid)->data_path();
    EXPECT_EQ(dp->stats().refused_peers, 1u);
    fi_cq_tagged_entry none;
    EXPECT_EQ(fi_cq_read(b_.cq, &none, 1), -FI_EAGAIN) << "nothing from a refused sender";
    for (fid_t f : {&c.ep->fid, &c.cq->fid, &c.av->fid}) EXPECT_EQ(fi_close(f), 0);
}

// RMA on an FI_AV_AUTH_KEY domain: an MR reaches the peers whose key it holds. B's AV holds
// k1 and k2, A reaches B with k1; B's region that holds only k2 (FI_AUTH_KEY) refuses A's
// write, the region that holds all of its AV's keys takes it.
TEST_F(AvKeyTest, RegionsReachOnlyPeersWithTheirKeys) {
    const std::vector<uint8_t> k1 = {1, 2, 3, 4}, k2 = {5, 6, 7, 8};
    fi_addr_t a_k1 = 0, b_k1 = 0, b_k2 = 0;
    open_with_key(a_, k1, &a_k1);
    {
        // B: an AV with both keys (the second inserted before fi_enable, which takes them).
        fi_av_attr av_attr{};
        ASSERT_EQ(fi_av_open(domain_, &av_attr, &b_.av, nullptr), 0);
        ASSERT_EQ(fi_av_insert_auth_key(b_.av, k1.data(), k1.size(), &b_k1, 0), 0);
        ASSERT_EQ(fi_av_insert_auth_key(b_.av, k2.data(), k2.size(), &b_k2, 0), 0);
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &b_.cq, nullptr), 0);
        ASSERT_EQ(fi_endpoint(domain_, info_, &b_.ep, nullptr), 0);
        ASSERT_EQ(fi_ep_bind(b_.ep, &b_.av->fid, 0), 0);
        ASSERT_EQ(fi_ep_bind(b_.ep, &b_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
        ASSERT_EQ(fi_enable(b_.ep), 0);
        size_t len = 0;
        ASSERT_EQ(fi_getname(&b_.ep->fid, nullptr, &len), -FI_ETOOSMALL);
        b_.name.resize(len);
        ASSERT_EQ(fi_getname(&b_.ep->fid, b_.name.data(), &len), 0);
    }
    const fi_addr_t a_to_b = insert_with_key(a_, b_.name, a_k1);
    std::vector<uint8_t> only_k2(64, 0x11), all_keys(64, 0x22);
    auto reg = [&](std::vector<uint8_t> &buf, fi_addr_t src, uint64_t flags, uint64_t key) {
        iovec iov{buf.data(), buf.size()};
        fi_mr_auth_key auth{};
        auth.av = b_.av;
        auth.src_addr = src;
        fi_mr_attr attr{};
        attr.mr_iov = &iov;
        attr.iov_count = 1;
        attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
        attr.requested_key = key;
        attr.auth_key = reinterpret_cast<uint8_t *>(&auth);
        attr.auth_key_size = sizeof auth;
        fid_mr *mr = nullptr;
        EXPECT_EQ(fi_mr_regattr(domain_, &attr, flags, &mr), 0);
        if (mr != nullptr) {
            EXPECT_EQ(fi_mr_enable(mr), 0);
        }
        return mr;
    };
    fid_mr *m2 = reg(only_k2, b_k2, FI_AUTH_KEY, 0x61);
    fid_mr *mall = reg(all_keys, FI_ADDR_UNSPEC, 0, 0x62);
    ASSERT_TRUE(m2 && mall);
    const bool virt = (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    auto at = [&](std::vector<uint8_t> &buf) { return virt ? reinterpret_cast<uint64_t>(buf.data()) : 0; };
    uint64_t v = 0x5a5a5a5a5a5a5a5aULL;
    int ctx = 0;
    fi_cq_tagged_entry e{};
    ASSERT_EQ(fi_write(a_.ep, &v, 8, nullptr, a_to_b, at(only_k2), fi_mr_key(m2), &ctx), 0);
    ASSERT_EQ(wait(a_.cq, e), -FI_EAVAIL);
    fi_cq_err_entry err{};
    ASSERT_EQ(fi_cq_readerr(a_.cq, &err, 0), 1);
    EXPECT_EQ(err.err, FI_EACCES) << "the region holds k2 only";
    for (uint8_t b : only_k2) EXPECT_EQ(b, 0x11);
    ASSERT_EQ(fi_write(a_.ep, &v, 8, nullptr, a_to_b, at(all_keys), fi_mr_key(mall), &ctx), 0);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(std::memcmp(all_keys.data(), &v, 8), 0);
    EXPECT_EQ(fi_close(&m2->fid), 0);
    EXPECT_EQ(fi_close(&mall->fid), 0);
}

}  // namespace
}  // namespace ufi::msg_test
