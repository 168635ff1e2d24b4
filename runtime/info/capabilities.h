// What ufi offers through fi_getinfo today. "Advertise only what works": each later issue
// (data path, RMA, atomics, HMEM, MSG/DGRAM endpoints, auto progress) widens these sets in
// this one file, and hint matching, fi_info output and the docs follow from it.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>

namespace ufi::runtime::info {

// Primary capabilities with a working data path: messages and tagged messages, with directed
// receive (Open MPI's OFI MTL requires it; it costs no tag bits), RMA (reads and writes) and
// atomics (every op on every datatype), executed by the target: docs/rma.md.
// FI_REMOTE_CQ_DATA: 8 bytes of remote CQ data with every message and fi_writedata.
// FI_NAMED_RX_CTX: a scalable endpoint's receive contexts are reached by fi_rx_addr
// (runtime/ep/scalable.h).
inline constexpr uint64_t kPrimaryCaps = FI_MSG | FI_TAGGED | FI_SEND | FI_RECV |
                                         FI_DIRECTED_RECV | FI_REMOTE_CQ_DATA | FI_RMA | FI_ATOMIC |
                                         FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
                                         FI_NAMED_RX_CTX;

// Secondary capabilities of every domain: completions report the sender (FI_SOURCE; returned
// only when asked for, as fi_getinfo(3) says); multi-receive buffers for untagged messages
// (FI_MULTI_RECV; FI_TAGGED_MULTI_RECV below, for API 2.0 callers).
// FI_SOURCE_ERR (on request too): a message from a sender not in the AV completes as an
// FI_EADDRNOTAVAIL error entry carrying its address. FI_RMA_EVENT: a target counts peers'
// reads and writes of its memory on counters bound with FI_REMOTE_READ / FI_REMOTE_WRITE (to
// the endpoint, or to the MR under FI_MR_RMA_EVENT); the target moves every byte itself, so
// it sees every access. FI_FENCE: a fenced operation waits until every earlier operation to
// its peer completed.
inline constexpr uint64_t kSecondaryCaps =
    FI_SOURCE | FI_SOURCE_ERR | FI_MULTI_RECV | FI_RMA_EVENT | FI_FENCE;

// libfabric 2.0's receive capabilities, offered to applications that ask for API 2.0 or later
// (their bits meant FI_HMEM_HOST_ALLOC, FI_HMEM_DEVICE_ONLY and FI_VARIABLE_MSG before):
// directed receive for tagged receives only, multi-receive buffers for tagged receives, and
// FI_EXACT_DIRECTED_RECV, which refuses FI_ADDR_UNSPEC as a receive's source. They are
// returned only to applications that ask for them: the last one restricts what an
// application may do, and libfabric's own providers offer none of them, so checkers written
// against those (fabtests' fi_getinfo_test) count them as bits nobody asked for.
inline constexpr uint64_t kApi2Caps =
    FI_TAGGED_DIRECTED_RECV | FI_TAGGED_MULTI_RECV | FI_EXACT_DIRECTED_RECV;
// FI_RMA_EVENT is not added to capabilities an application names without it (it binds the
// endpoint to the FI_MR_RMA_EVENT protocol when the application offers that mr_mode bit, and
// an endpoint without it refuses FI_REMOTE_READ / FI_REMOTE_WRITE counters, as fi_endpoint(3)
// says); without hints, or with caps 0, it is given like every other capability.
inline constexpr uint64_t kOnlyOnRequestCaps = kApi2Caps | FI_RMA_EVENT;

// Message ordering guaranteed on every endpoint: sends are delivered in the order they were
// posted (one queue per peer, lanes that keep order).
inline constexpr uint64_t kMsgOrder = FI_ORDER_SAS;
// Orderings an application may ask for (returned when asked for; without hints, all of them,
// for every size: max_order_*_size is max_msg_size). Operations carried by active messages take
// effect in order anyway; an endpoint given any of these also makes an operation wait while an
// earlier one to the same peer still waits for the peer's answer (zero-copy RMA, rendezvous),
// as FI_FENCE does (docs/rma.md).
inline constexpr uint64_t kRequestableOrder =
    FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | FI_ORDER_WAR | FI_ORDER_WAW | FI_ORDER_WAS |
    FI_ORDER_SAR | FI_ORDER_SAW | FI_ORDER_SAS | FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW |
    FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |
    FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;

// Tag bits: all 64 are the application's (FI_TAG_GENERIC, as libfabric's shm provider).
inline constexpr uint64_t kMemTagFormat = 0xAAAAAAAAAAAAAAAAULL;

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
                                           FI_DIRECTED_RECV | FI_TAGGED_DIRECTED_RECV |
                                           FI_COLLECTIVE | FI_HMEM | FI_RECV |
                                           FI_REMOTE_READ | FI_REMOTE_WRITE;
inline constexpr uint64_t kSecondaryRxCaps =
    FI_MULTI_RECV | FI_TAGGED_MULTI_RECV | FI_EXACT_DIRECTED_RECV | FI_TRIGGER | FI_RMA_PMEM |
    FI_SOURCE | FI_RMA_EVENT | FI_SOURCE_ERR;
inline constexpr uint64_t kTxCaps = kPrimaryTxCaps | kSecondaryTxCaps;
inline constexpr uint64_t kRxCaps = kPrimaryRxCaps | kSecondaryRxCaps;
// FI_REMOTE_CQ_DATA is returned on request too: fabtests counts it as no optional capability.
inline constexpr uint64_t kAllPrimaryCaps =
    kPrimaryTxCaps | kPrimaryRxCaps | FI_AV_USER_ID | FI_PEER | FI_REMOTE_CQ_DATA;
// Receive-side bits older applications also put in tx_attr->caps (and the reverse): ignored
// there, as libfabric ignores them.
inline constexpr uint64_t kIgnoredTxCaps =
    FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RECV | FI_DIRECTED_RECV | FI_TAGGED_DIRECTED_RECV |
    FI_EXACT_DIRECTED_RECV | FI_MULTI_RECV | FI_TAGGED_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT |
    FI_SOURCE_ERR;
inline constexpr uint64_t kIgnoredRxCaps =
    FI_READ | FI_WRITE | FI_SEND | FI_FENCE | FI_MULTICAST | FI_NAMED_RX_CTX;

// Endpoint types with an implementation, in the order fi_getinfo lists them for each domain.
// FI_EP_DGRAM: the RDM data path restricted to what one active message carries (never split,
// no rendezvous, no RMA or atomics); datagrams to a peer that cannot be reached are dropped,
// not failed (docs/endpoints.md).
// FI_EP_MSG: connected over UCT's connection manager (runtime/ep/connection.h), then the RDM
// data path with its one peer; offered by domains with tcp (the CM listens on an IP address).
inline constexpr fi_ep_type kEndpointTypes[] = {FI_EP_RDM, FI_EP_DGRAM, FI_EP_MSG};

// FI_EP_DGRAM's capabilities: messages and tagged messages with their receive variants.
inline constexpr uint64_t kDgramPrimaryCaps =
    FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_REMOTE_CQ_DATA | FI_NAMED_RX_CTX;
inline constexpr uint64_t kDgramSecondaryCaps = FI_SOURCE | FI_SOURCE_ERR | FI_MULTI_RECV;
// FI_EP_MSG's capabilities: RDM's, less what needs an AV (a connected endpoint has one peer).
inline constexpr uint64_t kMsgEpPrimaryCaps = FI_MSG | FI_TAGGED | FI_SEND | FI_RECV |
                                              FI_REMOTE_CQ_DATA | FI_RMA | FI_ATOMIC | FI_READ |
                                              FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
inline constexpr uint64_t kMsgEpSecondaryCaps = FI_MULTI_RECV | FI_RMA_EVENT | FI_FENCE;
// The connection data fi_connect, fi_accept and fi_reject carry (FI_OPT_CM_DATA_SIZE): what
// the CM's private data holds beside ufi's header and the data-path address, with room to
// spare on tcp's CM (2064 bytes).
inline constexpr size_t kCmDataSize = 1024;

// Orderings of messages a datagram endpoint keeps when asked (one lane per peer, in order).
inline constexpr uint64_t kDgramOrder = FI_ORDER_SAS;

// Address formats: ufi's binary address blob (reported as FI_ADDR_UCX: a UCX-transport
// address) and, on request, its printable "fi_ufi://" form.
inline constexpr uint32_t kDefaultAddrFormat = FI_ADDR_UCX;

// Modes ufi requires from applications: none (it never uses the caller's fi_context).
inline constexpr uint64_t kRequiredModes = 0;

// FI_MSG_PREFIX, when an application offers it (fi_getinfo(3): the provider then decides):
// ufi takes it, with this msg_prefix_size. ufi needs no room in front of a message; the
// prefix bytes travel with the message unread (opaque, as the page says), so the payload lands
// after the receiver's prefix and a receive completes with the prefix in its length, while
// message and inject limits leave the prefix out (DGRAM's max_msg_size and the inject size
// are lowered by it, so that prefix and payload still fit one active message).
inline constexpr size_t kMsgPrefixSize = 8;

// Progress models that work: FI_PROGRESS_MANUAL (the default), and FI_PROGRESS_AUTO on
// request (a progress thread per enabled endpoint, runtime/ep/progress_thread.h).
inline constexpr bool kAutoProgress = true;

// Protocol identity of ufi's wire format (runtime/proto/wire.h will own the version).
inline constexpr uint32_t kProtocol = FI_PROTO_UCX;
inline constexpr uint32_t kProtocolVersion = 1;

// Memory keys: 8-byte keys, never FI_MR_RAW (Open MPI refuses it).
inline constexpr size_t kMrKeySize = 8;
// Remote CQ data carried per message.
inline constexpr size_t kCqDataSize = 8;

// Bytes of ufi header an eager message spends (runtime/proto/wire.h: tag, source index, flags,
// remote CQ data): inject_size = am.max_short - this.
inline constexpr size_t kEagerShortOverhead = 24;

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
// Transmit and receive contexts of a scalable endpoint (FI_EP_RDM and FI_EP_DGRAM; each is an
// endpoint of its own: runtime/ep/scalable.h), each kind; what its name can hold
// (transports/scalable_name.h).
inline constexpr size_t kMaxScalableContexts = 64;
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
