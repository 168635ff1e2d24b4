// fi_ep_alias: another handle on an endpoint that differs from it only by its default
// operation flags (fi_endpoint(3)). It shares everything else (the data path, bindings,
// names, options): the data calls made through it run on its endpoint with its flags. The
// endpoint cannot be closed while an alias of it is open (-FI_EBUSY).
#pragma once

#include "runtime/ep/endpoint_face.h"
#include "runtime/object_close.h"

#include <rdma/fabric.h>

#include <cstdint>

namespace ufi::runtime::ep {

class Endpoint;

class EndpointAlias : public EndpointFace {
  public:
    // Use Endpoint::make_alias().
    EndpointAlias(Endpoint &parent, void *context, fi_ops *fid_ops) noexcept;
    EndpointAlias(const EndpointAlias &) = delete;
    EndpointAlias &operator=(const EndpointAlias &) = delete;

    // fi_close, through close_object(): leaves its endpoint's list (kFree).
    Shut shut() noexcept;

    // Its endpoint enabled: its data tables become the ones the endpoint installed.
    void copy_tables(const fid_ep &from) noexcept;

  private:
    friend class Endpoint;
    void set_flags(uint64_t tx, uint64_t rx) noexcept {
        tx_op_flags_.store(tx, std::memory_order_relaxed);
        rx_op_flags_.store(rx, std::memory_order_relaxed);
    }
};

}  // namespace ufi::runtime::ep
