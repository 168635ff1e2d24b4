// Names of libfabric's enum values and flag bits, exactly as libfabric's fi_tostr prints
// them ("FI_MSG", "FI_EP_RDM", ...). One table per type, shared by fi_tostr (api/tostr.cpp),
// getinfo's "why nothing matched" explanations and ufi_info.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ufi::runtime::info::names {

// Which family of flag bits a 64-bit value holds (the same bit means different things in
// different families).
enum class FlagSet {
    Caps,          // fi_info/tx/rx caps: FI_MSG, FI_RMA, ..., FI_LOCAL_COMM, ...
    Mode,          // FI_CONTEXT, FI_MSG_PREFIX, ...
    OpFlags,       // FI_COMPLETION, FI_INJECT, ..., FI_TRANSMIT_COMPLETE, ...
    MsgOrder,      // FI_ORDER_RAR, ...
    CompOrder,     // FI_ORDER_STRICT, FI_ORDER_DATA (comp_order)
    MrMode,        // FI_MR_LOCAL, ..., legacy FI_MR_BASIC / FI_MR_SCALABLE
    CqEventFlags,  // completion entry flags (FI_SEND, FI_RECV, FI_REMOTE_CQ_DATA, ...)
    AvFlags,       // fi_av_attr.flags: FI_EVENT, FI_READ, FI_SYMMETRIC, FI_AV_USER_ID
    CqFlags,       // fi_cq_attr.flags: FI_AFFINITY, FI_PEER
    MrAccess       // fi_mr_attr.access: FI_RECV, FI_SEND, ..., FI_COLLECTIVE
};

// One named value of a family: printed when all of `mask`'s bits are set and at least one
// of them is not covered by a name printed before it (so FI_ORDER_STRICT hides the nine
// orderings it stands for).
struct FlagName {
    uint64_t mask;
    std::string_view name;
};

// The family's names in the order libfabric's fi_tostr prints them.
std::span<const FlagName> flag_names(FlagSet set);

// Calls emit(std::string_view name) for each name of `set` present in `bits`, in libfabric's
// order, and returns the bits no name covered. Allocates nothing.
template <typename Emit>
uint64_t for_each_flag(uint64_t bits, FlagSet set, Emit &&emit) {
    uint64_t covered = 0;
    for (const FlagName &f : flag_names(set)) {
        if (f.mask == 0 || (bits & f.mask) != f.mask || (f.mask & ~covered) == 0) continue;
        covered |= f.mask;
        emit(f.name);
    }
    return bits & ~covered;
}

// "FI_MSG | FI_TAGGED" (libfabric's separator); unknown bits as 0x... hex; "" for 0.
std::string flags(uint64_t bits, FlagSet set);
// The same with another separator (fi_tostr's lists use ", ").
std::string flags(uint64_t bits, FlagSet set, std::string_view separator);

// Enum values: the libfabric name, or "Unknown" for a value without one.
std::string_view ep_type(int value);
std::string_view addr_format(uint32_t value);
std::string_view threading(int value);
std::string_view progress(int value);
std::string_view resource_mgmt(int value);
std::string_view av_type(int value);
std::string_view protocol(uint32_t value);
std::string_view hmem_iface(int value);
std::string_view op(int value);        // enum fi_op (FI_MIN ... FI_DIFF, FI_NOOP)
std::string_view datatype(int value);  // enum fi_datatype
std::string_view cq_format(int value);
std::string_view wait_obj(int value);
std::string_view cq_wait_cond(int value);
std::string_view cntr_events(int value);
std::string_view collective_op(int value);
std::string_view log_level(int value);   // libfabric prints these lower case: "warn"
std::string_view log_subsys(int value);  // "core", "ep_ctrl", ...
std::string_view eq_event(int value);    // FI_NOTIFY ... FI_JOIN_COMPLETE
std::string_view op_type(int value);     // enum fi_op_type (FI_OP_RECV ...)
std::string_view bus_type(int value);    // enum fi_bus_type (FI_BUS_UNKNOWN, FI_BUS_PCI)
std::string_view link_state(int value);  // enum fi_link_state

// The text every lookup above returns for a value it does not know.
inline constexpr std::string_view kUnknown = "Unknown";

}  // namespace ufi::runtime::info::names
