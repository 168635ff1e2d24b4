// What one of ufi's fid_ep handles is: an endpoint (runtime/ep/endpoint.h) or an alias of one
// (fi_ep_alias, runtime/ep/alias.h). Both carry the endpoint behind them and their own default
// operation flags (fi_control FI_GETOPSFLAG / FI_SETOPSFLAG; what a call without a flags
// argument uses), which is all an alias changes: the data calls read them from the handle they
// were called through, so an alias costs them nothing and an endpoint one load.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <cstdint>

namespace ufi::runtime::ep {

class Endpoint;

// Operation flags FI_SETOPSFLAG and fi_ep_alias accept (fi_endpoint "OPERATION FLAGS";
// FI_MATCH_COMPLETE is fi_cq's completion level of tagged receives).
inline constexpr uint64_t kOpFlags = FI_COMMIT_COMPLETE | FI_COMPLETION | FI_DELIVERY_COMPLETE |
                                     FI_INJECT | FI_INJECT_COMPLETE | FI_MULTICAST | FI_MULTI_RECV |
                                     FI_TRANSMIT_COMPLETE | FI_MATCH_COMPLETE;

struct EndpointFace : fid_ep {
    using CStruct = fid_ep;

    Endpoint *endpoint = nullptr;  // the endpoint behind the handle (itself for an endpoint)

    uint64_t tx_op_flags() const noexcept { return tx_op_flags_.load(std::memory_order_relaxed); }
    uint64_t rx_op_flags() const noexcept { return rx_op_flags_.load(std::memory_order_relaxed); }

    // fi_control FI_GETOPSFLAG / FI_SETOPSFLAG: FI_TRANSMIT or FI_RECV, not both (-FI_EINVAL);
    // -FI_EBADFLAGS for bits that are not operation flags.
    int get_ops_flags(uint64_t *flags) noexcept;
    int set_ops_flags(uint64_t flags) noexcept;

  protected:
    // Written by fi_control (or fi_ep_alias) on any thread, read by every data call without a
    // lock.
    std::atomic<uint64_t> tx_op_flags_{0};
    std::atomic<uint64_t> rx_op_flags_{0};
};

// The face behind `fid` when it is one of ufi's endpoints or aliases, else nullptr.
EndpointFace *face_of(fid_t fid) noexcept;

}  // namespace ufi::runtime::ep
