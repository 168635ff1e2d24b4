// A shared transmit context (fi_stx_context, fi_endpoint(3) "Shared Contexts"). The page makes
// its use "mostly opaque" to the application: operations are still posted to the endpoints,
// and completions go to each endpoint's own CQ. In ufi each endpoint keeps its own transports
// and send queues (its lanes are UCT endpoints on its own worker), so binding one to a shared
// transmit context changes nothing on the data path and saves no resources; the context is
// the object the page asks for, with its attributes and its binding rules (an endpoint binds
// one, the context closes only after every endpoint bound to it).
#pragma once

#include "runtime/object_close.h"

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <atomic>

namespace ufi::runtime {
struct Domain;
}

namespace ufi::runtime::ep {

class SharedTx : public fid_stx {
  public:
    using CStruct = fid_stx;

    // fi_stx_context. `attr` (may be NULL) is copied. -FI_ENOMEM.
    static int open(Domain *domain, const fi_tx_attr *attr, void *context, fi_ops *fid_ops,
                    fi_ops_ep *ep_ops, SharedTx **out) noexcept;
    // fi_close through close_object(): kBusy while endpoints are bound.
    Shut shut() noexcept;

    void attach() noexcept { bound_.fetch_add(1, std::memory_order_relaxed); }
    void detach() noexcept { bound_.fetch_sub(1, std::memory_order_relaxed); }
    Domain *domain() const noexcept { return domain_; }
    const fi_tx_attr &attr() const noexcept { return attr_; }

  private:
    SharedTx() = default;
    Domain *domain_ = nullptr;
    fi_tx_attr attr_{};
    std::atomic<int> bound_{0};
};

// The live SharedTx behind a fid of class FI_CLASS_STX_CTX, or nullptr.
SharedTx *shared_tx_of(fid_t fid) noexcept;

}  // namespace ufi::runtime::ep
