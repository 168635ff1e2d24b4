// fi_ep_alias (fi_endpoint(3)): another handle on an endpoint that differs only by its default
// operation flags; the endpoint stays open until every alias of it closed.
#include "msg_fixture.h"

#include <rdma/fi_endpoint.h>

namespace ufi::msg_test {
namespace {

class AliasTest : public MsgTest {
  protected:
    // An endpoint whose CQ is bound with FI_SELECTIVE_COMPLETION both ways (so its default
    // flags decide which operations complete), opened but not enabled.
    void open_selective(Side &s) {
        fi_av_attr av_attr{};
        ASSERT_EQ(fi_av_open(domain_, &av_attr, &s.av, nullptr), 0);
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        cq_attr.size = 64;
        ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &s.cq, nullptr), 0);
        ASSERT_EQ(fi_endpoint(domain_, info_, &s.ep, &selective_ctx_), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.av->fid, 0), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION), 0);
    }
    void enable_selective(Side &s) {
        ASSERT_EQ(fi_enable(s.ep), 0);
        size_t len = 0;
        ASSERT_EQ(fi_getname(&s.ep->fid, nullptr, &len), -FI_ETOOSMALL);
        s.name.resize(len);
        ASSERT_EQ(fi_getname(&s.ep->fid, s.name.data(), &len), 0);
    }
    int selective_ctx_ = 0;
};

TEST_F(AliasTest, FlagsMustNameOneDirectionAndOperationFlagsOnly) {
    fid_ep *alias = nullptr;
    EXPECT_EQ(fi_ep_alias(a_.ep, &alias, 0), -FI_EINVAL);
    EXPECT_EQ(fi_ep_alias(a_.ep, &alias, FI_TRANSMIT | FI_RECV), -FI_EINVAL);
    EXPECT_EQ(fi_ep_alias(a_.ep, &alias, FI_TRANSMIT | FI_COMPLETION | FI_TAGGED), -FI_EBADFLAGS);
    // (fi_ep_alias always passes a place for the handle; fi_control may not.)
    struct fi_alias no_place{nullptr, FI_TRANSMIT};
    EXPECT_EQ(fi_control(&a_.ep->fid, FI_ALIAS, &no_place), -FI_EINVAL);
    EXPECT_EQ(fi_control(&a_.ep->fid, FI_ALIAS, nullptr), -FI_EINVAL);
    EXPECT_EQ(alias, nullptr);
}

TEST_F(AliasTest, AnAliasHasItsOwnFlagsAndInheritsTheOtherDirection) {
    uint64_t parent_tx = FI_TRANSMIT, parent_rx = FI_RECV;
    ASSERT_EQ(fi_control(&a_.ep->fid, FI_GETOPSFLAG, &parent_tx), 0);
    ASSERT_EQ(fi_control(&a_.ep->fid, FI_GETOPSFLAG, &parent_rx), 0);
    fid_ep *alias = nullptr;
    ASSERT_EQ(fi_ep_alias(a_.ep, &alias, FI_TRANSMIT | FI_DELIVERY_COMPLETE), 0);
    ASSERT_NE(alias, nullptr);
    EXPECT_NE(alias, a_.ep);
    EXPECT_EQ(alias->fid.fclass, static_cast<size_t>(FI_CLASS_EP));
    uint64_t f = FI_TRANSMIT;
    ASSERT_EQ(fi_control(&alias->fid, FI_GETOPSFLAG, &f), 0);
    EXPECT_EQ(f, uint64_t{FI_DELIVERY_COMPLETE});
    f = FI_RECV;
    ASSERT_EQ(fi_control(&alias->fid, FI_GETOPSFLAG, &f), 0);
    EXPECT_EQ(f, parent_rx);
    // Setting the alias's flags leaves the endpoint's alone, and the other way round.
    f = FI_TRANSMIT | FI_INJECT_COMPLETE;
    ASSERT_EQ(fi_control(&alias->fid, FI_SETOPSFLAG, &f), 0);
    f = FI_TRANSMIT;
    ASSERT_EQ(fi_control(&a_.ep->fid, FI_GETOPSFLAG, &f), 0);
    EXPECT_EQ(f, parent_tx);
    f = FI_TRANSMIT;
    ASSERT_EQ(fi_control(&alias->fid, FI_GETOPSFLAG, &f), 0);
    EXPECT_EQ(f, uint64_t{FI_INJECT_COMPLETE});
    // Names and options are the endpoint's.
    std::vector<uint8_t> name(a_.name.size());
    size_t len = name.size();
    ASSERT_EQ(fi_getname(&alias->fid, name.data(), &len), 0);
    EXPECT_EQ(name, a_.name);
    size_t min = 0, min_len = sizeof min;
    EXPECT_EQ(fi_getopt(&alias->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, &min_len), 0);
    EXPECT_EQ(fi_close(&alias->fid), 0);
}

TEST_F(AliasTest, TheEndpointClosesOnlyAfterEveryAlias) {
    fid_ep *alias = nullptr, *second = nullptr;
    ASSERT_EQ(fi_ep_alias(a_.ep, &alias, FI_RECV), 0);
    // An alias of an alias is one more alias of the endpoint.
    ASSERT_EQ(fi_ep_alias(alias, &second, FI_TRANSMIT | FI_COMPLETION), 0);
    EXPECT_EQ(fi_close(&a_.ep->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&alias->fid), 0);
    EXPECT_EQ(fi_close(&a_.ep->fid), -FI_EBUSY);
    // The endpoint still works after a refused close.
    const auto out = pattern(64, 3);
    std::vector<uint8_t> in(64, 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_send(second, out.data(), out.size(), nullptr, a_to_b_, nullptr); }), 0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(in, out);
    ASSERT_EQ(wait(a_.cq, e), 1);
    EXPECT_EQ(fi_close(&second->fid), 0);
    EXPECT_EQ(fi_close(&a_.ep->fid), 0);
    a_.ep = nullptr;
}

// The data calls made through an alias use its flags: on a CQ bound with
// FI_SELECTIVE_COMPLETION, sends through the endpoint (no FI_COMPLETION) leave no entry and
// sends through an FI_TRANSMIT | FI_COMPLETION alias do; receives alike. The aliases are made
// before fi_enable and take the data calls' tables the enable installs.
TEST_F(AliasTest, DataCallsThroughAnAliasUseItsFlags) {
    open_selective(c_);
    fid_ep *tx_alias = nullptr, *rx_alias = nullptr;
    ASSERT_EQ(fi_ep_alias(c_.ep, &tx_alias, FI_TRANSMIT | FI_COMPLETION), 0);
    ASSERT_EQ(fi_ep_alias(c_.ep, &rx_alias, FI_RECV | FI_COMPLETION), 0);
    EXPECT_EQ(fi_send(tx_alias, "x", 1, nullptr, 0, nullptr), -FI_EOPBADSTATE);
    enable_selective(c_);
    const fi_addr_t c_to_b = insert(c_, b_.name);
    const fi_addr_t b_to_c = insert(b_, c_.name);

    const auto one = pattern(100, 1), two = pattern(100, 2);
    std::vector<uint8_t> in1(100, 0), in2(100, 0);
    int ctx1 = 0, ctx2 = 0;
    fi_cq_tagged_entry e{};
    ASSERT_EQ(fi_recv(b_.ep, in1.data(), in1.size(), nullptr, b_to_c, nullptr), 0);
    ASSERT_EQ(fi_recv(b_.ep, in2.data(), in2.size(), nullptr, b_to_c, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_send(c_.ep, one.data(), one.size(), nullptr, c_to_b, &ctx1); }), 0);
    ASSERT_EQ(retry([&] { return fi_send(tx_alias, two.data(), two.size(), nullptr, c_to_b, &ctx2); }), 0);
    ASSERT_EQ(wait(b_.cq, e), 1);
    ASSERT_EQ(wait(b_.cq, e), 1);
    EXPECT_EQ(in1, one);
    EXPECT_EQ(in2, two);
    // Only the alias's send completes.
    ASSERT_EQ(wait(c_.cq, e), 1);
    EXPECT_EQ(e.op_context, &ctx2);
    EXPECT_TRUE(quiet(c_.cq));

    // Receives: one through the endpoint (no completion), one through the alias (completes).
    std::vector<uint8_t> r1(100, 0), r2(100, 0);
    int rctx1 = 0, rctx2 = 0;
    ASSERT_EQ(fi_recv(c_.ep, r1.data(), r1.size(), nullptr, c_to_b, &rctx1), 0);
    ASSERT_EQ(fi_recv(rx_alias, r2.data(), r2.size(), nullptr, c_to_b, &rctx2), 0);
    ASSERT_EQ(retry([&] { return fi_send(b_.ep, one.data(), one.size(), nullptr, b_to_c, nullptr); }), 0);
    ASSERT_EQ(retry([&] { return fi_send(b_.ep, two.data(), two.size(), nullptr, b_to_c, nullptr); }), 0);
    ASSERT_EQ(wait(c_.cq, e), 1);
    EXPECT_EQ(e.op_context, &rctx2);
    EXPECT_EQ(r1, one);
    EXPECT_EQ(r2, two);
    EXPECT_TRUE(quiet(c_.cq));

    EXPECT_EQ(fi_close(&c_.ep->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&tx_alias->fid), 0);
    EXPECT_EQ(fi_close(&rx_alias->fid), 0);
}

}  // namespace
}  // namespace ufi::msg_test
