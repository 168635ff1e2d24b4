// What ufi offers through fi_getinfo today. "Advertise only what works": each later issue
// (data path, RMA, atomics, HMEM, MSG/DGRAM endpoints, auto progress) widens these sets in
// this one file, and hint matching, fi_info output and the docs follow from it.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>

namespace ufi::runtime::info {

// Primary capabilities with a working data path. None yet: the RDM data path (FI_MSG,
// FI_TAGGED), RMA and atomics arrive with their issues.
inline constexpr uint64_t kPrimaryCaps = 0;

// Secondary capabilities that are true of every ufi domain today: user IDs as an AV insert
// flag. FI_LOCAL_COMM and FI_REMOTE_COMM are added per domain from what its transports reach.
inline constexpr uint64_t kSecondaryCaps = FI_AV_USER_ID;

// Capabilities that apply to the domain object itself (domain_attr->caps): user IDs as an
// AV open flag, and named AVs shared by the processes of a node.
inline constexpr uint64_t kDomainCaps = FI_AV_USER_ID | FI_SHARED_AV;

// Endpoint types with an implementation (more with the endpoint issue).
inline constexpr fi_ep_type kEndpointTypes[] = {FI_EP_RDM};

// Address formats: ufi's binary address blob (reported as FI_ADDR_UCX: a UCX-transport
// address) and, on request, its printable "fi_ufi://" form.
inline constexpr uint32_t kDefaultAddrFormat = FI_ADDR_UCX;

// Modes ufi requires from applications: none (it never uses the caller's fi_context).
inline constexpr uint64_t kRequiredModes = 0;

// Progress models that work: manual only until the progress thread lands.
inline constexpr bool kAutoProgress = false;

// Protocol identity of ufi's wire format (runtime/proto/wire.h will own the version).
inline constexpr uint32_t kProtocol = FI_PROTO_UCX;
inline constexpr uint32_t kProtocolVersion = 1;

// Memory keys: 8-byte keys, never FI_MR_RAW (Open MPI refuses it).
inline constexpr size_t kMrKeySize = 8;
// Remote CQ data carried per message.
inline constexpr size_t kCqDataSize = 8;

// Bytes of ufi header that an eager-short message spends beyond UCT's 8-byte AM header:
// source id (4), flags (4) and remote CQ data (8). inject_size = am.max_short - 8 - this.
inline constexpr size_t kEagerShortOverhead = 16;

// ufi's own gather limit when a transport has no zero-copy path (it packs into a bounce
// buffer); transports with zcopy report theirs.
inline constexpr size_t kDefaultIovLimit = 16;

// Queue depths: operations beyond UCT's resources wait on ufi's pending queues, so these
// are ufi limits, not transport limits.
inline constexpr size_t kTxSize = 16384;
inline constexpr size_t kRxSize = 16384;

// Object counts per domain.
inline constexpr size_t kCqCount = 1024;
inline constexpr size_t kEpCount = 1024;
inline constexpr size_t kCntrCount = 1024;
inline constexpr size_t kMrCount = size_t{1} << 24;
inline constexpr size_t kMrIovLimit = 8;  // fi_mr_regv (runtime/mr/limits.h)
inline constexpr size_t kMaxErrData = 256;

// Counters are 64-bit and wrap (runtime/cntr).
inline constexpr uint64_t kMaxCntrValue = UINT64_MAX;

// Authorization keys: opaque byte strings of 1 to 64 bytes, per domain or endpoint (the
// classic form), or AV-level keys (domain auth_key_size == FI_AV_AUTH_KEY), of which an
// endpoint takes every key its AV holds when it is enabled, up to this many.
inline constexpr size_t kMaxAuthKeySize = 64;
inline constexpr size_t kMaxEpAuthKeys = 256;

}  // namespace ufi::runtime::info
