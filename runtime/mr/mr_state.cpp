#include "runtime/mr/mr_state.h"

#include "base/config/config.h"
#include "runtime/domain/domain.h"
#include "base/log/log.h"
#include "transports/resource.h"

#include <atomic>
#include <new>

namespace ufi::runtime::mr {

namespace {

void destroy_state(void *state) {
    delete static_cast<MrState *>(state);
}

// Every open MR holds a key in the table (register_mr), and only open MRs do.
size_t open_mrs(void *state) {
    return static_cast<MrState *>(state)->keys.size();
}

}  // namespace

unsigned registration_flags(const MrModePolicy &policy) noexcept {
    return transports::registration_flags(!policy.allocated);
}

MrState::MrState(Domain &d)
    : domain(d),
      policy(mr_mode_policy(d.mr_mode)),
      mds(d.memory_domains()),
      keys(policy.provider_keys, d.locking.tables),
      mapped(d.locking.tables) {
    cache_settings = read_cache_settings(config::registry(), d.locking.tables);
    if (!cache_settings.note.empty()) UFI_LOG_INFO(log::Subsys::Mr, "{}", cache_settings.note);
    cache = std::make_unique<transports::RegCache>(mds, cache_settings.config,
                                                   registration_flags(policy));
    if (cache_settings.config.enabled && !cache->caching()) {
        UFI_LOG_INFO(
            log::Subsys::Mr,
            "registration cache off: UCX's ucm memory events are not available (UCX_MEM_EVENTS?)");
    }
    std::string registering;
    for (std::size_t i : mds.registering())
        registering += (registering.empty() ? "" : ",") + mds[i].md_name;
    UFI_LOG_DEBUG(log::Subsys::Mr, "domain {}: registering with [{}], cache {}", d.offer.name,
                  registering, cache->caching() ? "on" : "off");
}

MrState::~MrState() {
    const std::size_t left = mapped.size();
    if (left != 0) {
        UFI_LOG_INFO(log::Subsys::Mr, "domain {} closed with {} raw keys still mapped: released",
                     domain.offer.name, left);
    }
}

MrState *mr_state_of(Domain *domain) noexcept {
    if (domain == nullptr) return nullptr;
    // Made once per domain, then read on every peer's RMA access: no lock once it exists.
    std::atomic_ref<void *> state(domain->mr_state.state);
    if (void *made = state.load(std::memory_order_acquire)) return static_cast<MrState *>(made);
    std::lock_guard<std::mutex> lock(domain->mutex);
    if (state.load(std::memory_order_relaxed) == nullptr) {
        try {
            auto *fresh = new MrState(*domain);
            domain->mr_state.destroy = destroy_state;
            domain->mr_state.open_objects = open_mrs;
            state.store(fresh, std::memory_order_release);
        } catch (const std::exception &) {
            return nullptr;
        }
    }
    return static_cast<MrState *>(state.load(std::memory_order_relaxed));
}

}  // namespace ufi::runtime::mr
