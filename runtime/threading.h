// The domain's threading policy: which objects lock, decided once at fi_domain from
// fi_domain_attr.threading and data_progress, and read by every object the domain opens (one
// policy, so no two objects can disagree about what the application serializes).
//
// fi_domain(3), per model, and what ufi locks:
//   FI_THREAD_SAFE (and UNSPEC): nothing is serialized by the application: everything locks.
//   FI_THREAD_FID: calls on one object are serialized, but "one thread may be initiating a data
//     transfer on an endpoint, while another thread reads from a completion queue associated
//     with the endpoint". Reading a CQ or counter progresses the endpoints bound to it (manual
//     progress), so an endpoint is driven from several threads: endpoints lock; a CQ or counter
//     bound to endpoints driven by different threads is written from both: they lock too.
//   FI_THREAD_ENDPOINT: as FID, and the transmit and receive sides of one endpoint are
//     serialized too; a CQ read still runs beside the endpoint's own calls: the same locks.
//   FI_THREAD_COMPLETION: everything associated through a shared completion structure (an
//     endpoint, its CQs and counters, the endpoints sharing them) is serialized: endpoints,
//     CQs and counters need no lock. Two such groups may run at once, and both use the
//     domain's AV and MR tables: those lock.
//   FI_THREAD_DOMAIN: everything of the domain is serialized: nothing locks.
// FI_PROGRESS_AUTO adds a progress thread per endpoint, which drives the endpoint and writes
// its CQs and counters beside the application: everything locks, whatever the model.
//
// The data path reads the endpoint decision once, at fi_enable, to install the locked or the
// lock-free data-transfer ops tables (api/ep_data.h): no branch per operation.
#pragma once

#include <rdma/fi_domain.h>

namespace ufi::runtime {

struct ThreadingPolicy {
    bool endpoints = true;    // an endpoint's worker and data path (its ops tables, progress)
    bool completions = true;  // CQs and counters (their rings, bound sources)
    bool tables = true;       // the domain's shared tables: the AV, MR keys, the reg cache

    static constexpr ThreadingPolicy for_model(int threading, bool auto_progress) noexcept {
        if (auto_progress) return {true, true, true};
        switch (threading) {
            case FI_THREAD_DOMAIN:
                return {false, false, false};
            case FI_THREAD_COMPLETION:
                return {false, false, true};
            case FI_THREAD_FID:
            case FI_THREAD_ENDPOINT:
            case FI_THREAD_SAFE:
            default:  // FI_THREAD_UNSPEC and anything newer: the safe choice
                return {true, true, true};
        }
    }
    constexpr bool operator==(const ThreadingPolicy &) const = default;
};

}  // namespace ufi::runtime
