// The name tables behind names.h. Flag tables list names in the order libfabric 2.x's
// fi_tostr prints them; bits that libfabric defines after 2.2 (FI_TAGGED_MULTI_RECV,
// FI_MR_XPU_DESC, ...) follow libfabric's names at the end of their table.
#include "runtime/info/names.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_trigger.h>

#include <cinttypes>
#include <cstdio>

namespace ufi::runtime::info::names {

namespace {

#define UFI_FLAG(sym)                    \
    FlagName {                           \
        static_cast<uint64_t>(sym), #sym \
    }

constexpr FlagName kCaps[] = {
    UFI_FLAG(FI_MSG),
    UFI_FLAG(FI_RMA),
    UFI_FLAG(FI_TAGGED),
    UFI_FLAG(FI_ATOMIC),
    UFI_FLAG(FI_MULTICAST),
    UFI_FLAG(FI_COLLECTIVE),
    UFI_FLAG(FI_READ),
    UFI_FLAG(FI_WRITE),
    UFI_FLAG(FI_RECV),
    UFI_FLAG(FI_SEND),
    UFI_FLAG(FI_REMOTE_READ),
    UFI_FLAG(FI_REMOTE_WRITE),
    UFI_FLAG(FI_MULTI_RECV),
    UFI_FLAG(FI_REMOTE_CQ_DATA),
    UFI_FLAG(FI_TRIGGER),
    UFI_FLAG(FI_FENCE),
    UFI_FLAG(FI_RMA_PMEM),
    UFI_FLAG(FI_SOURCE_ERR),
    UFI_FLAG(FI_LOCAL_COMM),
    UFI_FLAG(FI_REMOTE_COMM),
    UFI_FLAG(FI_SHARED_AV),
    UFI_FLAG(FI_RMA_EVENT),
    UFI_FLAG(FI_SOURCE),
    UFI_FLAG(FI_NAMED_RX_CTX),
    UFI_FLAG(FI_DIRECTED_RECV),
    UFI_FLAG(FI_AV_USER_ID),
    UFI_FLAG(FI_PEER),
    UFI_FLAG(FI_HMEM),
    // Defined after libfabric 2.2's table.
    UFI_FLAG(FI_TAGGED_DIRECTED_RECV),
    UFI_FLAG(FI_TAGGED_MULTI_RECV),
    UFI_FLAG(FI_EXACT_DIRECTED_RECV),
    UFI_FLAG(FI_XPU),
};

constexpr FlagName kMode[] = {
    UFI_FLAG(FI_CONTEXT),    UFI_FLAG(FI_MSG_PREFIX), UFI_FLAG(FI_ASYNC_IOV),
    UFI_FLAG(FI_RX_CQ_DATA), UFI_FLAG(FI_LOCAL_MR),   UFI_FLAG(FI_CONTEXT2),
};

constexpr FlagName kOpFlags[] = {
    UFI_FLAG(FI_MULTICAST),
    UFI_FLAG(FI_MULTI_RECV),
    UFI_FLAG(FI_REMOTE_CQ_DATA),
    UFI_FLAG(FI_MORE),
    UFI_FLAG(FI_PEEK),
    UFI_FLAG(FI_TRIGGER),
    UFI_FLAG(FI_FENCE),
    UFI_FLAG(FI_COMPLETION),
    UFI_FLAG(FI_INJECT),
    UFI_FLAG(FI_INJECT_COMPLETE),
    UFI_FLAG(FI_TRANSMIT_COMPLETE),
    UFI_FLAG(FI_DELIVERY_COMPLETE),
    UFI_FLAG(FI_MATCH_COMPLETE),
    UFI_FLAG(FI_AFFINITY),
    UFI_FLAG(FI_CLAIM),
    UFI_FLAG(FI_DISCARD),
    // Op flags libfabric's table leaves out.
    UFI_FLAG(FI_COMMIT_COMPLETE),
    UFI_FLAG(FI_PEER_TRANSFER),
};

#define UFI_ORDER_FLAGS                                                         \
    UFI_FLAG(FI_ORDER_RAR), UFI_FLAG(FI_ORDER_RAW), UFI_FLAG(FI_ORDER_RAS),     \
        UFI_FLAG(FI_ORDER_WAR), UFI_FLAG(FI_ORDER_WAW), UFI_FLAG(FI_ORDER_WAS), \
        UFI_FLAG(FI_ORDER_SAR), UFI_FLAG(FI_ORDER_SAW), UFI_FLAG(FI_ORDER_SAS)

constexpr FlagName kMsgOrder[] = {
    UFI_ORDER_FLAGS,
    UFI_FLAG(FI_ORDER_RMA_RAR),
    UFI_FLAG(FI_ORDER_RMA_RAW),
    UFI_FLAG(FI_ORDER_RMA_WAR),
    UFI_FLAG(FI_ORDER_RMA_WAW),
    UFI_FLAG(FI_ORDER_ATOMIC_RAR),
    UFI_FLAG(FI_ORDER_ATOMIC_RAW),
    UFI_FLAG(FI_ORDER_ATOMIC_WAR),
    UFI_FLAG(FI_ORDER_ATOMIC_WAW),
    UFI_FLAG(FI_ORDER_DATA),  // deprecated; libfabric 2.x no longer names it here
};

// comp_order: FI_ORDER_STRICT stands for all nine orderings; a partial set names them.
constexpr FlagName kCompOrder[] = {
    UFI_FLAG(FI_ORDER_STRICT),
    UFI_ORDER_FLAGS,
    UFI_FLAG(FI_ORDER_DATA),
};

#undef UFI_ORDER_FLAGS

constexpr FlagName kMrMode[] = {
    UFI_FLAG(FI_MR_BASIC),    UFI_FLAG(FI_MR_SCALABLE),   UFI_FLAG(FI_MR_LOCAL),
    UFI_FLAG(FI_MR_RAW),      UFI_FLAG(FI_MR_VIRT_ADDR),  UFI_FLAG(FI_MR_ALLOCATED),
    UFI_FLAG(FI_MR_PROV_KEY), UFI_FLAG(FI_MR_MMU_NOTIFY), UFI_FLAG(FI_MR_RMA_EVENT),
    UFI_FLAG(FI_MR_ENDPOINT), UFI_FLAG(FI_MR_HMEM),       UFI_FLAG(FI_MR_COLLECTIVE),
    UFI_FLAG(FI_MR_XPU_DESC),
};

constexpr FlagName kCqEventFlags[] = {
    UFI_FLAG(FI_SEND),
    UFI_FLAG(FI_RECV),
    UFI_FLAG(FI_RMA),
    UFI_FLAG(FI_ATOMIC),
    UFI_FLAG(FI_MSG),
    UFI_FLAG(FI_TAGGED),
    UFI_FLAG(FI_READ),
    UFI_FLAG(FI_WRITE),
    UFI_FLAG(FI_REMOTE_READ),
    UFI_FLAG(FI_REMOTE_WRITE),
    UFI_FLAG(FI_REMOTE_CQ_DATA),
    UFI_FLAG(FI_MULTI_RECV),
    UFI_FLAG(FI_MORE),
    UFI_FLAG(FI_CLAIM),
    UFI_FLAG(FI_COLLECTIVE),  // completion of a collective (not in libfabric's table)
};

constexpr FlagName kAvFlags[] = {
    UFI_FLAG(FI_EVENT),
    UFI_FLAG(FI_READ),
    UFI_FLAG(FI_SYMMETRIC),
    UFI_FLAG(FI_AV_USER_ID),
};

constexpr FlagName kCqFlags[] = {
    UFI_FLAG(FI_AFFINITY),
    UFI_FLAG(FI_PEER),
};

constexpr FlagName kMrAccess[] = {
    UFI_FLAG(FI_RECV),       UFI_FLAG(FI_SEND),        UFI_FLAG(FI_READ),
    UFI_FLAG(FI_WRITE),      UFI_FLAG(FI_REMOTE_READ), UFI_FLAG(FI_REMOTE_WRITE),
    UFI_FLAG(FI_COLLECTIVE),
};

#undef UFI_FLAG

// Enum tables: value and name; a value not listed reads as "Unknown".
#define UFI_NAME(sym)                \
    Entry {                          \
        static_cast<long>(sym), #sym \
    }

struct Entry {
    long value;
    std::string_view name;
};

template <size_t N>
std::string_view lookup(const Entry (&table)[N], long value) {
    for (const Entry &e : table) {
        if (e.value == value) return e.name;
    }
    return kUnknown;
}

constexpr Entry kEpType[] = {
    UFI_NAME(FI_EP_UNSPEC),
    UFI_NAME(FI_EP_MSG),
    UFI_NAME(FI_EP_DGRAM),
    UFI_NAME(FI_EP_RDM),
};

constexpr Entry kAddrFormat[] = {
    UFI_NAME(FI_FORMAT_UNSPEC), UFI_NAME(FI_SOCKADDR),    UFI_NAME(FI_SOCKADDR_IN),
    UFI_NAME(FI_SOCKADDR_IN6),  UFI_NAME(FI_SOCKADDR_IB), UFI_NAME(FI_ADDR_PSMX),
    UFI_NAME(FI_ADDR_GNI),      UFI_NAME(FI_ADDR_BGQ),    UFI_NAME(FI_ADDR_MLX),
    UFI_NAME(FI_ADDR_STR),      UFI_NAME(FI_ADDR_PSMX2),  UFI_NAME(FI_ADDR_IB_UD),
    UFI_NAME(FI_ADDR_EFA),      UFI_NAME(FI_ADDR_PSMX3),  UFI_NAME(FI_ADDR_OPX),
    UFI_NAME(FI_ADDR_CXI),      UFI_NAME(FI_ADDR_UCX),    UFI_NAME(FI_SOCKADDR_IP),
};

constexpr Entry kThreading[] = {
    UFI_NAME(FI_THREAD_UNSPEC), UFI_NAME(FI_THREAD_SAFE),       UFI_NAME(FI_THREAD_FID),
    UFI_NAME(FI_THREAD_DOMAIN), UFI_NAME(FI_THREAD_COMPLETION), UFI_NAME(FI_THREAD_ENDPOINT),
};

constexpr Entry kProgress[] = {
    UFI_NAME(FI_PROGRESS_UNSPEC),
    UFI_NAME(FI_PROGRESS_AUTO),
    UFI_NAME(FI_PROGRESS_MANUAL),
    UFI_NAME(FI_PROGRESS_CONTROL_UNIFIED),
};

constexpr Entry kResourceMgmt[] = {
    UFI_NAME(FI_RM_UNSPEC),
    UFI_NAME(FI_RM_DISABLED),
    UFI_NAME(FI_RM_ENABLED),
};

constexpr Entry kAvType[] = {
    UFI_NAME(FI_AV_UNSPEC),
    UFI_NAME(FI_AV_MAP),
    UFI_NAME(FI_AV_TABLE),
};

constexpr Entry kProtocol[] = {
    UFI_NAME(FI_PROTO_UNSPEC),        UFI_NAME(FI_PROTO_RDMA_CM_IB_RC),
    UFI_NAME(FI_PROTO_IWARP),         UFI_NAME(FI_PROTO_IB_UD),
    UFI_NAME(FI_PROTO_PSMX),          UFI_NAME(FI_PROTO_UDP),
    UFI_NAME(FI_PROTO_SOCK_TCP),      UFI_NAME(FI_PROTO_MXM),
    UFI_NAME(FI_PROTO_IWARP_RDM),     UFI_NAME(FI_PROTO_IB_RDM),
    UFI_NAME(FI_PROTO_GNI),           UFI_NAME(FI_PROTO_RXM),
    UFI_NAME(FI_PROTO_RXD),           UFI_NAME(FI_PROTO_MLX),
    UFI_NAME(FI_PROTO_NETWORKDIRECT), UFI_NAME(FI_PROTO_PSMX2),
    UFI_NAME(FI_PROTO_SHM),           UFI_NAME(FI_PROTO_MRAIL),
    UFI_NAME(FI_PROTO_RSTREAM),       UFI_NAME(FI_PROTO_RDMA_CM_IB_XRC),
    UFI_NAME(FI_PROTO_EFA),           UFI_NAME(FI_PROTO_PSMX3),
    UFI_NAME(FI_PROTO_RXM_TCP),       UFI_NAME(FI_PROTO_OPX),
    UFI_NAME(FI_PROTO_CXI),           UFI_NAME(FI_PROTO_XNET),
    UFI_NAME(FI_PROTO_COLL),          UFI_NAME(FI_PROTO_UCX),
    UFI_NAME(FI_PROTO_SM2),           UFI_NAME(FI_PROTO_CXI_RNR),
    UFI_NAME(FI_PROTO_LPP),           UFI_NAME(FI_PROTO_LNX),
};

constexpr Entry kHmemIface[] = {
    UFI_NAME(FI_HMEM_SYSTEM), UFI_NAME(FI_HMEM_CUDA),   UFI_NAME(FI_HMEM_ROCR),
    UFI_NAME(FI_HMEM_ZE),     UFI_NAME(FI_HMEM_NEURON), UFI_NAME(FI_HMEM_SYNAPSEAI),
};

constexpr Entry kOp[] = {
    UFI_NAME(FI_MIN),      UFI_NAME(FI_MAX),         UFI_NAME(FI_SUM),
    UFI_NAME(FI_PROD),     UFI_NAME(FI_LOR),         UFI_NAME(FI_LAND),
    UFI_NAME(FI_BOR),      UFI_NAME(FI_BAND),        UFI_NAME(FI_LXOR),
    UFI_NAME(FI_BXOR),     UFI_NAME(FI_ATOMIC_READ), UFI_NAME(FI_ATOMIC_WRITE),
    UFI_NAME(FI_CSWAP),    UFI_NAME(FI_CSWAP_NE),    UFI_NAME(FI_CSWAP_LE),
    UFI_NAME(FI_CSWAP_LT), UFI_NAME(FI_CSWAP_GE),    UFI_NAME(FI_CSWAP_GT),
    UFI_NAME(FI_MSWAP),    UFI_NAME(FI_DIFF),        UFI_NAME(FI_NOOP),
};

constexpr Entry kDatatype[] = {
    UFI_NAME(FI_INT8),          UFI_NAME(FI_UINT8),
    UFI_NAME(FI_INT16),         UFI_NAME(FI_UINT16),
    UFI_NAME(FI_INT32),         UFI_NAME(FI_UINT32),
    UFI_NAME(FI_INT64),         UFI_NAME(FI_UINT64),
    UFI_NAME(FI_FLOAT),         UFI_NAME(FI_DOUBLE),
    UFI_NAME(FI_FLOAT_COMPLEX), UFI_NAME(FI_DOUBLE_COMPLEX),
    UFI_NAME(FI_LONG_DOUBLE),   UFI_NAME(FI_LONG_DOUBLE_COMPLEX),
    UFI_NAME(FI_INT128),        UFI_NAME(FI_UINT128),
    UFI_NAME(FI_FLOAT16),       UFI_NAME(FI_BFLOAT16),
    UFI_NAME(FI_FLOAT8_E4M3),   UFI_NAME(FI_FLOAT8_E5M2),
    UFI_NAME(FI_VOID),
};

constexpr Entry kCqFormat[] = {
    UFI_NAME(FI_CQ_FORMAT_UNSPEC), UFI_NAME(FI_CQ_FORMAT_CONTEXT), UFI_NAME(FI_CQ_FORMAT_MSG),
    UFI_NAME(FI_CQ_FORMAT_DATA),   UFI_NAME(FI_CQ_FORMAT_TAGGED),
};

constexpr Entry kWaitObj[] = {
    UFI_NAME(FI_WAIT_NONE),   UFI_NAME(FI_WAIT_UNSPEC),     UFI_NAME(FI_WAIT_SET),
    UFI_NAME(FI_WAIT_FD),     UFI_NAME(FI_WAIT_MUTEX_COND), UFI_NAME(FI_WAIT_YIELD),
    UFI_NAME(FI_WAIT_POLLFD),
};

constexpr Entry kCqWaitCond[] = {
    UFI_NAME(FI_CQ_COND_NONE),
    UFI_NAME(FI_CQ_COND_THRESHOLD),
};

constexpr Entry kCntrEvents[] = {
    UFI_NAME(FI_CNTR_EVENTS_COMP),
    UFI_NAME(FI_CNTR_EVENTS_BYTES),
};

constexpr Entry kCollectiveOp[] = {
    UFI_NAME(FI_BARRIER),   UFI_NAME(FI_BROADCAST), UFI_NAME(FI_ALLTOALL),
    UFI_NAME(FI_ALLREDUCE), UFI_NAME(FI_ALLGATHER), UFI_NAME(FI_REDUCE_SCATTER),
    UFI_NAME(FI_REDUCE),    UFI_NAME(FI_SCATTER),   UFI_NAME(FI_GATHER),
};

// libfabric's log tables are lower case (its log lines print them).
constexpr Entry kLogLevel[] = {
    {FI_LOG_WARN, "warn"},
    {FI_LOG_TRACE, "trace"},
    {FI_LOG_INFO, "info"},
    {FI_LOG_DEBUG, "debug"},
};

constexpr Entry kLogSubsys[] = {
    {FI_LOG_CORE, "core"},       {FI_LOG_FABRIC, "fabric"},   {FI_LOG_DOMAIN, "domain"},
    {FI_LOG_EP_CTRL, "ep_ctrl"}, {FI_LOG_EP_DATA, "ep_data"}, {FI_LOG_AV, "av"},
    {FI_LOG_CQ, "cq"},           {FI_LOG_EQ, "eq"},           {FI_LOG_MR, "mr"},
    {FI_LOG_CNTR, "cntr"},
};

constexpr Entry kEqEvent[] = {
    UFI_NAME(FI_NOTIFY),        UFI_NAME(FI_CONNREQ),     UFI_NAME(FI_CONNECTED),
    UFI_NAME(FI_SHUTDOWN),      UFI_NAME(FI_MR_COMPLETE), UFI_NAME(FI_AV_COMPLETE),
    UFI_NAME(FI_JOIN_COMPLETE),
};

constexpr Entry kOpType[] = {
    UFI_NAME(FI_OP_RECV),     UFI_NAME(FI_OP_SEND),         UFI_NAME(FI_OP_TRECV),
    UFI_NAME(FI_OP_TSEND),    UFI_NAME(FI_OP_READ),         UFI_NAME(FI_OP_WRITE),
    UFI_NAME(FI_OP_ATOMIC),   UFI_NAME(FI_OP_FETCH_ATOMIC), UFI_NAME(FI_OP_COMPARE_ATOMIC),
    UFI_NAME(FI_OP_CNTR_SET), UFI_NAME(FI_OP_CNTR_ADD),
};

// FI_BUS_UNKNOWN and FI_BUS_UNSPEC share 0; libfabric prints FI_BUS_UNKNOWN.
constexpr Entry kBusType[] = {
    UFI_NAME(FI_BUS_UNKNOWN),
    UFI_NAME(FI_BUS_PCI),
};

constexpr Entry kLinkState[] = {
    UFI_NAME(FI_LINK_UNKNOWN),
    UFI_NAME(FI_LINK_DOWN),
    UFI_NAME(FI_LINK_UP),
};

#undef UFI_NAME

}  // namespace

std::span<const FlagName> flag_names(FlagSet set) {
    switch (set) {
        case FlagSet::Caps:
            return kCaps;
        case FlagSet::Mode:
            return kMode;
        case FlagSet::OpFlags:
            return kOpFlags;
        case FlagSet::MsgOrder:
            return kMsgOrder;
        case FlagSet::CompOrder:
            return kCompOrder;
        case FlagSet::MrMode:
            return kMrMode;
        case FlagSet::CqEventFlags:
            return kCqEventFlags;
        case FlagSet::AvFlags:
            return kAvFlags;
        case FlagSet::CqFlags:
            return kCqFlags;
        case FlagSet::MrAccess:
            return kMrAccess;
    }
    return {};
}

std::string flags(uint64_t bits, FlagSet set, std::string_view separator) {
    std::string out;
    auto add = [&](std::string_view name) {
        if (!out.empty()) out += separator;
        out += name;
    };
    const uint64_t unknown = for_each_flag(bits, set, add);
    if (unknown != 0) {
        char hex[2 + 16 + 1];
        std::snprintf(hex, sizeof(hex), "0x%" PRIx64, unknown);
        add(hex);
    }
    return out;
}

std::string flags(uint64_t bits, FlagSet set) {
    return flags(bits, set, " | ");
}

std::string_view ep_type(int value) {
    return lookup(kEpType, value);
}
std::string_view addr_format(uint32_t value) {
    return lookup(kAddrFormat, value);
}
std::string_view threading(int value) {
    return lookup(kThreading, value);
}
std::string_view progress(int value) {
    return lookup(kProgress, value);
}
std::string_view resource_mgmt(int value) {
    return lookup(kResourceMgmt, value);
}
std::string_view av_type(int value) {
    return lookup(kAvType, value);
}
std::string_view protocol(uint32_t value) {
    return lookup(kProtocol, value);
}
std::string_view hmem_iface(int value) {
    return lookup(kHmemIface, value);
}
std::string_view op(int value) {
    return lookup(kOp, value);
}
std::string_view datatype(int value) {
    return lookup(kDatatype, value);
}
std::string_view cq_format(int value) {
    return lookup(kCqFormat, value);
}
std::string_view wait_obj(int value) {
    return lookup(kWaitObj, value);
}
std::string_view cq_wait_cond(int value) {
    return lookup(kCqWaitCond, value);
}
std::string_view cntr_events(int value) {
    return lookup(kCntrEvents, value);
}
std::string_view collective_op(int value) {
    return lookup(kCollectiveOp, value);
}
std::string_view log_level(int value) {
    return lookup(kLogLevel, value);
}
std::string_view log_subsys(int value) {
    return lookup(kLogSubsys, value);
}
std::string_view eq_event(int value) {
    return lookup(kEqEvent, value);
}
std::string_view op_type(int value) {
    return lookup(kOpType, value);
}
std::string_view bus_type(int value) {
    return lookup(kBusType, value);
}
std::string_view link_state(int value) {
    return lookup(kLinkState, value);
}

}  // namespace ufi::runtime::info::names
