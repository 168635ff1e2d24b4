// Capability bits rendered as names (ufi_info -d prints these).
#include "transports/flag_names.h"

#include <uct/api/uct.h>

#include <gtest/gtest.h>

namespace ufi::transports {
namespace {

using Strings = std::vector<std::string>;

TEST(FlagNames, IfaceCaps) {
    EXPECT_EQ(iface_cap_flag_names(UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_PUT_ZCOPY |
                                   UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                                   UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE | UCT_IFACE_FLAG_EP_CHECK |
                                   UCT_IFACE_FLAG_EP_KEEPALIVE),
              (Strings{"am_short", "put_zcopy", "peer failure", "ep_check", "connect_to_iface",
                       "keepalive"}));
    EXPECT_TRUE(iface_cap_flag_names(0).empty());
    EXPECT_EQ(iface_cap_flag_names(UCS_BIT(60)), Strings{"bit60"});
}

TEST(FlagNames, EventsMdAtomicsMemTypes) {
    EXPECT_EQ(iface_event_flag_names(UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_FD),
              (Strings{"recv", "event_fd"}));
    EXPECT_EQ(md_flag_names(UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_RKEY_PTR),
              (Strings{"alloc", "rkey_ptr"}));
    EXPECT_EQ(atomic_op_names(UCS_BIT(UCT_ATOMIC_OP_ADD) | UCS_BIT(UCT_ATOMIC_OP_CSWAP)),
              (Strings{"add", "cswap"}));
    EXPECT_EQ(memory_type_names(UCS_BIT(UCS_MEMORY_TYPE_HOST) | UCS_BIT(UCS_MEMORY_TYPE_CUDA)),
              (Strings{"host", "cuda"}));
    EXPECT_EQ(component_flag_names(UCT_COMPONENT_FLAG_CM), Strings{"cm"});
}

TEST(FlagNames, DeviceTypeAndJoin) {
    EXPECT_EQ(to_string(DeviceType::Network), "network");
    EXPECT_EQ(to_string(DeviceType::SharedMemory), "intra-node");
    EXPECT_EQ(to_string(DeviceType::Loopback), "loopback");
    EXPECT_EQ(join_names({"a", "b", "c"}), "a, b, c");
    EXPECT_EQ(join_names({"a", "b"}, "|"), "a|b");
    EXPECT_EQ(join_names({}), "");
}

}  // namespace
}  // namespace ufi::transports
