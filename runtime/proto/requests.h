// The data path's per-operation records: a send on its way, a posted receive, a message that
// arrived before its receive. They come from per-endpoint pools and go back to them, so the
// eager path allocates nothing per message once the pools are warm (a pool grows, never
// shrinks, until the endpoint closes).
#pragma once

#include "base/intrusive_list.h"
#include "base/pool.h"
#include "runtime/proto/wire.h"
#include "transports/lanes/rma_lane.h"
#include "transports/transport_code.h"

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ufi::runtime::proto {

using base::Hook;
using base::List;
using base::Pool;

// The most buffers one operation may name (fi_info's iov_limit never exceeds it).
inline constexpr size_t kMaxIov = 16;
// A peer index that names no peer (any source, unknown sender).
inline constexpr uint32_t kNoPeer = UINT32_MAX;

// memcpy for the data path's small messages: up to 16 bytes in two overlapping fixed-size
// moves the compiler keeps inline (a variable-length memcpy is a libc call, several times the
// cost of an 8-byte message's copy).
inline void copy_bytes(void *dst, const void *src, size_t n) noexcept {
    auto *d = static_cast<uint8_t *>(dst);
    const auto *s = static_cast<const uint8_t *>(src);
    if (n > 16) {
        std::memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t a, b;
        std::memcpy(&a, s, 8);
        std::memcpy(&b, s + n - 8, 8);
        std::memcpy(d, &a, 8);
        std::memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        std::memcpy(&a, s, 4);
        std::memcpy(&b, s + n - 4, 4);
        std::memcpy(d, &a, 4);
        std::memcpy(d + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; ++i) d[i] = s[i];
    }
}

struct Buffer {
    uint8_t *base;
    size_t len;
};

// A scatter/gather list as an operation posted it.
struct IovList {
    Buffer v[kMaxIov];
    size_t count = 0;
    size_t total = 0;

    // Copies another list's entries (only those in use: the array is large).
    void assign(const IovList &o) {
        count = o.count;
        total = o.total;
        for (size_t i = 0; i < o.count; ++i) v[i] = o.v[i];
    }
    void set(const void *buf, size_t len) {
        v[0] = {static_cast<uint8_t *>(const_cast<void *>(buf)), len};
        count = len != 0 ? 1 : 0;
        total = len;
    }
    // Copies `len` bytes from `src` to offset `at` of the list; returns the bytes that fit.
    size_t copy_in(size_t at, const void *src, size_t len) const {
        if (count == 1 && at == 0) {  // the common case: one buffer, a whole message
            const size_t n = std::min(len, v[0].len);
            copy_bytes(v[0].base, src, n);
            return n;
        }
        const auto *from = static_cast<const uint8_t *>(src);
        size_t done = 0;
        for (size_t i = 0; i < count && done < len; ++i) {
            if (at >= v[i].len) {
                at -= v[i].len;
                continue;
            }
            const size_t n = std::min(v[i].len - at, len - done);
            std::memcpy(v[i].base + at, from + done, n);
            done += n;
            at = 0;
        }
        return done;
    }
    // Copies `len` bytes starting at offset `at` of the list into `dst`.
    void copy_out(size_t at, void *dst, size_t len) const {
        auto *to = static_cast<uint8_t *>(dst);
        size_t done = 0;
        for (size_t i = 0; i < count && done < len; ++i) {
            if (at >= v[i].len) {
                at -= v[i].len;
                continue;
            }
            const size_t n = std::min(v[i].len - at, len - done);
            std::memcpy(to + done, v[i].base + at, n);
            done += n;
            at = 0;
        }
    }
};

// A rendezvous as RTS announced it (kept while its receive is not posted yet).
struct RtsInfo {
    uint64_t total = 0;
    uint64_t send_id = 0;
    uint8_t protocol = 0;                 // wire::RndvProtocol
    uint8_t flags = 0;                    // wire::kRtsSenderPuts
    std::vector<wire::Segment> segments;  // kRndvGet: the sender's buffers
    transports::TransportCode transport = transports::kNoTransport;  // kRndvGet / kRndvPut
    std::vector<uint8_t> rkeys;           // segments.size() keys of rkey_len bytes
    uint16_t rkey_len = 0;
};

class ZcopyTransfers;

// A rendezvous's zero-copy operations, counted: UCT calls `uct.func` for each one it did not
// finish at once; `req` is the SendReq or RecvReq they belong to.
struct RndvCompletion {
    transports::Completion uct{};
    ZcopyTransfers *owner = nullptr;
    void *req = nullptr;
};

// Where a message naming registered buffers is built (an RTS, a zero-copy RMA request): kept
// between sends by its owner, so nothing is allocated once the vectors have grown.
struct SegmentMessageScratch {
    std::vector<wire::Segment> segs;
    std::vector<uint8_t> keys;
    std::vector<uint8_t> one_key;
    std::vector<uint8_t> msg;
};

// What a SendReq carries.
enum class SendOp : uint8_t {
    kMessage,   // fi_send*, fi_tsend*, fi_inject*
    kWrite,     // fi_write*, fi_inject_write*: RMA_WRITE fragments, done on RMA_ACK
    kRead,      // fi_read*: RMA_READ_REQ, done when RMA_READ_RESP brought every byte
    kReadResp,  // the target's answer to a peer's read (zero copy: its puts)
    kWriteTarget,  // the target's zero-copy side of a peer's write: its gets (rndv_protocol
                   // GET), or a grant the peer puts into (PUT: tcp; RMA_WRITE_DONE ends it)
    kAtomic,    // fi_atomic*, fi_fetch_atomic*, fi_compare_atomic*: ATOMIC, done on ATOMIC_RESP
};

// How an RMA goes, decided once before its first byte is sent (RmaZcopyProtocol::choose).
enum class RmaWay : uint8_t {
    kUndecided,
    kActiveMessages,  // RMA_WRITE fragments, RMA_READ_REQ answered by RMA_READ_RESP
    kZeroCopy,        // one request naming registered buffers (rma_zcopy.h)
};

// A control message (RTR, ATS, ATP, acknowledgements, a target's answers) being built, or
// waiting in its peer's queue for lane room: byte 0 its AM id, then its payload. Pooled, and
// `bytes` keeps its capacity, so a warm data path builds one without allocating.
struct ControlMsg {
    Hook<ControlMsg> hook;
    std::vector<uint8_t> bytes;
};

// What each protocol family keeps of a send, a record of its own (the send record below is
// made of them): the family's module reads and writes its part only.

// Messages (eager_protocol.h; fi_send*, fi_tsend*, fi_inject*).
struct MessageSendPart {
    uint32_t wire_flags = 0;   // wire::EagerFlags
    uint64_t tag = 0;
    uint64_t data = 0;
    uint64_t msg_id = 0;       // multi-fragment messages
};

// RMA (rma_protocol.h, rma_zcopy.h), and the target segments atomics name: a write's
// fragments, a read's request, and at the target a read's response, which is no operation of
// this endpoint's (no tx credit, no completion). `iov` is the local side: the source of a
// write or response, where a read's data lands.
struct RmaSendPart {
    std::vector<wire::RmaSeg> rma;  // the target's segments (kept capacity: no allocation
                                    // once the pool is warm)
    uint64_t rma_data = 0;          // kWrite: remote CQ data (wire::kRmaHasData in rma_flags)
    uint32_t rma_flags = 0;         // wire::RmaFlags
    uint64_t rma_received = 0;      // kRead: bytes arrived so far
    uint64_t peer_id = 0;           // kReadResp: the initiator's id for the read
    bool holds_peer = false;        // kWrite we put: counted in Peer::put_writes_held
    RmaWay rma_way = RmaWay::kUndecided;  // kWrite, kRead
};

// Atomics (atomic_protocol.h): the op, datatype, call family (atomics::Kind) and elements;
// the operand then the compare values are in the record's `copy`; the old values land in
// `result`.
struct AtomicSendPart {
    uint8_t atomic_op = 0;
    uint8_t atomic_datatype = 0;
    uint8_t atomic_kind = 0;
    uint32_t atomic_count = 0;
    IovList result;
};

// Zero-copy transfers: a message's rendezvous (rndv_protocol.h and its four protocols:
// announced by RTS, finished by ATS (GET), by the sender's own puts (PUT) or by streaming
// RNDV_DATA (AM) after RTR) and a zero-copy RMA (rma_zcopy.h), which uses the same engine.
// A transfer a failed peer may still write into (ZcopyTransfers::hold_from_failed_writer):
// not held, held back (its completion waits), or released (completing now).
enum class HoldState : uint8_t { kNo, kHeld, kReleased };

struct ZcopySendPart {
    bool rndv = false;
    uint8_t rndv_protocol = 0;
    std::vector<transports::LocalRegion> regions;  // the send buffers, registered on the zero-
                                                   // copy transport (GET; PUT where it needs
                                                   // local memh)
    std::vector<transports::PeerKey> keys;         // kRndvPut: the receiver's segments' keys
    std::vector<wire::Segment> remote;             // kRndvPut: the receiver's segments
    size_t put_base = 0;                // where `remote` starts in the message (SPLIT: the split
                                        // point; else 0)
    bool split_copied = false;          // kRndvSplit: our puts are done (ATP sent)
    bool split_acked = false;           // kRndvSplit: the receiver's ATS came
    uint64_t recv_id = 0;               // the receiver's, from RTR
    size_t length = 0;                  // bytes the receiver takes (RTR)
    bool streaming = false;             // kRndvAm: RNDV_DATA goes out from `offset`
    HoldState held = HoldState::kNo;     // a read the failed peer may still put into
                                         // (ZcopyTransfers::hold_from_failed_writer)
    RndvCompletion comp;                // kRndvPut: the puts
};

struct SendReq;

// What the scheduler (sched.h, send_queue.cpp) and the completion need of every operation.
struct SendCommon {
    Hook<SendReq> hook;
    SendOp op = SendOp::kMessage;
    uint32_t peer = kNoPeer;
    void *context = nullptr;
    uint64_t cq_flags = 0;     // what its completion reports: FI_SEND | FI_MSG / FI_TAGGED
    bool completion = false;   // write a CQ entry (not inject, FI_COMPLETION rules)
    IovList iov;
    size_t offset = 0;         // bytes handed to the transport so far
    bool started = false;      // its first (or only) active message went
    // FI_DELIVERY_COMPLETE / FI_MATCH_COMPLETE: completes only once the receiver placed it in
    // a matched buffer, so it goes by rendezvous whatever its size (ATS tells).
    bool confirm = false;
    // FI_INJECT (fi_inject*, or the flag on fi_sendmsg): its caller may never progress the
    // endpoint again for it, so it goes eager whatever the rendezvous threshold says (a
    // rendezvous needs the sender's progress to answer RTR; DataPath::way_of).
    bool injected = false;
    // FI_FENCE: it goes only once every earlier operation to its peer completed.
    bool fence = false;
    // It went out and waits for the peer's answer (counted in Peer::handed_off).
    bool handed_off = false;
    std::vector<uint8_t> copy; // FI_INJECT: the data, copied at the call (atomics: operands)
    uint32_t rndv_slot = 0;    // index in the data path's send slot table (zero-copy
                               // transfers, RMA and atomics awaiting answers; 0: none)
    // Set while its first message is being sent: over `self` the whole exchange may run
    // inside that call (the receiver's handlers, then ours), and the send must not be
    // finished under it.
    bool announcing = false;
    bool done = false;                  // finished while announcing
    int status = 0;                     // the error it completes with (0: none)
};

// A send (fi_send*, fi_tsend*, fi_inject*), RMA or atomic not yet handed to the transport in
// full: the part every operation has, then each family's. One record for all, so that one
// per-peer queue orders them and one pool serves them (a part another family owns is left
// alone, and the pool keeps its vectors' capacity). The common part comes first: a queued
// message reads it and its own part, the first cache lines and `iov`.
struct SendReq : SendCommon, MessageSendPart, ZcopySendPart, RmaSendPart, AtomicSendPart {
    // A new operation of kind `kind` to peer index `to` (`ctx`: its context; FI_FENCE): the
    // fields every kind sets the same way reset; the caller sets its kind's own.
    void begin(SendOp kind, uint32_t to, void *ctx, bool fenced) noexcept {
        op = kind;
        peer = to;
        context = ctx;
        fence = fenced;
        confirm = false;
        injected = false;
        offset = 0;
        started = false;
        status = 0;
        done = false;
        announcing = false;
        rma_way = RmaWay::kUndecided;
        held = HoldState::kNo;
        comp.uct.count = 0;
    }
    // The operation's local buffers: `data` itself, or (FI_INJECT: the caller may reuse them
    // at once) a copy in `copy`. May throw std::bad_alloc.
    void take_buffers(const IovList &data, bool inject) {
        if (!inject) {
            iov.assign(data);
            return;
        }
        copy.resize(data.total);
        data.copy_out(0, copy.data(), data.total);
        iov.set(copy.data(), data.total);
    }
};

struct RecvReq;

// What every posted receive has: what it matches, where the data goes, and the message it
// matched once it did.
struct RecvCommon {
    Hook<RecvReq> hook;
    bool tagged = false;
    uint32_t src = kNoPeer;  // kNoPeer: any source
    uint64_t tag = 0;
    uint64_t ignore = 0;
    void *context = nullptr;
    bool completion = true;
    IovList iov;
    // The message it took (rendezvous, or fragments still arriving).
    uint32_t wire_flags = 0;
    uint64_t msg_tag = 0;
    uint64_t data = 0;
    size_t total = 0;     // the message's length
    size_t length = 0;    // bytes taken (total, or the buffer's size when it truncates)
    int status = 0;       // an error the transfer met (0: none)
};

// FI_MULTI_RECV: a buffer (`multi`) that takes message after message, each into a record of
// its own (`parent` set) covering its part of the buffer (receive.cpp).
struct MultiRecvPart {
    bool multi = false;
    size_t multi_offset = 0;  // where the next message goes
    uint32_t children = 0;    // messages placed in it and not completed yet
    bool released = false;    // too little room left: the last child's completion says so
    RecvReq *parent = nullptr;
};

// Rendezvous (rndv_protocol.h and its protocols): the message RTS announced, being moved in.
struct RndvRecvPart {
    bool rndv = false;
    uint8_t rndv_protocol = 0;
    uint32_t rndv_slot = 0;  // index in the data path's rendezvous receive table
    uint32_t peer = kNoPeer;
    uint64_t send_id = 0;
    size_t received = 0;  // kRndvAm
    size_t issued = 0;    // kRndvGet: bytes whose gets are issued (a full lane resumes there)
    size_t get_end = 0;   // kRndvGet, kRndvSplit: the gets cover [0, get_end) (SPLIT: the
                          // split point; the sender puts the rest)
    bool split_copied = false;  // kRndvSplit: our gets are done (ATS sent)
    bool split_acked = false;   // kRndvSplit: the sender's ATP came
    HoldState held = HoldState::kNo;  // failed, held back while the failed sender may still
                                      // write into it (ZcopyTransfers::hold_from_failed_writer)
    std::vector<wire::Segment> segments;           // kRndvGet: the sender's buffers
    std::vector<transports::LocalRegion> regions;  // the receive buffers, registered (PUT; GET
                                                   // where the transport needs local memh)
    std::vector<transports::PeerKey> keys;         // kRndvGet: the sender's segments' keys
    RndvCompletion comp;                           // kRndvGet: the gets
};

// A posted receive (fi_recv*, fi_trecv*): its common part first (what matching reads), then
// the multi-receive and rendezvous parts.
struct RecvReq : RecvCommon, MultiRecvPart, RndvRecvPart {};

// A message that arrived with no matching receive (its bytes copied here), or one whose
// fragments are still arriving.
struct UnexpMsg {
    Hook<UnexpMsg> hook;
    bool tagged = false;
    uint32_t src = kNoPeer;
    uint32_t wire_flags = 0;
    uint64_t tag = 0;
    uint64_t data = 0;
    size_t total = 0;     // the message's length
    size_t received = 0;  // bytes arrived so far
    std::vector<uint8_t> bytes;  // its payload, copied (when `kept` is not set)
    // Or its payload left in the transport's receive descriptor (a one-message eager that
    // arrived in one: shared memory's bcopy), released when the message is retired
    // (DataPath::retire_unexpected): no copy on arrival.
    void *desc = nullptr;
    const uint8_t *kept = nullptr;
    const uint8_t *payload() const noexcept { return kept != nullptr ? kept : bytes.data(); }
    RecvReq *claimed = nullptr;  // a receive that matched it before all fragments arrived
    bool rts = false;            // an announced rendezvous (its data is still at the sender)
    RtsInfo rts_info;
    void *claim_ctx = nullptr;   // FI_PEEK | FI_CLAIM took it: only FI_CLAIM with this context
    bool discarded = false;      // FI_DISCARD while fragments were still arriving
    bool sender_gone = false;    // an RTS whose sender restarted since (restart_peer): the
                                 // data it announced is gone, its receive fails
};

}  // namespace ufi::runtime::proto
