#include "runtime/ep/options.h"

#include "base/log/log.h"
#include "runtime/info/capabilities.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <cstring>

namespace ufi::runtime::ep {

namespace {

using log::Subsys;

// ufi has no CUDA support yet (the hmem module arrives later): FI_OPT_CUDA_API_PERMITTED may
// be set to false (ufi makes no CUDA call, trivially), and true answers -FI_EINVAL as the
// page says for an endpoint without the CUDA library or device.
constexpr bool kCudaAvailable = false;

int get_size(size_t value, void *optval, size_t *optlen) {
    if (*optlen < sizeof(size_t)) {
        *optlen = sizeof(size_t);
        return -FI_ETOOSMALL;
    }
    std::memcpy(optval, &value, sizeof value);
    *optlen = sizeof(size_t);
    return 0;
}

int get_int(int value, void *optval, size_t *optlen) {
    if (*optlen < sizeof(int)) {
        *optlen = sizeof(int);
        return -FI_ETOOSMALL;
    }
    std::memcpy(optval, &value, sizeof value);
    *optlen = sizeof(int);
    return 0;
}

// Boolean options are `bool` in libfabric's header; some providers document them as int.
// Both sizes are accepted; getopt answers in the caller's size.
int get_bool(bool value, void *optval, size_t *optlen) {
    if (*optlen >= sizeof(int)) return get_int(value ? 1 : 0, optval, optlen);
    if (*optlen < sizeof(bool)) {
        *optlen = sizeof(bool);
        return -FI_ETOOSMALL;
    }
    std::memcpy(optval, &value, sizeof value);
    *optlen = sizeof(bool);
    return 0;
}

bool read_bool(const void *optval, size_t optlen, bool &out) {
    if (optlen == sizeof(bool)) {
        unsigned char b;
        std::memcpy(&b, optval, 1);  // read as a byte: a C caller may store any value in a bool
        out = b != 0;
        return true;
    }
    if (optlen == sizeof(int)) {
        int v;
        std::memcpy(&v, optval, sizeof v);
        out = v != 0;
        return true;
    }
    return false;
}

size_t *size_field(EndpointOptions &o, int optname, size_t &limit) {
    switch (optname) {
        case FI_OPT_MAX_MSG_SIZE:
            limit = o.max_msg_limit;
            return &o.max_msg_size;
        case FI_OPT_MAX_TAGGED_SIZE:
            limit = o.max_msg_limit;
            return &o.max_tagged_size;
        case FI_OPT_MAX_RMA_SIZE:
            limit = o.max_msg_limit;
            return &o.max_rma_size;
        case FI_OPT_MAX_ATOMIC_SIZE:
            limit = o.max_msg_limit;
            return &o.max_atomic_size;
        case FI_OPT_INJECT_MSG_SIZE:
            limit = o.inject_limit;
            return &o.inject_msg_size;
        case FI_OPT_INJECT_TAGGED_SIZE:
            limit = o.inject_limit;
            return &o.inject_tagged_size;
        case FI_OPT_INJECT_RMA_SIZE:
            limit = o.inject_limit;
            return &o.inject_rma_size;
        case FI_OPT_INJECT_ATOMIC_SIZE:
            limit = o.inject_limit;
            return &o.inject_atomic_size;
        case FI_OPT_TX_SIZE:
            limit = o.tx_size_limit;
            return &o.tx_size;
        case FI_OPT_RX_SIZE:
            limit = o.rx_size_limit;
            return &o.rx_size;
        default:
            return nullptr;
    }
}

}  // namespace

const char *option_name(int optname) noexcept {
    switch (optname) {
        case FI_OPT_MIN_MULTI_RECV:
            return "FI_OPT_MIN_MULTI_RECV";
        case FI_OPT_CM_DATA_SIZE:
            return "FI_OPT_CM_DATA_SIZE";
        case FI_OPT_BUFFERED_MIN:
            return "FI_OPT_BUFFERED_MIN";
        case FI_OPT_BUFFERED_LIMIT:
            return "FI_OPT_BUFFERED_LIMIT";
        case FI_OPT_SEND_BUF_SIZE:
            return "FI_OPT_SEND_BUF_SIZE";
        case FI_OPT_RECV_BUF_SIZE:
            return "FI_OPT_RECV_BUF_SIZE";
        case FI_OPT_TX_SIZE:
            return "FI_OPT_TX_SIZE";
        case FI_OPT_RX_SIZE:
            return "FI_OPT_RX_SIZE";
        case FI_OPT_FI_HMEM_P2P:
            return "FI_OPT_FI_HMEM_P2P";
        case FI_OPT_XPU_TRIGGER:
            return "FI_OPT_XPU_TRIGGER";
        case FI_OPT_CUDA_API_PERMITTED:
            return "FI_OPT_CUDA_API_PERMITTED";
        case FI_OPT_SHARED_MEMORY_PERMITTED:
            return "FI_OPT_SHARED_MEMORY_PERMITTED";
        case FI_OPT_MAX_MSG_SIZE:
            return "FI_OPT_MAX_MSG_SIZE";
        case FI_OPT_MAX_TAGGED_SIZE:
            return "FI_OPT_MAX_TAGGED_SIZE";
        case FI_OPT_MAX_RMA_SIZE:
            return "FI_OPT_MAX_RMA_SIZE";
        case FI_OPT_MAX_ATOMIC_SIZE:
            return "FI_OPT_MAX_ATOMIC_SIZE";
        case FI_OPT_INJECT_MSG_SIZE:
            return "FI_OPT_INJECT_MSG_SIZE";
        case FI_OPT_INJECT_TAGGED_SIZE:
            return "FI_OPT_INJECT_TAGGED_SIZE";
        case FI_OPT_INJECT_RMA_SIZE:
            return "FI_OPT_INJECT_RMA_SIZE";
        case FI_OPT_INJECT_ATOMIC_SIZE:
            return "FI_OPT_INJECT_ATOMIC_SIZE";
        case FI_OPT_FIREWALL_ADDR:
            return "FI_OPT_FIREWALL_ADDR";
        default:
            return "an unknown option";
    }
}

EndpointOptions EndpointOptions::defaults_for(const fi_info &info) noexcept {
    EndpointOptions o;
    o.max_msg_limit = info.ep_attr != nullptr ? info.ep_attr->max_msg_size : 0;
    o.inject_limit = info.tx_attr != nullptr ? info.tx_attr->inject_size : 0;
    o.tx_size_limit = info.tx_attr != nullptr ? info.tx_attr->size : 0;
    o.rx_size_limit = info.rx_attr != nullptr ? info.rx_attr->size : 0;
    o.min_multi_recv = o.inject_limit;
    o.hmem_p2p = FI_HMEM_P2P_ENABLED;
    if (info.ep_attr != nullptr && info.ep_attr->type == FI_EP_MSG) o.cm_data_size = info::kCmDataSize;
    o.max_msg_size = o.max_tagged_size = o.max_rma_size = o.max_atomic_size = o.max_msg_limit;
    o.inject_msg_size = o.inject_tagged_size = o.inject_rma_size = o.inject_atomic_size =
        o.inject_limit;
    o.tx_size = o.tx_size_limit;
    o.rx_size = o.rx_size_limit;
    return o;
}

int get_option(const EndpointOptions &o, int level, int optname, void *optval,
               size_t *optlen) noexcept {
    if (level != FI_OPT_ENDPOINT) return -FI_ENOPROTOOPT;
    switch (optname) {
        case FI_OPT_MIN_MULTI_RECV:
            return get_size(o.min_multi_recv, optval, optlen);
        case FI_OPT_FI_HMEM_P2P:
            return get_int(o.hmem_p2p, optval, optlen);
        case FI_OPT_FIREWALL_ADDR:
            return get_bool(o.firewall_addr, optval, optlen);
        case FI_OPT_CM_DATA_SIZE:  // (connected endpoints only)
            if (o.cm_data_size == 0) return -FI_ENOPROTOOPT;
            return get_size(o.cm_data_size, optval, optlen);
        default:
            break;
    }
    size_t limit = 0;
    if (const size_t *field = size_field(const_cast<EndpointOptions &>(o), optname, limit)) {
        return get_size(*field, optval, optlen);
    }
    // FI_OPT_CUDA_API_PERMITTED and FI_OPT_SHARED_MEMORY_PERMITTED are set-only (the page);
    // the rest ufi does not have.
    return -FI_ENOPROTOOPT;
}

int set_option(EndpointOptions &o, bool enabled, int level, int optname, const void *optval,
               size_t optlen) noexcept {
    if (level != FI_OPT_ENDPOINT) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt: level {} is not FI_OPT_ENDPOINT", level);
        return -FI_ENOPROTOOPT;
    }
    const char *name = option_name(optname);
    switch (optname) {
        case FI_OPT_MIN_MULTI_RECV: {
            // Applies to receives posted afterwards, so it may change after fi_enable too.
            if (optlen != sizeof(size_t)) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt({}): optlen {} is not sizeof(size_t)", name,
                             optlen);
                return -FI_EINVAL;
            }
            std::memcpy(&o.min_multi_recv, optval, sizeof(size_t));
            return 0;
        }
        case FI_OPT_CM_DATA_SIZE:
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "fi_setopt({}): read-only (and an option of FI_EP_MSG endpoints only)", name);
            return -FI_ENOPROTOOPT;
        case FI_OPT_FI_HMEM_P2P:
        case FI_OPT_CUDA_API_PERMITTED:
        case FI_OPT_SHARED_MEMORY_PERMITTED:
        case FI_OPT_FIREWALL_ADDR:
            break;
        default: {
            size_t limit = 0;
            if (size_field(o, optname, limit) == nullptr) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt: {} ({}) is not supported by ufi", name,
                             optname);
                return -FI_ENOPROTOOPT;
            }
            break;
        }
    }
    if (enabled) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_setopt({}): the endpoint is enabled; options are set before fi_enable",
                     name);
        return -FI_EOPBADSTATE;
    }
    switch (optname) {
        case FI_OPT_FI_HMEM_P2P: {
            int v;
            if (optlen != sizeof(int)) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt({}): optlen {} is not sizeof(int)", name,
                             optlen);
                return -FI_EINVAL;
            }
            std::memcpy(&v, optval, sizeof v);
            switch (v) {
                case FI_HMEM_P2P_ENABLED:
                case FI_HMEM_P2P_PREFERRED:
                case FI_HMEM_P2P_DISABLED:
                    o.hmem_p2p = v;
                    return 0;
                case FI_HMEM_P2P_REQUIRED:
                    UFI_LOG_WARN(Subsys::EpCtrl,
                                 "fi_setopt({}): FI_HMEM_P2P_REQUIRED: ufi has no peer-to-peer "
                                 "device transfers",
                                 name);
                    return -FI_EOPNOTSUPP;
                default:
                    UFI_LOG_WARN(Subsys::EpCtrl,
                                 "fi_setopt({}): value {} is not an FI_HMEM_P2P_* mode", name, v);
                    return -FI_EINVAL;
            }
        }
        case FI_OPT_CUDA_API_PERMITTED:
        case FI_OPT_SHARED_MEMORY_PERMITTED:
        case FI_OPT_FIREWALL_ADDR: {
            bool v = false;
            if (optval == nullptr || !read_bool(optval, optlen, v)) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt({}): optlen {} is not sizeof(bool)", name,
                             optlen);
                return -FI_EINVAL;
            }
            if (optname == FI_OPT_CUDA_API_PERMITTED) {
                if (v && !kCudaAvailable) {
                    UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt({}): CUDA is not available to ufi",
                                 name);
                    return -FI_EINVAL;
                }
                o.cuda_api_permitted = v;
            } else if (optname == FI_OPT_SHARED_MEMORY_PERMITTED) {
                o.shared_memory_permitted = v;
            } else {
                o.firewall_addr = v;
            }
            return 0;
        }
        default: {
            size_t limit = 0;
            size_t *field = size_field(o, optname, limit);
            if (optlen != sizeof(size_t)) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_setopt({}): optlen {} is not sizeof(size_t)", name,
                             optlen);
                return -FI_EINVAL;
            }
            size_t v;
            std::memcpy(&v, optval, sizeof v);
            const bool is_queue = optname == FI_OPT_TX_SIZE || optname == FI_OPT_RX_SIZE;
            if (v > limit || (is_queue && v == 0)) {
                UFI_LOG_WARN(Subsys::EpCtrl,
                             "fi_setopt({}): {} is outside {}..{} (the endpoint's fi_info)", name,
                             v, is_queue ? 1 : 0, limit);
                return -FI_EINVAL;
            }
            *field = v;
            return 0;
        }
    }
}

}  // namespace ufi::runtime::ep
