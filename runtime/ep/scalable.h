// A scalable endpoint (fi_scalable_ep, fi_endpoint(3) "SCALABLE ENDPOINTS"): a name and an AV
// shared by up to 64 transmit and 64 receive contexts. Each context is an endpoint of its own
// (runtime/ep/endpoint.h: its own UCT worker, data path and CQs, so threads on different
// contexts share no lock), opened by fi_tx_context / fi_rx_context and handed out under class
// FI_CLASS_TX_CTX / FI_CLASS_RX_CTX. A transmit context only sends (FI_SEND, FI_READ,
// FI_WRITE), a receive context only receives and is the target of RMA and atomics.
//
// The scalable endpoint's name (transports/scalable_name.h) is its receive contexts' names
// then its transmit contexts' names; fi_enable builds it once every context is open and
// enabled. A peer reaches receive context j at fi_rx_addr(fi_addr, j, rx_ctx_bits); a message
// from one of the transmit contexts reports the scalable endpoint's AV entry as its source.
// Receive context 0 takes the info's source address (the host and port a client reaching the
// scalable endpoint by fi_getinfo's node and service connects to).
#pragma once

#include "runtime/ep/endpoint.h"
#include "runtime/object_close.h"

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ufi::runtime::ep {

// The api layer's tables: the scalable endpoint's own (its data tables all -FI_ENOSYS: a
// scalable endpoint carries no traffic itself) and its contexts'.
struct ScalableOps {
    fi_ops *fid = nullptr;
    fi_ops_ep *ep = nullptr;
    fi_ops_cm *cm = nullptr;
    fi_ops_msg *msg = nullptr;
    fi_ops_rma *rma = nullptr;
    fi_ops_tagged *tagged = nullptr;
    fi_ops_atomic *atomic = nullptr;
    EndpointOps context;           // an endpoint's tables, with `fid` replaced by:
    fi_ops *tx_context_fid = nullptr;
    fi_ops *rx_context_fid = nullptr;
};

class ScalableEndpoint : public fid_ep {
  public:
    using CStruct = fid_ep;

    // fi_scalable_ep. -FI_EINVAL for an info that does not describe an FI_EP_RDM or
    // FI_EP_DGRAM endpoint of this domain, context counts of 0 to 64 (0 means 1; shared
    // contexts are not offered here), or a domain whose addresses are strings or sockets.
    static int open(Domain *domain, const fi_info *info, void *context, const ScalableOps &ops,
                    ScalableEndpoint **out) noexcept;
    ~ScalableEndpoint();

    // fi_scalable_ep_bind: an AV of this domain, flags 0 (its contexts take it at their
    // fi_enable). -FI_EINVAL for anything else or a second AV, -FI_EDOMAIN, -FI_EBADFLAGS,
    // -FI_EOPBADSTATE once enabled.
    int bind(fid_t bfid, uint64_t flags) noexcept;
    // fi_enable: every context open and enabled (-FI_EOPBADSTATE otherwise, naming the first
    // missing one), an AV bound (-FI_ENOAV); builds the name.
    int enable() noexcept;
    // fi_getname: the scalable name. -FI_EOPBADSTATE before fi_enable; -FI_ETOOSMALL.
    int getname(void *addr, size_t *addrlen) noexcept;

    // fi_tx_context / fi_rx_context. `attr` (may be NULL): caps (a subset of the endpoint's,
    // else -FI_EINVAL), op_flags and size are taken, and the context's attributes written
    // back. -FI_EINVAL for an index out of range, -FI_EBUSY for one already open.
    int open_context(bool rx, int index, void *attr, void *context, fid_ep **out) noexcept;
    // A context's fi_enable: the scalable endpoint's AV is bound to it first.
    int enable_context(Endpoint *ctx) noexcept;
    // A context's fi_close (its endpoint is closed and freed by the caller when this returns 0).
    int close_context(Endpoint *ctx) noexcept;

    // Manual progress: a context whose progress call found nothing calls this now and then,
    // and each transmit context with sends not yet complete whose lock is free gets one
    // progress call. A program may wait on a receive context's CQ for a peer's answer to a
    // send it made on a transmit context (fabtests' fi_scalable_ep does, for the first
    // message, whose handshake needs the transmit context progressed); contexts that their
    // own threads drive are left alone (their lock is taken), so they share no lock.
    void help_progress(Endpoint *self) noexcept;

    // fi_close through close_object(): kBusy while contexts are open.
    Shut shut() noexcept;

    Domain *domain() const noexcept { return domain_; }
    size_t tx_count() const noexcept { return tx_.size(); }
    size_t rx_count() const noexcept { return rx_.size(); }

  private:
    ScalableEndpoint() = default;
    // The info a context is opened from: 0, -FI_EINVAL (attr asks for more than the
    // endpoint has) or -FI_ENOMEM.
    int context_info(bool rx, int index, const void *attr, const char *call, fi_info **out) const;

    Domain *domain_ = nullptr;
    fi_info *info_ = nullptr;  // the application's, copied (contexts are negotiated from it)
    ScalableOps ops_;
    std::mutex mutex_;
    av::Av *av_ = nullptr;
    std::vector<Endpoint *> tx_;  // open contexts by index (nullptr: not open)
    std::vector<Endpoint *> rx_;
    bool enabled_ = false;
    std::vector<uint8_t> name_;
    // help_progress reads tx_ without the mutex: from fi_enable on, until a context closes
    // (close_context sets closing_ and waits for helpers inside to leave).
    std::atomic<bool> helpable_{false};
    std::atomic<int> helpers_{0};
};

// The live ScalableEndpoint behind a fid of class FI_CLASS_SEP, or nullptr.
ScalableEndpoint *scalable_of(fid_t fid) noexcept;

}  // namespace ufi::runtime::ep
