// What each mr_mode bit makes ufi do, as a function of the negotiated Domain::mr_mode (so
// every combination can be tested, including bits fi_getinfo never keeps today). The legacy
// values are expanded here: FI_MR_BASIC = VIRT_ADDR | ALLOCATED | PROV_KEY, FI_MR_SCALABLE
// (and FI_MR_UNSPEC) = no bit.
#pragma once

#include <cstdint>

namespace ufi::runtime::mr {

struct MrModePolicy {
    std::uint64_t bits = 0;  // the expanded mr_mode bits

    // FI_MR_LOCAL: data transfers need a valid desc; without it, NULL desc is allowed and
    // ufi registers through its cache.
    bool local_desc_required = false;
    // FI_MR_RAW: fi_mr_key() answers FI_KEY_NOTAVAIL; peers map the raw key.
    bool raw_keys = false;
    // FI_MR_VIRT_ADDR: peers address the region by virtual address; else by offset from 0.
    bool virt_addr = false;
    // FI_MR_ALLOCATED: registered ranges must be mapped at registration (checked).
    bool allocated = false;
    // FI_MR_PROV_KEY: ufi chooses keys; requested_key is ignored.
    bool provider_keys = false;
    // FI_MR_MMU_NOTIFY: fi_mr_refresh disables and re-enables the region's registration.
    bool mmu_notify = false;
    // FI_MR_RMA_EVENT: MRs registered with FI_RMA_EVENT start disabled (fi_mr_enable).
    bool rma_event = false;
    // FI_MR_ENDPOINT: every MR starts disabled, is bound to one endpoint, then enabled.
    bool endpoint = false;
    // FI_MR_HMEM: device buffers must be registered (and carry a desc).
    bool hmem = false;
    // FI_MR_COLLECTIVE: buffers used in collectives are registered with FI_COLLECTIVE.
    bool collective = false;
};

MrModePolicy mr_mode_policy(int mr_mode) noexcept;

}  // namespace ufi::runtime::mr
