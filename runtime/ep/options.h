// The endpoint options of fi_setopt/fi_getopt (level FI_OPT_ENDPOINT): their values, defaults
// (from the endpoint's fi_info) and limits. fi_enable hands the sizes to the data path, which
// enforces them (DataPathConfig); FI_OPT_SHARED_MEMORY_PERMITTED decides which transports the
// endpoint opens.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>

namespace ufi::runtime::ep {

struct EndpointOptions {
    // Defaults and upper limits, from the endpoint's fi_info.
    size_t max_msg_limit = 0;  // ep_attr->max_msg_size
    size_t inject_limit = 0;   // tx_attr->inject_size
    size_t tx_size_limit = 0;  // tx_attr->size
    size_t rx_size_limit = 0;  // rx_attr->size

    size_t min_multi_recv = 0;            // FI_OPT_MIN_MULTI_RECV
    int hmem_p2p = 0;                     // FI_OPT_FI_HMEM_P2P (FI_HMEM_P2P_ENABLED)
    bool cuda_api_permitted = true;       // FI_OPT_CUDA_API_PERMITTED
    bool shared_memory_permitted = true;  // FI_OPT_SHARED_MEMORY_PERMITTED
    bool firewall_addr = false;           // FI_OPT_FIREWALL_ADDR
    size_t cm_data_size = 0;              // FI_OPT_CM_DATA_SIZE (read-only; FI_EP_MSG only)
    size_t max_msg_size = 0;              // FI_OPT_MAX_MSG_SIZE
    size_t max_tagged_size = 0;           // FI_OPT_MAX_TAGGED_SIZE
    size_t max_rma_size = 0;              // FI_OPT_MAX_RMA_SIZE
    size_t max_atomic_size = 0;           // FI_OPT_MAX_ATOMIC_SIZE
    size_t inject_msg_size = 0;           // FI_OPT_INJECT_MSG_SIZE
    size_t inject_tagged_size = 0;        // FI_OPT_INJECT_TAGGED_SIZE
    size_t inject_rma_size = 0;           // FI_OPT_INJECT_RMA_SIZE
    size_t inject_atomic_size = 0;        // FI_OPT_INJECT_ATOMIC_SIZE
    size_t tx_size = 0;                   // FI_OPT_TX_SIZE
    size_t rx_size = 0;                   // FI_OPT_RX_SIZE

    // Defaults for an endpoint opened with `info`: every size at its limit, min_multi_recv
    // the inject size (a multi-receive buffer is released once an inject-sized message no
    // longer fits), both "permitted" options true.
    static EndpointOptions defaults_for(const fi_info &info) noexcept;
};

// fi_getopt: 0, -FI_ENOPROTOOPT (unknown level or option, or a set-only option),
// -FI_ETOOSMALL with *optlen set to the size needed.
int get_option(const EndpointOptions &opts, int level, int optname, void *optval,
               size_t *optlen) noexcept;

// fi_setopt. `enabled`: the endpoint is enabled, after which only FI_OPT_MIN_MULTI_RECV may
// change (-FI_EOPBADSTATE for the others). -FI_EINVAL for a wrong optlen or a value out of
// range, -FI_EOPNOTSUPP for FI_HMEM_P2P_REQUIRED, -FI_ENOPROTOOPT for unknown options and
// read-only ones. Each error logs one WARN line naming the option.
int set_option(EndpointOptions &opts, bool enabled, int level, int optname, const void *optval,
               size_t optlen) noexcept;

// "FI_OPT_MAX_MSG_SIZE", ...; "option <n>" for others.
const char *option_name(int optname) noexcept;

}  // namespace ufi::runtime::ep
