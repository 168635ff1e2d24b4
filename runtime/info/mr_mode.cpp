#include "runtime/info/mr_mode.h"

#include "runtime/info/names.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

namespace ufi::runtime::info {

// Per-bit policy when the application offers a bit:
//  FI_MR_LOCAL       cleared: ufi registers what it needs itself (desc may be NULL).
//  FI_MR_RAW         cleared: keys are 8 bytes; raw keys still work on every MR.
//  FI_MR_VIRT_ADDR   kept: RMA addresses are then target virtual addresses, which the
//                    transports (cma, tcp put, shm mappings) take directly - no base add.
//  FI_MR_ALLOCATED   kept: registrations may then pin/register eagerly with the UCT MDs
//                    instead of tracking unbacked ranges; costs the application nothing it
//                    did not agree to.
//  FI_MR_PROV_KEY    kept: provider keys index a dense per-domain table (no hash lookup on
//                    the target).
//  FI_MR_MMU_NOTIFY  cleared: UCX's ucm memory events keep registrations current.
//  FI_MR_RMA_EVENT   kept only with the FI_RMA_EVENT capability (it is that protocol).
//  FI_MR_ENDPOINT    cleared: MRs are domain-wide; binding to endpoints gains nothing.
//  FI_MR_HMEM        cleared until FI_HMEM is offered (it is that capability's protocol).
//  FI_MR_COLLECTIVE  cleared: collectives need no special registration.
//  FI_MR_XPU_DESC    cleared: no XPU-initiated transfers.
uint64_t mr_mode_kept_if_offered(uint64_t caps) {
    uint64_t kept = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if (caps & FI_RMA_EVENT) kept |= FI_MR_RMA_EVENT;
    return kept;
}

MrModeOutcome negotiate_mr_mode(std::optional<int> hint, uint32_t api_version, uint64_t caps) {
    MrModeOutcome out;
    const bool legacy_api = FI_VERSION_LT(api_version, FI_VERSION(1, 5));

    if (!hint) {
        // No domain hints: report what ufi requires of an application that offered nothing.
        out.ok = true;
        out.mr_mode = legacy_api ? FI_MR_SCALABLE : 0;
        return out;
    }

    const int requested = *hint;
    const auto req = static_cast<uint64_t>(static_cast<unsigned>(requested));
    // FI_MR_BASIC (1) and FI_MR_SCALABLE (2) are values, not bits, and stand alone.
    if (req == FI_MR_BASIC || req == FI_MR_SCALABLE) {
        // Kept on output (the page: FI_MR_BASIC is not cleared). Basic means
        // VIRT_ADDR | ALLOCATED | PROV_KEY, which ufi honours; scalable means no bits.
        out.ok = true;
        out.mr_mode = requested;
        return out;
    }
    if (req & (FI_MR_BASIC | FI_MR_SCALABLE)) {
        out.reason = "mr_mode mixes the legacy FI_MR_BASIC/FI_MR_SCALABLE value with mr_mode bits (" +
                     names::flags(req, names::FlagSet::MrMode) + ")";
        return out;
    }
    if (legacy_api) {
        // Before 1.5 only FI_MR_UNSPEC/BASIC/SCALABLE existed; UNSPEC lets the provider pick.
        if (req != FI_MR_UNSPEC) {
            out.reason = "mr_mode bits (" + names::flags(req, names::FlagSet::MrMode) +
                         ") need API version 1.5 or later";
            return out;
        }
        out.ok = true;
        out.mr_mode = FI_MR_SCALABLE;
        return out;
    }
    // ufi requires no bit, so any offer is acceptable; report the ones it honours.
    out.ok = true;
    out.mr_mode = static_cast<int>(req & mr_mode_kept_if_offered(caps));
    return out;
}

}  // namespace ufi::runtime::info
