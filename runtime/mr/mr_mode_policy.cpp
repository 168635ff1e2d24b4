#include "runtime/mr/mr_mode_policy.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

namespace ufi::runtime::mr {

MrModePolicy mr_mode_policy(int mr_mode) noexcept {
    auto bits = static_cast<std::uint64_t>(static_cast<unsigned>(mr_mode));
    if (bits == FI_MR_BASIC) {
        bits = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    } else if (bits == FI_MR_SCALABLE || bits == FI_MR_UNSPEC) {
        bits = 0;
    }
    bits &= ~static_cast<std::uint64_t>(FI_MR_BASIC | FI_MR_SCALABLE);
    MrModePolicy p;
    p.bits = bits;
    p.local_desc_required = bits & FI_MR_LOCAL;
    p.raw_keys = bits & FI_MR_RAW;
    p.virt_addr = bits & FI_MR_VIRT_ADDR;
    p.allocated = bits & FI_MR_ALLOCATED;
    p.provider_keys = bits & FI_MR_PROV_KEY;
    p.mmu_notify = bits & FI_MR_MMU_NOTIFY;
    p.rma_event = bits & FI_MR_RMA_EVENT;
    p.endpoint = bits & FI_MR_ENDPOINT;
    p.hmem = bits & FI_MR_HMEM;
    p.collective = bits & FI_MR_COLLECTIVE;
    return p;
}

}  // namespace ufi::runtime::mr
