// Everything ufi puts on the wire between endpoints: the active-message ids and every header,
// in one place, with the protocol version the wireup handshake exchanges. Little-endian hosts
// only (peers of one fabric share a byte order; the handshake refuses a peer that differs).
//
// Connection: the first operation towards a peer sends WIREUP_REQ on the AM lane; the peer
// answers WIREUP_REP with the key it gives the sender in its peer table (the index, with the
// slot's generation in the top bits: PeerTable::by_key). Every later message carries that key
// (`src`), so the receiver finds the sender (FI_SOURCE, directed receive) in one indexed load
// and one compare; sends queue until the reply arrives.
//
// Endpoint-to-endpoint lanes (rc; tcp with UFI_CONNECT_TO_EP): the handshake goes over a
// connect-to-iface lane and each message carries a P2P section, the transport's code and the
// sender's new endpoint's address. The receiver of WIREUP_REQ connects its own endpoint to it
// and answers with its address in WIREUP_REP; the requester connects, sends WIREUP_ACK on the
// new lane and moves its traffic there; the receiver moves its traffic on WIREUP_ACK (the one
// lane both use from then on, so nothing overtakes anything). A side that will not connect that
// way leaves the section out of its message (or answers WIREUP_ACK with kWireupP2pDeclined),
// and both stay on the connect-to-iface lane.
//
// Every fi_enable draws a random incarnation that WIREUP messages carry: a request from a known
// identity under another incarnation is that endpoint opened again under its name, and the
// peer it was is reset (restart.cpp).
//
// A peer known only by host and port (fi_getinfo(node, service), fi_av_insertsvc) is reached
// over tcp; its WIREUP_REP carries its full address (kWireupSendAddress) and the requester
// moves to the best lane before anything else goes (the queued sends wait for the reply).
//
// Messages (fi_msg and fi_tagged):
//   EAGER        one message in one active message: short (all iovs <= the lane's max_short)
//                or bcopy (<= max_bcopy)          EagerHdr [u64 cq data] payload
//   EAGER_FIRST  the first fragment of a larger one EagerHdr FirstHdr [u64 cq data] payload
//   EAGER_MIDDLE every later fragment, in order     MiddleHdr payload
//
// Rendezvous (messages above the peer's threshold): the sender announces the message with
// RTS; the receiver, once a receive matches it, moves the data the way RTS names:
//   GET  the receiver reads the sender's segments (get_zcopy over its transport, e.g. cma), then ATS
//   PUT  the receiver sends RTR with its own segments and keys; the sender writes them
//        (put_zcopy over its transport, e.g. tcp), then ATP
//   AM   the receiver sends RTR; the sender streams RNDV_DATA active messages into it
//   SPLIT a GET over a transport whose zero copy is the caller's own CPU copy (cma), large
//        enough (UFI_RNDV_SPLIT), from a sender whose RTS says it can write over it too
//        (kRtsSenderPuts): both sides copy at once. The receiver sends RTR (kRndvSplit)
//        naming its buffers behind a split point, then reads the sender's bytes before it;
//        the sender writes the rest (put_zcopy), then ATP. The receiver sends ATS once its
//        reads are done; each side finishes when it has its own copy done and the other's
//        acknowledgement. The split point is implied: RTR's length less its segments' sum.
//   RTS     EagerHdr [u64 cq data] RtsHdr segments[] (u64 addr, u64 len) rkeys[]
//   RTR     RtrHdr segments[] rkeys[]
//   ATS     AckHdr (id: the sender's send_id)       ATP  AckHdr (id: the receiver's recv_id)
//   RNDV_DATA  DataHdr payload
//
// RMA over active messages (fi_rma; every transport): the target validates each access against
// its MR key table (bounds, rights, enabled state) and moves the bytes itself.
//   RMA_WRITE      RmaHdr RmaSeg[segments] payload: one fragment of a write, the bytes at
//                  `offset` of the concatenated target segments; every fragment names them
//                  all, so each is validated alone. The last one is answered by RMA_ACK.
//   RMA_WRITE_SHORT  RmaShortHdr [u64 cq data] payload: a write to one target range that fits
//                  one short active message (UCT's 8-byte header is src and flags); answered
//                  by RMA_ACK like RMA_WRITE. Its id may be kRmaUntracked | length: an
//                  injected write the initiator keeps no record of (it counts them per peer).
//   RMA_READ_REQ   RmaHdr RmaSeg[segments] (offset 0, no payload)
//   RMA_READ_RESP  RmaRespHdr payload: the bytes at `offset`; status < 0 ends the read
//   RMA_ACK        AckHdr (id: the initiator's) with the write's status
//   RMA_WRITE_DONE AckHdr (id: the target's, from RTR) with the puts' status: a write the
//                  initiator put itself (kRmaInitiatorPuts) is in place (its puts completed,
//                  which completed it at the initiator); the target counts it, writes its CQ
//                  data and frees its grant. No answer.
//   ATOMIC         AtomicHdr RmaSeg[segments] operand [compare]: executed by the target
//   ATOMIC_RESP    RmaRespHdr [the old values: fetch and compare atomics]
// Large ones go zero copy where a transport can (kRmaZcopy): the target moves the bytes between
// the initiator's registered buffers and its own memory itself, after the same check. Where the
// transport only puts (tcp), a write is put by the initiator instead (kRmaInitiatorPuts): the
// target checks the access, then answers RTR (kRndvPut) naming its memory behind the segments
// with their keys, or RMA_ACK with the refusal; the initiator puts, then sends RMA_WRITE_DONE.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::proto::wire {

// Version 1: eager messages, rendezvous, wireup. Version 2: endpoint-to-endpoint lanes (the
// P2P section, WIREUP_ACK). Version 3: RMA. Version 4: RMA_WRITE_SHORT. Version 5: the
// incarnation in WIREUP. Version 6: writes put by the initiator (kRmaInitiatorPuts, RTR for a
// write, RMA_WRITE_DONE). Version 7: SPLIT rendezvous. Version 8: a zero copy's transport (and
// the P2P section's) named by its one-byte code (transports/transport_code.h), not its name. A peer of another version
// is refused at wireup.
inline constexpr uint8_t kProtocolVersion = 8;

// Active-message ids (< 32, UCT's limit).
enum AmId : uint8_t {
    kAmWireup = 1,
    kAmEager = 2,
    kAmEagerFirst = 3,
    kAmEagerMiddle = 4,
    kAmRts = 5,
    kAmRtr = 6,
    kAmAts = 7,
    kAmAtp = 8,
    kAmRndvData = 9,
    kAmRmaWrite = 10,
    kAmRmaReadReq = 11,
    kAmRmaReadResp = 12,
    kAmRmaAck = 13,
    kAmAtomic = 14,
    kAmAtomicResp = 15,
    kAmRmaWriteShort = 16,
    kAmRmaWriteDone = 17,
    kAmLast = kAmRmaWriteDone,  // (the highest id with a handler)
};
// Ids are below this (UCT_AM_ID_MAX): the others are counted and dropped
// (DataPathStats::dropped_unknown_id).
inline constexpr uint8_t kAmIdLimit = 32;
// The id a skipped shared-memory FIFO hole arrives under (transports/iface/mm_fifo_hole.h:
// kMmHoleAmId, 31) is none of ufi's: it is dropped and counted with the unknown ones.
static_assert(kAmLast < 31);

// ---- Wireup ------------------------------------------------------------------------------

enum WireupType : uint8_t {
    kWireupRequest = 1,  // "I am (uuid, ep id, address), I call you sender_idx"
    kWireupReply = 2,    // "accepted: put receiver_idx in what you send me"
    kWireupRefuse = 3,   // "refused": status says why (version, authorization key)
    kWireupAck = 4,      // "my endpoint is connected to yours": sent on the new lane (or
                         // kWireupP2pDeclined on the old one)
    kWireupClose = 5,    // "my endpoint is closing": sent by fi_close to every peer that
                         // knows it or learns of it from its request, on its lane (sender_idx:
                         // the receiver's own index for the sender, kNoPeer while the request
                         // is unanswered; uuid, endpoint_id and incarnation the sender's), so that
                         // what the peer would send next fails instead of going nowhere. The
                         // header alone. (Version-5 endpoints without it drop it as malformed.)
    kWireupKeepalive = 6,  // "are you there": sent to a tcp peer while operations wait on it,
                           // so that something is in flight for its host to acknowledge
                           // (host_watch.cpp); the header alone, counted and otherwise
                           // ignored. (Version-8 endpoints without it drop it as malformed.)
};

enum WireupStatus : uint16_t {
    kWireupOk = 0,
    kWireupBadVersion = 1,
    kWireupBadKey = 2,       // the sender's authorization key is not one this endpoint holds
    kWireupNoResources = 3,  // the receiver cannot take another peer
    kWireupP2pDeclined = 4,  // WIREUP_ACK: no endpoint-to-endpoint lane, stay where we are
};

// The P2P section (p2p_len bytes after the key): the transport's code (u8,
// transports/transport_code.h), then its endpoint address (the rest).
inline constexpr size_t kMaxP2pSection = 1024;

// Followed by the sender's address (addr_len bytes), authorization key (key_len bytes) and
// P2P section (p2p_len bytes).
struct WireupHdr {
    uint8_t type;             // WireupType
    uint8_t version;          // kProtocolVersion of the sender
    uint16_t status;          // WireupStatus (replies, acks); requests: the size of this
                              // header (0 in versions 1-4: kWireupPrefixSize)
    uint32_t sender_idx;      // the sender's key for the receiver (echoed in replies; acks,
                              // closes: the receiver's own key for the sender)
    uint32_t receiver_idx;    // replies: the receiver's key for the sender
    uint16_t addr_len;        // requests: bytes of the sender's ufi address that follow
    uint16_t key_len;         // requests: bytes of the sender's authorization key after it
    uint64_t uuid;            // the sender's identity (its address's uuid and endpoint id)
    uint32_t endpoint_id;
    uint16_t p2p_len;         // requests and replies: bytes of the P2P section (0: none)
    uint16_t flags;           // WireupFlags
    // Random per enabled endpoint (never 0). An endpoint opened again under a name it had
    // before (src_addr or fi_setname with an earlier fi_getname) keeps the identity but not
    // this: a request from a known identity with another incarnation is that endpoint
    // restarted, and the peer it was is reset (its operations fail, its lanes go).
    uint64_t incarnation;
};

enum WireupFlags : uint16_t {
    // Requests: "I reached you by host and port": the reply carries the replier's address
    // (addr_len bytes), so the requester moves to the best lane both reach (shared memory on
    // one host) before its first message.
    kWireupSendAddress = 1,
};
static_assert(sizeof(WireupHdr) == 40);
// The fields every version's header starts with (the whole header of versions 1-4). A request
// says its header's size in `status`, so an endpoint of any version finds the sender's address
// and can refuse it; refusals are this prefix alone, which every version reads.
inline constexpr size_t kWireupPrefixSize = 32;

// ---- Eager messages ------------------------------------------------------------------------

enum EagerFlags : uint32_t {
    kTagged = 1u << 0,   // fi_tagged (else fi_msg)
    kHasData = 1u << 1,  // 8 bytes of remote CQ data follow the headers
};

struct EagerHdr {
    uint64_t tag;    // 0 for fi_msg
    uint32_t src;    // the receiver's key for the sender (its WIREUP_REP receiver_idx)
    uint32_t flags;  // EagerFlags
};
static_assert(sizeof(EagerHdr) == 16);

// EAGER_FIRST: after EagerHdr.
struct FirstHdr {
    uint64_t total;   // the message's length
    uint64_t msg_id;  // names the message's fragments (per sender)
};
static_assert(sizeof(FirstHdr) == 16);

// EAGER_MIDDLE.
struct MiddleHdr {
    uint32_t src;
    uint32_t reserved;
    uint64_t msg_id;
    uint64_t offset;  // where the fragment's payload goes in the message
};
static_assert(sizeof(MiddleHdr) == 24);

// Header bytes an eager message spends before its payload (with CQ data).
inline constexpr size_t kEagerOverhead = sizeof(EagerHdr) + sizeof(uint64_t);

// ---- Rendezvous ------------------------------------------------------------------------------

enum RndvProtocol : uint8_t {
    kRndvGet = 1,
    kRndvPut = 2,
    kRndvAm = 3,
    kRndvSplit = 4,  // only in RTR, answering an RTS that offered kRndvGet
};

// The most segments (buffers) one rendezvous message names, on either side.
inline constexpr size_t kMaxRndvSegments = 16;

// RTS: after EagerHdr and its optional CQ data.
struct RtsHdr {
    uint64_t total;     // the message's length
    uint64_t send_id;   // names the send in ATS, RTR
    uint8_t protocol;   // RndvProtocol the sender offers
    uint8_t segments;   // kRndvGet: the sender's buffers that follow (else 0)
    uint8_t transport;  // kRndvGet / kRndvPut: its code (transports/transport_code.h)
    uint8_t flags;      // kRtsSenderPuts
    uint16_t rkey_len;  // bytes of each segment's remote key (kRndvGet)
    uint16_t reserved2;
};
static_assert(sizeof(RtsHdr) == 24);

// RtsHdr::flags: with kRndvGet, the sender can also write the receiver's buffers over `transport`
// (its cross-process copy is permitted too): the receiver may answer SPLIT.
inline constexpr uint8_t kRtsSenderPuts = 1;

struct RtrHdr {
    uint32_t src;
    uint8_t protocol;   // kRndvPut, kRndvAm or kRndvSplit
    uint8_t segments;   // kRndvPut, kRndvSplit: the receiver's buffers that follow (SPLIT:
                        // those from the split point on)
    uint8_t transport;  // kRndvPut, kRndvSplit: its code (transports/transport_code.h)
    uint8_t reserved;
    uint64_t send_id;   // the sender's, from RTS
    uint64_t recv_id;   // names the receive in ATP and RNDV_DATA
    uint64_t length;    // bytes the receiver takes (less than the message when it truncates)
    uint16_t rkey_len;  // bytes of each segment's remote key (kRndvPut)
    uint16_t reserved2;
    uint32_t reserved3;
};
static_assert(sizeof(RtrHdr) == 40);

struct Segment {
    uint64_t addr;
    uint64_t len;
};
static_assert(sizeof(Segment) == 16);

struct AckHdr {
    uint32_t src;
    int32_t status;  // 0, or a negative fi errno: the transfer failed
    uint64_t id;
};
static_assert(sizeof(AckHdr) == 16);

struct DataHdr {
    uint32_t src;
    uint32_t reserved;
    uint64_t recv_id;
    uint64_t offset;
};
static_assert(sizeof(DataHdr) == 24);

// ---- RMA -------------------------------------------------------------------------------------

// The most target segments one RMA names (fi_msg_rma's rma_iov_count).
inline constexpr size_t kMaxRmaSegments = 16;

enum RmaFlags : uint32_t {
    kRmaHasData = 1u << 0,  // RMA_WRITE: `data` is remote CQ data for the target's CQ
    // Zero copy, moved by the target over the transport RmaZcopyHdr names: RMA_WRITE (one
    // message, offset 0, no data) has the target read the initiator's buffers (get_zcopy, e.g.
    // cma) and answer RMA_ACK; RMA_READ_REQ has it write them (put_zcopy: cma, tcp) and answer
    // RMA_READ_RESP with offset == total and no data. The target still checks the access
    // against its key table first, and counts it.
    kRmaZcopy = 1u << 1,
    // With kRmaZcopy on RMA_WRITE, over a transport that puts but cannot get (tcp): the
    // initiator writes the target's memory itself once the target granted it. RmaZcopyHdr
    // then names no buffers (segments 0, rkey_len 0), only the transport; the target answers
    // RTR (send_id: the write's id; recv_id: the target's, for RMA_WRITE_DONE).
    kRmaInitiatorPuts = 1u << 2,
};

struct RmaHdr {
    uint32_t src;       // the receiver's key for the sender
    uint32_t flags;     // RmaFlags
    uint64_t id;        // names the operation in RMA_ACK / RMA_READ_RESP
    uint64_t total;     // bytes the operation moves (the segments' lengths, summed)
    uint64_t offset;    // RMA_WRITE: where this fragment's payload goes
    uint64_t data;      // remote CQ data (kRmaHasData)
    uint32_t segments;  // RmaSeg entries that follow (1..kMaxRmaSegments)
    uint32_t reserved;
};
static_assert(sizeof(RmaHdr) == 48);

// RMA_WRITE_SHORT: one target range, the payload's length. 32 bytes, so an 8-byte write is
// one 40-byte short message (RMA_WRITE's headers alone are 72).
struct RmaShortHdr {
    uint32_t src;    // the receiver's key for the sender
    uint32_t flags;  // kRmaHasData only
    uint64_t id;     // echoed in RMA_ACK
    uint64_t key;    // the target's MR key
    uint64_t addr;   // virtual address (FI_MR_VIRT_ADDR at the target) or offset
};
static_assert(sizeof(RmaShortHdr) == 32);

// An RMA_ACK id with this bit names no request record: an injected short write, whose length
// is the id's low bits (for the error completion and the counter).
inline constexpr uint64_t kRmaUntracked = uint64_t{1} << 63;

struct RmaSeg {
    uint64_t key;   // the target's MR key
    uint64_t addr;  // virtual address (FI_MR_VIRT_ADDR at the target) or offset
    uint64_t len;
};
static_assert(sizeof(RmaSeg) == 24);

struct AtomicHdr {
    uint32_t src;
    uint32_t flags;     // RmaFlags (kRmaHasData)
    uint64_t id;        // names it in ATOMIC_RESP
    uint64_t data;      // remote CQ data
    uint32_t count;     // elements
    uint8_t op;         // enum fi_op
    uint8_t datatype;   // enum fi_datatype
    uint8_t kind;       // atomics::Kind
    uint8_t segments;   // RmaSeg entries that follow (lengths in bytes)
};
static_assert(sizeof(AtomicHdr) == 32);

// kRmaZcopy: after the RmaSeg entries, the initiator's buffers: RmaZcopyHdr, Segment[segments],
// then each segment's packed rkey (rkey_len bytes each).
struct RmaZcopyHdr {
    uint8_t segments;
    uint8_t transport;  // the transport's code (transports/transport_code.h)
    uint16_t rkey_len;
    uint32_t reserved;
};
static_assert(sizeof(RmaZcopyHdr) == 8);

struct RmaRespHdr {
    uint32_t src;
    int32_t status;  // 0, or a negative fi errno: the read failed (no payload)
    uint64_t id;
    uint64_t offset;
};
static_assert(sizeof(RmaRespHdr) == 24);

}  // namespace ufi::runtime::proto::wire
