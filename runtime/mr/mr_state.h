// The MR family's per-domain state (Domain::mr_state), created at the domain's first MR call:
// the registration cache over the domain's UCT memory domains, the key
// table (target side) and the table of mapped raw keys (initiator side). Destroyed with the
// domain, after every MR is closed; mapped keys left behind are released then.
#pragma once

#include "runtime/mr/cache_config.h"
#include "runtime/mr/key_table.h"
#include "runtime/mr/mapped_keys.h"
#include "runtime/mr/mr_mode_policy.h"
#include "runtime/mr/mr_pool.h"
#include "transports/memory/memory_domains.h"
#include "transports/memory/reg_cache.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ufi::runtime {
struct Domain;
}

namespace ufi::runtime::mr {

struct MrState {
    explicit MrState(Domain &domain);
    ~MrState();

    Domain &domain;
    MrModePolicy policy;            // from Domain::mr_mode when the state was created
    const transports::MemoryDomains &mds;  // the domain's (Domain::memory_domains)
    CacheSettings cache_settings;
    std::unique_ptr<transports::RegCache> cache;
    KeyTable keys;
    MappedKeys mapped;
    MrPool pool;  // the MRs' storage
    // Set for good by the first fi_mr_bind of a counter to one of the domain's MRs: until
    // then a peer's access has no MR counter to find, and the target skips the key lookup.
    std::atomic<bool> counters_bound{false};
};

// The domain's MR state, created on first use (thread-safe); nullptr when it cannot be
// created (out of memory).
MrState *mr_state_of(Domain *domain) noexcept;

// The flags ufi registers with (transports::registration_flags): every access right (ufi enforces the MR's
// own access bits itself, so one registration serves every MR on the range), non-blocking
// (on-demand paging where the MD has it) unless FI_MR_ALLOCATED promises mapped memory.
unsigned registration_flags(const MrModePolicy &policy) noexcept;

}  // namespace ufi::runtime::mr
