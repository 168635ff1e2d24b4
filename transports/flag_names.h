// Readable names for UCT capability bits and device types, so that ufi_info -d
// and log lines can print what a resource offers the way ucx_info -d does.
#pragma once

#include "transports/resource.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ufi::transports {

// UCT_IFACE_FLAG_* (cap.flags): "am_short", "put_zcopy", "pending", "atomic_cpu",
// "connect_to_iface", "peer failure", "ep_check", "keepalive", "cb_sync", ...
// Unknown bits come out as "bit<N>".
std::vector<std::string> iface_cap_flag_names(std::uint64_t flags);

// UCT_IFACE_FLAG_EVENT_* (cap.event_flags): "send_comp", "recv", "recv_sig",
// "event_fd", "async_cb".
std::vector<std::string> iface_event_flag_names(std::uint64_t flags);

// UCT_MD_FLAG_*: "alloc", "reg", "need_memh", "need_rkey", "advise", "fixed",
// "rkey_ptr", "sockaddr", "invalidate".
std::vector<std::string> md_flag_names(std::uint64_t flags);

// UCS_BIT(UCT_ATOMIC_OP_*): "add", "and", "or", "xor", "swap", "cswap".
std::vector<std::string> atomic_op_names(std::uint64_t op_bits);

// UCS_BIT(ucs_memory_type_t): "host", "cuda", "cuda-managed", "rocm", "rocm-managed".
std::vector<std::string> memory_type_names(std::uint64_t mem_type_bits);

// UCT_COMPONENT_FLAG_*: "cm".
std::vector<std::string> component_flag_names(std::uint64_t flags);

// "network", "intra-node", "accelerator", "loopback", "other" (ucx_info's words).
std::string_view to_string(DeviceType type);

// Joins names with a separator: join_names(iface_cap_flag_names(f), ", ").
std::string join_names(const std::vector<std::string> &names, std::string_view sep = ", ");

}  // namespace ufi::transports
