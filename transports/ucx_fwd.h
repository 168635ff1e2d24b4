// UCX's handle types, declared as UCX declares them (uct/api/uct_def.h,
// ucs/async/async_fwd.h) without including UCX: the headers of transports/ that the layers
// above include name these opaque handles in their private members and in functions only
// transports/ calls, and stay free of UCX's headers (scripts/check-layers.sh checks it), so
// runtime/ compiles without them. (Repeating a typedef of the same type is allowed.)
#pragma once

#include <cstdint>

extern "C" {
typedef struct uct_component *uct_component_h;
typedef struct uct_iface *uct_iface_h;
typedef struct uct_iface_config uct_iface_config_t;
typedef struct uct_md_config uct_md_config_t;
typedef struct uct_cm_config uct_cm_config_t;
typedef struct uct_ep *uct_ep_h;
typedef void *uct_mem_h;
typedef uintptr_t uct_rkey_t;
typedef struct uct_md *uct_md_h;
typedef struct uct_iface_params uct_iface_params_t;
typedef struct uct_worker *uct_worker_h;
typedef struct uct_device_addr uct_device_addr_t;
typedef struct uct_iface_addr uct_iface_addr_t;
typedef struct uct_cm uct_cm_t;
typedef uct_cm_t *uct_cm_h;
typedef struct ucs_async_context ucs_async_context_t;
typedef struct uct_listener *uct_listener_h;
typedef void *uct_conn_request_h;
}

namespace ufi::transports {
// UCT's uct_rkey_bundle_t, field by field (a struct cannot be declared without its fields;
// rma_lane.cpp and unpacked_rkeys.cpp check the layout where they hand it to UCT).
struct UctRkeyBundle {
    uct_rkey_t rkey = 0;
    void *handle = nullptr;
    void *type = nullptr;
};
}  // namespace ufi::transports
