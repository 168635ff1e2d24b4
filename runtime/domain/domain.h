// The resource domain: one selection of UCT transports (a domain offer from fi_getinfo),
// the negotiated attributes (threading, mr_mode, auth-key mode, AV type) and the parent of
// every AV, MR, CQ, counter and endpoint opened on it. fi_close returns -FI_EBUSY while any
// of them is open.
#pragma once

#include "runtime/fabric/fabric.h"
#include "runtime/info/domain_offer.h"
#include "runtime/threading.h"
#include "transports/memory/memory_domains.h"

#include <rdma/fi_domain.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ufi::transports {
struct Resource;
}

namespace ufi::runtime {

// State a subsystem keeps per domain (the MR key table and registration cache, ...),
// created and owned by that subsystem; destroyed with the domain.
struct DomainExtension {
    void *state = nullptr;
    void (*destroy)(void *state) = nullptr;
    // Objects of the subsystem still open that keep fi_close(domain) at -FI_EBUSY without a
    // count of their own in open_children (MRs: their key table counts them, so a
    // registration-cache hit touches no domain-wide counter); nullptr: none.
    size_t (*open_objects)(void *state) = nullptr;
    ~DomainExtension() {
        if (destroy != nullptr) destroy(state);
    }
};

struct Domain : fid_domain {
    using CStruct = fid_domain;

    Fabric *fabric = nullptr;
    uint32_t api_version = 0;
    fi_info *info = nullptr;            // the negotiated fi_info (owned copy)
    info::DomainOffer offer;            // its transports and limits
    std::vector<const transports::Resource *> resources;  // discovery's, in selection order

    // Negotiated attributes, read by the subsystems.
    int threading = FI_THREAD_SAFE;
    // FI_PROGRESS_AUTO: each enabled endpoint has a progress thread.
    bool auto_progress = false;
    // What locks, from the two above (runtime/threading.h); every object reads this.
    ThreadingPolicy locking;
    int mr_mode = 0;
    int av_type = FI_AV_TABLE;
    uint64_t caps = 0;
    bool av_auth_keys = false;          // domain auth_key_size == FI_AV_AUTH_KEY
    std::vector<uint8_t> auth_key;      // the classic per-domain key (may be empty)

    // The UCT memory domains of the domain's transports, each opened once (on first use) and
    // shared by registrations (MRs, the registration cache) and endpoint interfaces: memory
    // registered on one open md is only usable by interfaces opened on the same one.
    // Declared before the extensions, so it outlives the state that registered with it.
    const transports::MemoryDomains &memory_domains();

    std::atomic<int> open_children{0};  // AVs, CQs, counters, endpoints (MRs: mr_state)
    fid_eq *bound_eq = nullptr;         // fi_domain_bind (deprecated)
    uint64_t bound_eq_flags = 0;        // FI_REG_MR: registrations post FI_MR_COMPLETE there
    // bound_eq when it was bound with FI_REG_MR, else nullptr: what every registration reads
    // (set once under `mutex`, read without it).
    std::atomic<fid_eq *> reg_mr_eq{nullptr};
    std::mutex mutex;                   // control-path state of this object

    transports::MemoryDomains mds_;
    std::once_flag mds_once_;

    // Per-subsystem state (see DomainExtension).
    DomainExtension mr_state;
    DomainExtension av_state;
    DomainExtension ep_state;

    void add_child() { open_children.fetch_add(1, std::memory_order_relaxed); }
    void remove_child() { open_children.fetch_sub(1, std::memory_order_relaxed); }
};

// Opens a domain for an fi_info that fi_getinfo returned (its domain_attr->name picks the
// offer). -FI_EINVAL for NULL or inconsistent arguments, -FI_ENODATA for a domain name ufi
// does not offer, -FI_EINVAL for auth keys of a wrong size.
int open_domain(Fabric *fabric, const fi_info *info, uint64_t flags, void *context,
                fi_ops *ops, fi_ops_domain *domain_ops, fi_ops_mr *mr_ops, Domain **out) noexcept;

// -FI_EBUSY while children are open.
int close_domain(Domain *domain) noexcept;

}  // namespace ufi::runtime
