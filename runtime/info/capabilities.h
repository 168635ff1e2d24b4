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

// Capabilities of the domain (fi_getinfo(3) calls FI_AV_USER_ID a primary capability, so it is
// returned only to callers that ask for it, or ask for nothing): user IDs (an AV open and
// insert flag) and named AVs shared by the processes of a node. FI_LOCAL_COMM and
// FI_REMOTE_COMM are added per domain from what its transports reach.
inline constexpr uint64_t kDomainPrimaryCaps = FI_AV_USER_ID;
inline constexpr uint64_t kDomainSecondaryCaps = FI_SHARED_AV;

// libfabric's classification of capability bits (fi_getinfo(3) "CAPABILITIES"; the same sets
// as libfabric's own util layer): which bits are primary (returned only when requested),
// which belong in tx_attr->caps and rx_attr->caps.
inline constexpr uint64_t kPrimaryTxCaps = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC |
                                           FI_MULTICAST | FI_COLLECTIVE | FI_NAMED_RX_CTX |
                                           FI_HMEM | FI_SEND | FI_READ | FI_WRITE;
inline constexpr uint64_t kSecondaryTxCaps = FI_TRIGGER | FI_FENCE | FI_RMA_PMEM;
inline constexpr uint64_t kPrimaryRxCaps = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC |
                                           FI_DIRECTED_RECV | FI_COLLECTIVE | FI_HMEM |
                                           FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE;
inline constexpr uint64_t kSecondaryRxCaps =
    FI_MULTI_RECV | FI_TRIGGER | FI_RMA_PMEM | FI_SOURCE | FI_RMA_EVENT | FI_SOURCE_ERR;
inline constexpr uint64_t kTxCaps = kPrimaryTxCaps | kSecondaryTxCaps;
inline constexpr uint64_t kRxCaps = kPrimaryRxCaps | kSecondaryRxCaps;
inline constexpr uint64_t kAllPrimaryCaps =
    kPrimaryTxCaps | kPrimaryRxCaps | FI_AV_USER_ID | FI_PEER;
// Receive-side bits older applications also put in tx_attr->caps (and the reverse): ignored
// there, as libfabric ignores them.
inline constexpr uint64_t kIgnoredTxCaps = FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RECV |
                                           FI_DIRECTED_RECV | FI_MULTI_RECV | FI_SOURCE |
                                           FI_RMA_EVENT | FI_SOURCE_ERR;
inline constexpr uint64_t kIgnoredRxCaps =
    FI_READ | FI_WRITE | FI_SEND | FI_FENCE | FI_MULTICAST | FI_NAMED_RX_CTX;

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
