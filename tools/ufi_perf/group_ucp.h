// ufi_perf --ucp: after ufi's group run, the same processes measure the same figures over UCP
// (UCX's own protocol layer, tag API: the anchor ucx_perftest measures for pairs), so that
// the ratios of a group of processes come from one run. UCP chooses its transports as it
// always does (UCX_TLS, UCX_NET_DEVICES).
#pragma once

#include "group_channel.h"

namespace ufi::perf {

// Runs one process's part of the UCP group over `ch` (the same barriers and reports, in the
// same order, as ufi's: group.cpp's summary reads both alike). 0, or 1 with the reason on
// stderr.
int run_ucp_member(GroupChannel &ch, const Options &o, std::vector<std::vector<double>> &reports);

}  // namespace ufi::perf
