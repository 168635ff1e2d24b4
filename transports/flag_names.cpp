#include "transports/flag_names.h"

#include <ucs/memory/memory_type.h>
#include <uct/api/uct.h>

#include <bit>
#include <utility>

namespace ufi::transports {

namespace {

struct FlagName {
    std::uint64_t bit;
    const char *name;
};

std::vector<std::string> names_of(std::uint64_t flags, std::initializer_list<FlagName> table) {
    std::vector<std::string> out;
    std::uint64_t known = 0;
    for (const FlagName &f : table) {
        known |= f.bit;
        if ((flags & f.bit) != 0) {
            out.emplace_back(f.name);
        }
    }
    std::uint64_t unknown = flags & ~known;
    while (unknown != 0) {
        int bit = std::countr_zero(unknown);
        out.push_back("bit" + std::to_string(bit));
        unknown &= unknown - 1;
    }
    return out;
}

}  // namespace

std::vector<std::string> iface_cap_flag_names(std::uint64_t flags) {
    return names_of(flags, {
                               {UCT_IFACE_FLAG_AM_SHORT, "am_short"},
                               {UCT_IFACE_FLAG_AM_BCOPY, "am_bcopy"},
                               {UCT_IFACE_FLAG_AM_ZCOPY, "am_zcopy"},
                               {UCT_IFACE_FLAG_PENDING, "pending"},
                               {UCT_IFACE_FLAG_PUT_SHORT, "put_short"},
                               {UCT_IFACE_FLAG_PUT_BCOPY, "put_bcopy"},
                               {UCT_IFACE_FLAG_PUT_ZCOPY, "put_zcopy"},
                               {UCT_IFACE_FLAG_GET_SHORT, "get_short"},
                               {UCT_IFACE_FLAG_GET_BCOPY, "get_bcopy"},
                               {UCT_IFACE_FLAG_GET_ZCOPY, "get_zcopy"},
                               {UCT_IFACE_FLAG_ATOMIC_CPU, "atomic_cpu"},
                               {UCT_IFACE_FLAG_ATOMIC_DEVICE, "atomic_device"},
                               {UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF, "short_buf"},
                               {UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF, "bcopy_buf"},
                               {UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF, "zcopy_buf"},
                               {UCT_IFACE_FLAG_ERRHANDLE_AM_ID, "remote_id"},
                               {UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM, "remote_access"},
                               {UCT_IFACE_FLAG_ERRHANDLE_BCOPY_LEN, "bcopy_len"},
                               {UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE, "peer failure"},
                               {UCT_IFACE_FLAG_EP_CHECK, "ep_check"},
                               {UCT_IFACE_FLAG_CONNECT_TO_IFACE, "connect_to_iface"},
                               {UCT_IFACE_FLAG_CONNECT_TO_EP, "connect_to_ep"},
                               {UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR, "connect_to_sockaddr"},
                               {UCT_IFACE_FLAG_AM_DUP, "am_dup"},
                               {UCT_IFACE_FLAG_CB_SYNC, "cb_sync"},
                               {UCT_IFACE_FLAG_CB_ASYNC, "cb_async"},
                               {UCT_IFACE_FLAG_EP_KEEPALIVE, "keepalive"},
                               {UCT_IFACE_FLAG_TAG_EAGER_SHORT, "tag_eager_short"},
                               {UCT_IFACE_FLAG_TAG_EAGER_BCOPY, "tag_eager_bcopy"},
                               {UCT_IFACE_FLAG_TAG_EAGER_ZCOPY, "tag_eager_zcopy"},
                               {UCT_IFACE_FLAG_TAG_RNDV_ZCOPY, "tag_rndv_zcopy"},
                           });
}

std::vector<std::string> iface_event_flag_names(std::uint64_t flags) {
    return names_of(flags, {
                               {UCT_IFACE_FLAG_EVENT_SEND_COMP, "send_comp"},
                               {UCT_IFACE_FLAG_EVENT_RECV, "recv"},
                               {UCT_IFACE_FLAG_EVENT_RECV_SIG, "recv_sig"},
                               {UCT_IFACE_FLAG_EVENT_FD, "event_fd"},
                               {UCT_IFACE_FLAG_EVENT_ASYNC_CB, "async_cb"},
                           });
}

std::vector<std::string> md_flag_names(std::uint64_t flags) {
    return names_of(flags, {
                               {UCT_MD_FLAG_ALLOC, "alloc"},
                               {UCT_MD_FLAG_REG, "reg"},
                               {UCT_MD_FLAG_NEED_MEMH, "need_memh"},
                               {UCT_MD_FLAG_NEED_RKEY, "need_rkey"},
                               {UCT_MD_FLAG_ADVISE, "advise"},
                               {UCT_MD_FLAG_FIXED, "fixed"},
                               {UCT_MD_FLAG_RKEY_PTR, "rkey_ptr"},
                               {UCT_MD_FLAG_SOCKADDR, "sockaddr"},
                               {UCT_MD_FLAG_INVALIDATE, "invalidate"},
                           });
}

std::vector<std::string> atomic_op_names(std::uint64_t op_bits) {
    return names_of(op_bits, {
                                 {UCS_BIT(UCT_ATOMIC_OP_ADD), "add"},
                                 {UCS_BIT(UCT_ATOMIC_OP_AND), "and"},
                                 {UCS_BIT(UCT_ATOMIC_OP_OR), "or"},
                                 {UCS_BIT(UCT_ATOMIC_OP_XOR), "xor"},
                                 {UCS_BIT(UCT_ATOMIC_OP_SWAP), "swap"},
                                 {UCS_BIT(UCT_ATOMIC_OP_CSWAP), "cswap"},
                             });
}

std::vector<std::string> memory_type_names(std::uint64_t mem_type_bits) {
    // Fixed table rather than ucs_memory_type_names, so the spelling is ours.
    return names_of(mem_type_bits, {
                                       {UCS_BIT(UCS_MEMORY_TYPE_HOST), "host"},
                                       {UCS_BIT(UCS_MEMORY_TYPE_CUDA), "cuda"},
                                       {UCS_BIT(UCS_MEMORY_TYPE_CUDA_MANAGED), "cuda-managed"},
                                       {UCS_BIT(UCS_MEMORY_TYPE_ROCM), "rocm"},
                                       {UCS_BIT(UCS_MEMORY_TYPE_ROCM_MANAGED), "rocm-managed"},
                                   });
}

std::vector<std::string> component_flag_names(std::uint64_t flags) {
    return names_of(flags, {{UCT_COMPONENT_FLAG_CM, "cm"}});
}

std::string_view to_string(DeviceType type) {
    switch (type) {
        case DeviceType::Network:
            return "network";
        case DeviceType::SharedMemory:
            return "intra-node";
        case DeviceType::Accelerator:
            return "accelerator";
        case DeviceType::Loopback:
            return "loopback";
        case DeviceType::Other:
            break;
    }
    return "other";
}

std::string join_names(const std::vector<std::string> &names, std::string_view sep) {
    std::string out;
    for (const std::string &n : names) {
        if (!out.empty()) {
            out += sep;
        }
        out += n;
    }
    return out;
}

}  // namespace ufi::transports
