// runtime/info/names: the libfabric names of enum values and flag bits.
#include "runtime/info/names.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_trigger.h>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace names = ufi::runtime::info::names;
using names::FlagSet;

namespace {

constexpr FlagSet kAllSets[] = {
    FlagSet::Caps,   FlagSet::Mode,         FlagSet::OpFlags, FlagSet::MsgOrder, FlagSet::CompOrder,
    FlagSet::MrMode, FlagSet::CqEventFlags, FlagSet::AvFlags, FlagSet::CqFlags,  FlagSet::MrAccess};

TEST(Names, FlagsJoinWithLibfabricSeparator) {
    EXPECT_EQ(names::flags(FI_MSG | FI_TAGGED, FlagSet::Caps), "FI_MSG | FI_TAGGED");
    EXPECT_EQ(names::flags(FI_MSG | FI_TAGGED, FlagSet::Caps, ", "), "FI_MSG, FI_TAGGED");
    EXPECT_EQ(names::flags(0, FlagSet::Caps), "");
    EXPECT_EQ(names::flags(FI_CONTEXT | FI_CONTEXT2, FlagSet::Mode), "FI_CONTEXT | FI_CONTEXT2");
}

TEST(Names, FlagsFollowLibfabricOrderNotBitOrder) {
    // libfabric lists FI_RMA_PMEM (bit 49) before FI_AV_USER_ID (bit 41) and FI_HMEM (47).
    EXPECT_EQ(names::flags(FI_HMEM | FI_AV_USER_ID | FI_RMA_PMEM | FI_MSG, FlagSet::Caps),
              "FI_MSG | FI_RMA_PMEM | FI_AV_USER_ID | FI_HMEM");
    // Completion flags start with FI_SEND/FI_RECV.
    EXPECT_EQ(names::flags(FI_MSG | FI_RECV | FI_REMOTE_CQ_DATA, FlagSet::CqEventFlags),
              "FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA");
}

TEST(Names, SameBitDifferentFamilies) {
    const uint64_t bit59 = 1ULL << 59;
    EXPECT_EQ(names::flags(bit59, FlagSet::Caps), "FI_DIRECTED_RECV");
    EXPECT_EQ(names::flags(bit59, FlagSet::Mode), "FI_CONTEXT");
    EXPECT_EQ(names::flags(bit59, FlagSet::OpFlags), "FI_CLAIM");
    EXPECT_EQ(names::flags(bit59, FlagSet::AvFlags), "FI_SYMMETRIC");
}

TEST(Names, UnknownBitsInHex) {
    EXPECT_EQ(names::flags(1ULL << 63, FlagSet::Caps), "0x8000000000000000");
    EXPECT_EQ(names::flags(FI_MSG | (1ULL << 63) | (1ULL << 62), FlagSet::Caps),
              "FI_MSG | 0xc000000000000000");
    // FI_MSG is not a mode bit.
    EXPECT_EQ(names::flags(FI_MSG, FlagSet::Mode), "0x2");
}

TEST(Names, MrModeIncludesLegacyValues) {
    EXPECT_EQ(names::flags(FI_MR_BASIC, FlagSet::MrMode), "FI_MR_BASIC");
    EXPECT_EQ(names::flags(FI_MR_SCALABLE, FlagSet::MrMode), "FI_MR_SCALABLE");
    EXPECT_EQ(
        names::flags(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_HMEM, FlagSet::MrMode),
        "FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_HMEM");
}

TEST(Names, CompOrderStrictCoversTheNineOrderings) {
    EXPECT_EQ(names::flags(FI_ORDER_STRICT, FlagSet::CompOrder), "FI_ORDER_STRICT");
    EXPECT_EQ(names::flags(FI_ORDER_STRICT | FI_ORDER_DATA, FlagSet::CompOrder),
              "FI_ORDER_STRICT | FI_ORDER_DATA");
    EXPECT_EQ(names::flags(FI_ORDER_SAS, FlagSet::CompOrder), "FI_ORDER_SAS");
    EXPECT_EQ(names::flags(FI_ORDER_NONE, FlagSet::CompOrder), "");
    // msg_order has no FI_ORDER_STRICT: the nine print one by one.
    EXPECT_EQ(names::flags(FI_ORDER_RAR | FI_ORDER_SAS, FlagSet::MsgOrder),
              "FI_ORDER_RAR | FI_ORDER_SAS");
}

TEST(Names, ForEachFlagReportsUncoveredBits) {
    std::string seen;
    const uint64_t rest = names::for_each_flag(FI_MSG | FI_RMA | (1ULL << 62), FlagSet::Caps,
                                               [&](std::string_view n) {
                                                   seen += n;
                                                   seen += ';';
                                               });
    EXPECT_EQ(seen, "FI_MSG;FI_RMA;");
    EXPECT_EQ(rest, 1ULL << 62);
}

TEST(Names, EveryTableHasDistinctNamesAndNoEmptyMask) {
    for (FlagSet set : kAllSets) {
        std::set<std::string_view> seen;
        ASSERT_FALSE(names::flag_names(set).empty());
        for (const names::FlagName &f : names::flag_names(set)) {
            EXPECT_NE(f.mask, 0u) << f.name;
            EXPECT_TRUE(f.name.starts_with("FI_")) << f.name;
            EXPECT_TRUE(seen.insert(f.name).second) << "duplicate " << f.name;
        }
    }
}

TEST(Names, EveryNamedBitRoundTrips) {
    // Each name printed alone is exactly its own name (no alias shadows it) -- except the
    // nine orderings under FI_ORDER_STRICT, which stand alone too.
    for (FlagSet set : kAllSets) {
        for (const names::FlagName &f : names::flag_names(set)) {
            EXPECT_EQ(names::flags(f.mask, set), std::string(f.name));
        }
    }
}

TEST(Names, Enums) {
    EXPECT_EQ(names::ep_type(FI_EP_RDM), "FI_EP_RDM");
    EXPECT_EQ(names::ep_type(FI_EP_UNSPEC), "FI_EP_UNSPEC");
    EXPECT_EQ(names::addr_format(FI_SOCKADDR_IN), "FI_SOCKADDR_IN");
    EXPECT_EQ(names::addr_format(FI_ADDR_UCX), "FI_ADDR_UCX");
    EXPECT_EQ(names::addr_format(FI_SOCKADDR_IP), "FI_SOCKADDR_IP");
    EXPECT_EQ(names::threading(FI_THREAD_DOMAIN), "FI_THREAD_DOMAIN");
    EXPECT_EQ(names::progress(FI_PROGRESS_MANUAL), "FI_PROGRESS_MANUAL");
    EXPECT_EQ(names::progress(FI_PROGRESS_CONTROL_UNIFIED), "FI_PROGRESS_CONTROL_UNIFIED");
    EXPECT_EQ(names::resource_mgmt(FI_RM_ENABLED), "FI_RM_ENABLED");
    EXPECT_EQ(names::av_type(FI_AV_TABLE), "FI_AV_TABLE");
    EXPECT_EQ(names::protocol(FI_PROTO_UCX), "FI_PROTO_UCX");
    EXPECT_EQ(names::protocol(FI_PROTO_RXM), "FI_PROTO_RXM");
    EXPECT_EQ(names::protocol(FI_PROTO_LNX), "FI_PROTO_LNX");
    EXPECT_EQ(names::hmem_iface(FI_HMEM_CUDA), "FI_HMEM_CUDA");
    EXPECT_EQ(names::op(FI_CSWAP), "FI_CSWAP");
    EXPECT_EQ(names::op(FI_DIFF), "FI_DIFF");
    EXPECT_EQ(names::op(FI_NOOP), "FI_NOOP");
    EXPECT_EQ(names::datatype(FI_UINT64), "FI_UINT64");
    EXPECT_EQ(names::datatype(FI_BFLOAT16), "FI_BFLOAT16");
    EXPECT_EQ(names::datatype(FI_VOID), "FI_VOID");
    EXPECT_EQ(names::cq_format(FI_CQ_FORMAT_TAGGED), "FI_CQ_FORMAT_TAGGED");
    EXPECT_EQ(names::wait_obj(FI_WAIT_FD), "FI_WAIT_FD");
    EXPECT_EQ(names::cq_wait_cond(FI_CQ_COND_THRESHOLD), "FI_CQ_COND_THRESHOLD");
    EXPECT_EQ(names::cntr_events(FI_CNTR_EVENTS_BYTES), "FI_CNTR_EVENTS_BYTES");
    EXPECT_EQ(names::collective_op(FI_REDUCE_SCATTER), "FI_REDUCE_SCATTER");
    EXPECT_EQ(names::log_level(FI_LOG_WARN), "warn");
    EXPECT_EQ(names::log_level(FI_LOG_DEBUG), "debug");
    EXPECT_EQ(names::log_subsys(FI_LOG_EP_CTRL), "ep_ctrl");
    EXPECT_EQ(names::log_subsys(FI_LOG_CNTR), "cntr");
    EXPECT_EQ(names::eq_event(FI_CONNREQ), "FI_CONNREQ");
    EXPECT_EQ(names::op_type(FI_OP_CNTR_ADD), "FI_OP_CNTR_ADD");
    EXPECT_EQ(names::bus_type(FI_BUS_PCI), "FI_BUS_PCI");
    EXPECT_EQ(names::bus_type(FI_BUS_UNSPEC), "FI_BUS_UNKNOWN");
    EXPECT_EQ(names::link_state(FI_LINK_UP), "FI_LINK_UP");
}

TEST(Names, UnknownEnumValues) {
    EXPECT_EQ(names::ep_type(4), "Unknown");
    EXPECT_EQ(names::ep_type(-1), "Unknown");
    EXPECT_EQ(names::addr_format(0xFFFFFFFFu), "Unknown");
    EXPECT_EQ(names::threading(99), "Unknown");
    EXPECT_EQ(names::progress(4), "Unknown");
    EXPECT_EQ(names::protocol(1000), "Unknown");
    EXPECT_EQ(names::op(FI_DIFF + 1), "Unknown");
    EXPECT_EQ(names::datatype(FI_FLOAT8_E5M2 + 1), "Unknown");
    EXPECT_EQ(names::log_level(FI_LOG_MAX), "Unknown");
    EXPECT_EQ(names::log_subsys(FI_LOG_SUBSYS_MAX), "Unknown");
    EXPECT_EQ(names::wait_obj(7), "Unknown");
    EXPECT_EQ(names::kUnknown, "Unknown");
}

}  // namespace
