// Hint matching for one candidate, as a table: each case edits a set of hints and expects
// either a match or an exclusion whose reason names the hint.
#include "runtime/c_enum.h"
#include "runtime/info/capabilities.h"
#include "runtime/info/hint_match.h"
#include "runtime/info/provider_info.h"
#include "tests/unit/info/info_fixture.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>

namespace ufi::runtime::info {
namespace {

using testing::InfoPtr;

constexpr uint32_t kApi = FI_VERSION(2, 7);

// A malloc'ed key of `n` bytes (free_info releases it).
void set_key(uint8_t *&key, size_t &size, size_t n) {
    key = static_cast<uint8_t *>(malloc(n));
    for (size_t i = 0; i < n; ++i) key[i] = static_cast<uint8_t>(i);
    size = n;
}

struct Case {
    const char *what;
    std::function<void(fi_info &)> edit;
    const char *reason;  // nullptr: must match; else a substring of the exclusion reason
};

const Case kCases[] = {
    {"empty hints match", [](fi_info &) {}, nullptr},
    {"ep_type RDM matches", [](fi_info &h) { h.ep_attr->type = FI_EP_RDM; }, nullptr},
    {"ep_type MSG is another entry's", [](fi_info &h) { h.ep_attr->type = FI_EP_MSG; }, "ep_type FI_EP_MSG"},
    {"ep_type DGRAM is not offered", [](fi_info &h) { h.ep_attr->type = FI_EP_DGRAM; }, "ep_type FI_EP_DGRAM"},
    {"caps FI_TAGGED offered", [](fi_info &h) { h.caps = FI_TAGGED; }, nullptr},
    {"caps FI_MSG|FI_TAGGED|FI_DIRECTED_RECV offered", [](fi_info &h) { h.caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV; }, nullptr},
    {"caps FI_MSG|FI_RMA", [](fi_info &h) { h.caps = FI_MSG | FI_RMA; }, nullptr},
    {"caps FI_MSG|FI_ATOMIC", [](fi_info &h) { h.caps = FI_MSG | FI_ATOMIC; }, nullptr},
    {"caps FI_COLLECTIVE not offered yet", [](fi_info &h) { h.caps = FI_MSG | FI_COLLECTIVE; }, "caps FI_COLLECTIVE"},
    {"caps FI_SOURCE on request", [](fi_info &h) { h.caps = FI_TAGGED | FI_SOURCE; }, nullptr},
    {"caps FI_REMOTE_COMM is offered by eth0", [](fi_info &h) { h.caps = FI_REMOTE_COMM; }, nullptr},
    {"caps FI_AV_USER_ID", [](fi_info &h) { h.caps = FI_AV_USER_ID; }, nullptr},
    {"domain caps FI_SHARED_AV | FI_AV_USER_ID", [](fi_info &h) { h.domain_attr->caps = FI_SHARED_AV | FI_AV_USER_ID; }, nullptr},
    {"domain caps FI_DIRECTED_RECV not offered", [](fi_info &h) { h.domain_attr->caps = FI_DIRECTED_RECV; }, "domain caps"},
    {"secondary caps FI_LOCAL_COMM", [](fi_info &h) { h.caps = FI_LOCAL_COMM | FI_REMOTE_COMM; }, nullptr},
    {"any mode is fine (ufi requires none)", [](fi_info &h) { h.mode = 0; }, nullptr},
    {"mode FI_CONTEXT offered", [](fi_info &h) { h.mode = FI_CONTEXT; }, nullptr},
    {"addr_format FI_ADDR_STR", [](fi_info &h) { h.addr_format = FI_ADDR_STR; }, nullptr},
    {"addr_format FI_ADDR_UCX", [](fi_info &h) { h.addr_format = FI_ADDR_UCX; }, nullptr},
    {"addr_format FI_SOCKADDR_IN", [](fi_info &h) { h.addr_format = FI_SOCKADDR_IN; }, nullptr},
    {"addr_format FI_SOCKADDR_IN6", [](fi_info &h) { h.addr_format = FI_SOCKADDR_IN6; }, nullptr},
    {"addr_format FI_SOCKADDR_IB", [](fi_info &h) { h.addr_format = FI_SOCKADDR_IB; }, "addr_format FI_SOCKADDR_IB"},
    {"domain name matches", [](fi_info &h) { h.domain_attr->name = strdup("eth0"); }, nullptr},
    {"domain name differs", [](fi_info &h) { h.domain_attr->name = strdup("mlx5_0"); }, "domain name \"mlx5_0\""},
    {"fabric name matches", [](fi_info &h) { h.fabric_attr->name = strdup("ufi"); }, nullptr},
    {"fabric name differs", [](fi_info &h) { h.fabric_attr->name = strdup("IB-0xfe80"); }, "fabric name"},
    {"threading DOMAIN", [](fi_info &h) { h.domain_attr->threading = FI_THREAD_DOMAIN; }, nullptr},
    {"threading COMPLETION", [](fi_info &h) { h.domain_attr->threading = FI_THREAD_COMPLETION; }, nullptr},
    {"threading garbage", [](fi_info &h) { set_raw_enum(h.domain_attr->threading, 77); }, "threading"},
    {"data progress garbage", [](fi_info &h) { set_raw_enum(h.domain_attr->data_progress, 1234); }, "data_progress value 1234"},
    {"av_type garbage", [](fi_info &h) { set_raw_enum(h.domain_attr->av_type, -5); }, "av_type value -5"},
    {"ep_type garbage", [](fi_info &h) { set_raw_enum(h.ep_attr->type, 99); }, "ep_type"},
    {"data progress MANUAL", [](fi_info &h) { h.domain_attr->data_progress = FI_PROGRESS_MANUAL; }, nullptr},
    {"data progress AUTO", [](fi_info &h) { h.domain_attr->data_progress = FI_PROGRESS_AUTO; }, nullptr},
    {"control progress AUTO", [](fi_info &h) { h.domain_attr->control_progress = FI_PROGRESS_AUTO; }, nullptr},
    {"data progress unknown", [](fi_info &h) { h.domain_attr->data_progress = static_cast<fi_progress>(77); }, "data_progress value 77"},
    {"control progress UNIFIED", [](fi_info &h) { h.domain_attr->control_progress = FI_PROGRESS_CONTROL_UNIFIED; }, nullptr},
    {"resource_mgmt DISABLED", [](fi_info &h) { h.domain_attr->resource_mgmt = FI_RM_DISABLED; }, nullptr},
    {"av_type MAP", [](fi_info &h) { h.domain_attr->av_type = FI_AV_MAP; }, nullptr},
    {"mr_key_size 8", [](fi_info &h) { h.domain_attr->mr_key_size = 8; }, nullptr},
    {"mr_key_size 16 too big", [](fi_info &h) { h.domain_attr->mr_key_size = 16; }, "mr_key_size 16"},
    {"cq_data_size 16 too big", [](fi_info &h) { h.domain_attr->cq_data_size = 16; }, "cq_data_size"},
    {"max_ep_auth_key 1", [](fi_info &h) { h.domain_attr->max_ep_auth_key = 1; }, nullptr},
    {"max_ep_auth_key too many", [](fi_info &h) { h.domain_attr->max_ep_auth_key = kMaxEpAuthKeys + 1; }, "max_ep_auth_key"},
    {"AV-level auth keys", [](fi_info &h) { h.domain_attr->auth_key_size = FI_AV_AUTH_KEY; }, nullptr},
    {"domain key of 64 bytes", [](fi_info &h) { set_key(h.domain_attr->auth_key, h.domain_attr->auth_key_size, 64); }, nullptr},
    {"domain key of 65 bytes", [](fi_info &h) { set_key(h.domain_attr->auth_key, h.domain_attr->auth_key_size, 65); }, "auth_key_size 65"},
    {"domain key size without key", [](fi_info &h) { h.domain_attr->auth_key_size = 8; }, "NULL key"},
    {"endpoint key of 1 byte", [](fi_info &h) { set_key(h.ep_attr->auth_key, h.ep_attr->auth_key_size, 1); }, nullptr},
    {"endpoint FI_AV_AUTH_KEY", [](fi_info &h) { h.ep_attr->auth_key_size = FI_AV_AUTH_KEY; }, "domain attribute value"},
    {"mr_mode BASIC|LOCAL invalid", [](fi_info &h) { h.domain_attr->mr_mode = FI_MR_BASIC | FI_MR_LOCAL; }, "legacy"},
    {"inject_size 76 fits", [](fi_info &h) { h.tx_attr->inject_size = 76; }, nullptr},
    {"inject_size 77 too big", [](fi_info &h) { h.tx_attr->inject_size = 77; }, "inject_size 77"},
    {"tx iov_limit too big", [](fi_info &h) { h.tx_attr->iov_limit = 7; }, "tx iov_limit"},
    {"rx size too big", [](fi_info &h) { h.rx_attr->size = kRxSize + 1; }, "rx size"},
    {"msg_order SAS guaranteed", [](fi_info &h) { h.tx_attr->msg_order = FI_ORDER_SAS; }, nullptr},
    {"msg_order RAW given when asked", [](fi_info &h) { h.tx_attr->msg_order = FI_ORDER_RAW; }, nullptr},
    {"msg_order FI_ORDER_DATA (deprecated) not guaranteed", [](fi_info &h) { h.tx_attr->msg_order = FI_ORDER_DATA; }, "msg_order"},
    {"commit complete unsupported", [](fi_info &h) { h.tx_attr->op_flags = FI_COMMIT_COMPLETE; }, "FI_COMMIT_COMPLETE"},
    {"ep tx_ctx_cnt 2 (a scalable endpoint's)", [](fi_info &h) { h.ep_attr->tx_ctx_cnt = 2; }, nullptr},
    {"ep tx_ctx_cnt 65 (beyond scalable endpoints' 64)", [](fi_info &h) { h.ep_attr->tx_ctx_cnt = 65; }, "tx_ctx_cnt"},
    {"shared transmit context", [](fi_info &h) { h.ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT; }, nullptr},
    {"shared receive context", [](fi_info &h) { h.ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT; }, nullptr},
    {"ep rx_ctx_cnt 64 (a scalable endpoint's)", [](fi_info &h) { h.ep_attr->rx_ctx_cnt = 64; }, nullptr},
    {"ep rx_ctx_cnt 65 (beyond scalable endpoints' 64)", [](fi_info &h) { h.ep_attr->rx_ctx_cnt = 65; }, "rx_ctx_cnt"},
    {"max_msg_size within", [](fi_info &h) { h.ep_attr->max_msg_size = 1 << 20; }, nullptr},
    {"protocol UCX", [](fi_info &h) { h.ep_attr->protocol = FI_PROTO_UCX; }, nullptr},
    {"protocol RXM not ours", [](fi_info &h) { h.ep_attr->protocol = FI_PROTO_RXM; }, "protocol"},
};

TEST(HintMatch, TableOfCases) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    ASSERT_TRUE(cand);
    for (const Case &c : kCases) {
        SCOPED_TRACE(c.what);
        InfoPtr hints(alloc_info());
        ASSERT_TRUE(hints);
        c.edit(*hints);
        MatchResult m = match_hints(*cand, hints.get(), kApi);
        InfoPtr out(m.info);
        EXPECT_EQ(m.error, 0);
        if (c.reason == nullptr) {
            EXPECT_TRUE(out) << "excluded: " << m.reason;
        } else {
            EXPECT_FALSE(out);
            EXPECT_NE(m.reason.find(c.reason), std::string::npos) << "reason was: " << m.reason;
        }
    }
}

TEST(HintMatch, SharedContextsStayInTheAnswer) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    ASSERT_TRUE(cand);
    EXPECT_GT(cand->domain_attr->max_ep_stx_ctx, 1u);
    EXPECT_GT(cand->domain_attr->max_ep_srx_ctx, 1u);
    InfoPtr hints(alloc_info());
    hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
    hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out) << m.reason;
    EXPECT_EQ(out->ep_attr->tx_ctx_cnt, FI_SHARED_CONTEXT);
    EXPECT_EQ(out->ep_attr->rx_ctx_cnt, FI_SHARED_CONTEXT);
    MatchResult plain = match_hints(*cand, nullptr, kApi);
    InfoPtr p(plain.info);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->ep_attr->tx_ctx_cnt, 1u);
    EXPECT_EQ(p->ep_attr->rx_ctx_cnt, 1u);
}

TEST(HintMatch, NullHintsMatchEverything) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    MatchResult m = match_hints(*cand, nullptr, kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->caps, FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_RMA | FI_ATOMIC |
                             FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT |
                             FI_MULTI_RECV | FI_REMOTE_CQ_DATA | FI_SOURCE | FI_SOURCE_ERR | FI_FENCE |
                             FI_LOCAL_COMM | FI_REMOTE_COMM | FI_NAMED_RX_CTX |
                             FI_AV_USER_ID | FI_SHARED_AV);
    EXPECT_EQ(out->domain_attr->caps, FI_LOCAL_COMM | FI_REMOTE_COMM | FI_AV_USER_ID | FI_SHARED_AV);
    EXPECT_EQ(out->tx_attr->msg_order, kRequestableOrder) << "without hints: every ordering";
    EXPECT_EQ(out->ep_attr->mem_tag_format, 0xAAAAAAAAAAAAAAAAULL);
    EXPECT_EQ(out->domain_attr->mr_mode, 0);
    EXPECT_STREQ(out->domain_attr->name, "eth0");
}

// An unspecified av_type is answered FI_AV_UNSPEC (either type serves), as libfabric's shm and
// tcp providers answer: fabtests reads FI_AV_TABLE as leave to assume the indices an AV hands
// out. A type asked for is echoed.
TEST(HintMatch, AnUnspecifiedAvTypeIsAnsweredUnspecified) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    InfoPtr hints(alloc_info());
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out) << m.reason;
    EXPECT_EQ(out->domain_attr->av_type, FI_AV_UNSPEC);
    hints->domain_attr->av_type = FI_AV_TABLE;
    MatchResult t = match_hints(*cand, hints.get(), kApi);
    InfoPtr table(t.info);
    ASSERT_TRUE(table) << t.reason;
    EXPECT_EQ(table->domain_attr->av_type, FI_AV_TABLE);
}

TEST(HintMatch, NegotiatedValuesFollowTheHints) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    InfoPtr hints(alloc_info());
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->av_type = FI_AV_MAP;
    hints->domain_attr->resource_mgmt = FI_RM_DISABLED;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_RAW;
    hints->addr_format = FI_ADDR_STR;
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out) << m.reason;
    EXPECT_EQ(out->domain_attr->threading, FI_THREAD_DOMAIN);
    EXPECT_EQ(out->domain_attr->av_type, FI_AV_MAP);
    EXPECT_EQ(out->domain_attr->resource_mgmt, FI_RM_DISABLED);
    EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_VIRT_ADDR | FI_MR_PROV_KEY);
    EXPECT_EQ(out->addr_format, static_cast<uint32_t>(FI_ADDR_STR));
    EXPECT_EQ(out->tx_attr->op_flags, FI_DELIVERY_COMPLETE);
    EXPECT_EQ(out->mode, 0u) << "ufi requires no mode bit, so none is reported";
    // Untouched attributes keep ufi's values.
    EXPECT_EQ(out->tx_attr->inject_size, 76u);
    EXPECT_EQ(out->domain_attr->mr_key_size, kMrKeySize);
}

TEST(HintMatch, AuthKeysAreCopiedToTheResult) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    EXPECT_GE(cand->domain_attr->max_ep_auth_key, 1u);
    InfoPtr hints(alloc_info());
    set_key(hints->ep_attr->auth_key, hints->ep_attr->auth_key_size, 16);
    hints->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out) << m.reason;
    EXPECT_EQ(out->domain_attr->auth_key_size, FI_AV_AUTH_KEY);
    EXPECT_EQ(out->domain_attr->auth_key, nullptr);
    ASSERT_EQ(out->ep_attr->auth_key_size, 16u);
    ASSERT_NE(out->ep_attr->auth_key, hints->ep_attr->auth_key);
    EXPECT_EQ(memcmp(out->ep_attr->auth_key, hints->ep_attr->auth_key, 16), 0);
}

// FI_SHARED_AV is a capability of fi_info::caps too (fi_getinfo(3)): hints that name it there,
// as fabtests' fi_rdm_shared_av does (FI_MSG | FI_SHARED_AV), match, and get it back.
TEST(HintMatch, SharedAvInInfoCaps) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    InfoPtr hints(alloc_info());
    hints->caps = FI_MSG | FI_SHARED_AV;
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out) << m.reason;
    EXPECT_NE(out->caps & FI_SHARED_AV, 0u);
    EXPECT_NE(out->domain_attr->caps & FI_SHARED_AV, 0u);
    EXPECT_EQ(out->tx_attr->caps & FI_SHARED_AV, 0u) << "a domain capability, not a transmit one";
}

// FI_RMA_EVENT is given to those who ask (it is the FI_MR_RMA_EVENT protocol's cap), with
// that mr_mode bit kept when offered.
TEST(HintMatch, RmaEventOnRequest) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    InfoPtr hints(alloc_info());
    hints->caps = FI_RMA;
    hints->domain_attr->mr_mode = FI_MR_RMA_EVENT | FI_MR_VIRT_ADDR;
    {
        MatchResult m = match_hints(*cand, hints.get(), kApi);
        InfoPtr out(m.info);
        ASSERT_TRUE(out) << m.reason;
        EXPECT_EQ(out->caps & FI_RMA_EVENT, 0u);
        EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_VIRT_ADDR) << "FI_MR_RMA_EVENT without the cap";
    }
    hints->caps = FI_RMA | FI_RMA_EVENT;
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out) << m.reason;
    EXPECT_NE(out->caps & FI_RMA_EVENT, 0u);
    EXPECT_NE(out->rx_attr->caps & FI_RMA_EVENT, 0u);
    EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_RMA_EVENT | FI_MR_VIRT_ADDR);
}

// Orderings beyond FI_ORDER_SAS are given to those who ask (they make operations wait).
TEST(HintMatch, OrderingsAsAskedFor) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    InfoPtr hints(alloc_info());
    hints->caps = FI_RMA;
    {
        MatchResult m = match_hints(*cand, hints.get(), kApi);
        InfoPtr out(m.info);
        ASSERT_TRUE(out) << m.reason;
        EXPECT_EQ(out->tx_attr->msg_order, uint64_t{FI_ORDER_SAS});
        EXPECT_EQ(out->rx_attr->msg_order, uint64_t{FI_ORDER_SAS});
    }
    hints->tx_attr->msg_order = FI_ORDER_RAW | FI_ORDER_WAW | FI_ORDER_RMA_RAW | FI_ORDER_ATOMIC_WAR;
    hints->ep_attr->max_order_raw_size = 1 << 20;
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    InfoPtr out(m.info);
    ASSERT_TRUE(out) << m.reason;
    EXPECT_EQ(out->tx_attr->msg_order, uint64_t{FI_ORDER_SAS | FI_ORDER_RAW | FI_ORDER_WAW |
                                                FI_ORDER_RMA_RAW | FI_ORDER_ATOMIC_WAR});
    EXPECT_GE(out->ep_attr->max_order_raw_size, size_t{1} << 20);
}

TEST(HintMatch, LocalOnlyDomainRefusesRemoteComm) {
    InfoPtr cand(make_provider_info(testing::shm_offer(), FI_EP_RDM, kApi));
    EXPECT_EQ(cand->caps, FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_RMA | FI_ATOMIC |
                              FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT |
                              FI_MULTI_RECV | FI_REMOTE_CQ_DATA | FI_SOURCE | FI_SOURCE_ERR | FI_FENCE |
                              FI_LOCAL_COMM | FI_AV_USER_ID | FI_SHARED_AV | FI_NAMED_RX_CTX |
                              FI_TAGGED_DIRECTED_RECV | FI_TAGGED_MULTI_RECV |
                              FI_EXACT_DIRECTED_RECV)
        << "everything offered (the 2.0 receive caps given only on request)";
    InfoPtr hints(alloc_info());
    hints->caps = FI_REMOTE_COMM;
    MatchResult m = match_hints(*cand, hints.get(), kApi);
    EXPECT_EQ(m.info, nullptr);
    EXPECT_NE(m.reason.find("FI_REMOTE_COMM"), std::string::npos) << m.reason;
}

TEST(HintMatch, ApiVersionIsReported) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, FI_VERSION(1, 17)));
    EXPECT_EQ(cand->fabric_attr->api_version, FI_VERSION(1, 17));
    EXPECT_STREQ(cand->fabric_attr->prov_name, "ufi");
    EXPECT_EQ(cand->fabric_attr->prov_version, provider_version());
}

// Traffic classes: best effort is granted (every path gives it); any other class comes back
// unset, since no transport here can apply it (docs/getinfo.md), instead of being echoed.
TEST(HintMatch, OnlyTrafficClassesUfiAppliesAreReported) {
    InfoPtr cand(make_provider_info(testing::eth0_offer(), FI_EP_RDM, kApi));
    for (const uint32_t tc : {uint32_t{FI_TC_BEST_EFFORT}, uint32_t{FI_TC_LOW_LATENCY},
                              uint32_t{FI_TC_BULK_DATA}, uint32_t{FI_TC_DSCP | 46}}) {
        InfoPtr hints(alloc_info());
        hints->domain_attr->tclass = tc;
        hints->tx_attr->tclass = tc;
        MatchResult m = match_hints(*cand, hints.get(), kApi);
        InfoPtr out(m.info);
        ASSERT_TRUE(out) << m.reason;
        const uint32_t want = tc == FI_TC_BEST_EFFORT ? tc : uint32_t{FI_TC_UNSPEC};
        EXPECT_EQ(out->domain_attr->tclass, want) << tc;
        EXPECT_EQ(out->tx_attr->tclass, want) << tc;
    }
}

}  // namespace
}  // namespace ufi::runtime::info
