// The zero-copy transfers, a service the rendezvous modules (rndv_*.h), RMA zero copy
// (rma_zcopy.h), eager zero copy and atomics use: the table of operations a peer answers by id
// (send slots, receive slots), the zero-copy lanes (opened on first use per transport and
// kind), the registration of a message's buffers and the unpacking of a peer's keys, the gets
// a receiver (or an RMA target) issues and the puts a sender issues, their completions, the
// ones a full lane refused (retried from progress), and what a peer's failure does to them.
//
// zcopy_transfers.cpp holds the table and the transfers, zcopy_lanes.cpp the lanes and the
// registrations.
#pragma once

#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"
#include "transports/lanes/rma_lane.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace ufi::transports {
struct OpenIface;
}

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

// Records by the id their peer names them with: the record's `rndv_slot`, an index here
// (0: none). Freed slots are reused; the table only grows.
template <class Req>
class SlotTable {
  public:
    // Gives r a slot; false when memory runs out.
    bool take(Req &r) noexcept {
        try {
            if (!free_.empty()) {
                r.rndv_slot = free_.back();
                free_.pop_back();
                slots_[r.rndv_slot] = &r;
                return true;
            }
            if (slots_.empty()) slots_.push_back(nullptr);  // slot 0: none
            slots_.push_back(&r);
            r.rndv_slot = static_cast<uint32_t>(slots_.size() - 1);
            return true;
        } catch (const std::bad_alloc &) {
            return false;
        }
    }
    void release(Req &r) noexcept {
        if (r.rndv_slot == 0) return;
        slots_[r.rndv_slot] = nullptr;
        try {
            free_.push_back(r.rndv_slot);
        } catch (const std::bad_alloc &) {
            // The slot is not reused; the table only grows.
        }
        r.rndv_slot = 0;
    }
    // The record in slot `id` for `peer`; nullptr for none (or another peer's).
    Req *find(uint64_t id, uint32_t peer) const noexcept {
        if (id == 0 || id >= slots_.size()) return nullptr;
        Req *r = slots_[id];
        return r != nullptr && r->peer == peer ? r : nullptr;
    }
    bool holds(uint32_t slot, const Req *r) const noexcept { return slots_[slot] == r; }
    bool busy() const noexcept { return slots_.size() > free_.size() + 1; }
    // Slot i (1 to size() - 1; nullptr: free). By index, as callers may finish (and release)
    // the record they visit.
    size_t size() const noexcept { return slots_.size(); }
    Req *operator[](size_t i) const noexcept { return slots_[i]; }

  private:
    std::vector<Req *> slots_;
    std::vector<uint32_t> free_;
};

class ZcopyTransfers {
  public:
    explicit ZcopyTransfers(DataPath &dp) noexcept : dp_(dp) {}
    ZcopyTransfers(const ZcopyTransfers &) = delete;
    ZcopyTransfers &operator=(const ZcopyTransfers &) = delete;

    // --- Lanes and registrations (zcopy_lanes.cpp) ---
    // The iface of `transport` that does `kind` with registered memory; nullptr if none.
    transports::OpenIface *rma_iface(transports::TransportCode transport,
                                     transports::RmaKind kind) noexcept;
    // The iface zero copy of `kind` over `transport` to p goes on: its AM lane's when that
    // lane is over it and serves it (open_rma then shares the lane), else rma_iface()'s.
    const transports::OpenIface *zcopy_iface(const Peer &p, transports::TransportCode transport,
                                             transports::RmaKind kind) noexcept;
    // Connects the peer's zero-copy lane over `transport` (kept while the peer lives), or
    // shares its AM lane (zcopy_iface). false for kNoTransport.
    bool open_rma(Peer &p, transports::TransportCode transport, transports::RmaKind kind) noexcept;
    // Registers iov's buffers (up to `length` bytes) on `iface`'s memory domain.
    static bool register_buffers(const transports::OpenIface &iface, const IovList &iov,
                                 size_t length, std::vector<transports::LocalRegion> &out) noexcept;
    // The keys `info` carries, unpacked for the peer's zero-copy lane; false (none) when one
    // does not unpack.
    bool unpack_keys(Peer &p, const RtsInfo &info, std::vector<transports::PeerKey> &keys) noexcept;

    // --- Operations in flight, by the id their peer names them with (slot 0: none) ---
    // Gives r a slot in the table of operations the peer answers by id; false when memory
    // runs out.
    bool take_send_slot(SendReq &r) noexcept;
    void release_send_slot(SendReq &r) noexcept;
    bool take_recv_slot(RecvReq &r) noexcept;
    void release_recv_slot(RecvReq &r) noexcept;
    SendReq *send_by_id(uint64_t id, uint32_t peer) const noexcept;
    RecvReq *recv_by_id(uint64_t id, uint32_t peer) const noexcept;
    // Whether `slot` still holds r: after a call that may have failed the peer (sending an
    // ack), which then finished r.
    bool holds(uint32_t slot, const SendReq *r) const noexcept { return sends_.holds(slot, r); }
    bool holds(uint32_t slot, const RecvReq *r) const noexcept { return recvs_.holds(slot, r); }
    // Whether receives are in flight (the peer checks watch them).
    bool receiving() const noexcept { return recvs_.busy(); }
    // Calls f(const RecvReq &) for each receive in flight.
    template <class F>
    void each_recv(F f) const {
        for (size_t i = 1; i < recvs_.size(); ++i) {
            if (recvs_[i] != nullptr) f(*recvs_[i]);
        }
    }
    // Marks in `refs` (one per peer slot) the peers a transfer in flight or held names.
    void mark_peers(std::vector<uint8_t> &refs) const noexcept {
        for (size_t i = 1; i < sends_.size(); ++i) {
            if (sends_[i] != nullptr && sends_[i]->peer < refs.size()) refs[sends_[i]->peer] = 1;
        }
        for (size_t i = 1; i < recvs_.size(); ++i) {
            if (recvs_[i] != nullptr && recvs_[i]->peer < refs.size()) refs[recvs_[i]->peer] = 1;
        }
        for (const Held &h : held_) {
            const uint32_t peer = h.send != nullptr ? h.send->peer : h.recv != nullptr ? h.recv->peer : kNoPeer;
            if (peer < refs.size()) refs[peer] = 1;
        }
    }
    // An operation in the send table finished (a rendezvous's ATS or ATP sent, its streamed
    // data handed over, an answer, an error): completed, unless its RTS call is still running
    // (SendReq::announcing: its caller finishes it).
    void finish_send_rndv(SendReq *r) noexcept;

    // --- Transfers ---
    // Reads the sender's segments into the receive buffer (its first r->get_end bytes), one
    // get per piece, from r->issued on (a full lane leaves the rest to progress).
    void issue_gets(RecvReq *r) noexcept;
    void gets_done(RecvReq *r) noexcept;
    // RTR (kRndvPut, or kRndvSplit with `from` > 0) in `m` (byte 0 its AM id): [iov, +length)
    // registered on `oi` into `regions`, its bytes from `from` on named as segments with
    // their packed keys, for `oi`'s transport. false (and nothing registered) when a buffer
    // does not register or the message exceeds the lane.
    bool build_rtr_put(Peer &p, const transports::OpenIface &oi, const IovList &iov,
                       size_t length, std::vector<transports::LocalRegion> &regions,
                       uint64_t send_id, uint64_t recv_id,
                       std::vector<uint8_t> &m, size_t from = 0) noexcept;
    // Writes r's buffers from r->offset into the segments the peer named (an RMA target
    // serving a peer's write reads them instead).
    void issue_puts(SendReq *r) noexcept;
    void puts_done(SendReq *r) noexcept;
    // Gets and puts a full lane refused: whether any wait, and issuing them again (progress).
    bool has_retries() const noexcept { return !retry_gets_.empty() || !retry_puts_.empty(); }
    unsigned retry() noexcept;
    // The peer failed: its transfers complete with its error (those with zero-copy operations
    // in flight when they complete, unless `force`: their endpoint is gone).
    void fail(Peer &p, bool force = false) noexcept;
    // The data path closes: completions that zero-copy operations still in flight call as
    // their lanes close do nothing.
    void detach_completions() noexcept;

    // --- Buffers a failed peer may still write ---
    // A transfer whose buffers the peer writes itself (a rendezvous receive it answers by
    // PUT, SPLIT's second half, a zero-copy read it answers by put) is not given back to the
    // application the moment the peer fails: what the peer sent before it died may still be
    // on its way (tcp: in our socket, which the transport reads at a later progress call and
    // whose puts it writes where they say, whatever we decided meanwhile), and a buffer the
    // application has back must not change under it. Such a transfer is held here and
    // completes, with the peer's error, once kFailedWriterGrace has passed and progress has
    // run kFailedWriterRounds times since (the transport reading what waits meanwhile).
    // true: held (the caller must not finish it; a transfer already held stays so, whoever
    // finishes it again); false: finish it now.
    bool hold_from_failed_writer(RecvReq &r) noexcept;
    bool hold_from_failed_writer(SendReq &r) noexcept;
    bool holding_failed() const noexcept { return !held_.empty(); }
    // Progress: completes the held transfers whose time came; how many.
    unsigned release_held() noexcept;
    static constexpr std::chrono::milliseconds kFailedWriterGrace{250};
    static constexpr unsigned kFailedWriterRounds = 16;

  private:
    DataPath &dp_;
    SlotTable<SendReq> sends_;
    SlotTable<RecvReq> recvs_;
    std::vector<RecvReq *> retry_gets_;
    std::vector<SendReq *> retry_puts_;
    struct Held {
        SendReq *send;  // one of the two
        RecvReq *recv;
        std::chrono::steady_clock::time_point until;
        unsigned rounds;
    };
    std::vector<Held> held_;
    std::vector<Held> held_due_;  // release_held()'s scratch (no allocation once grown)
    bool hold(SendReq *s, RecvReq *r) noexcept;
    // A transfer that ended with `status` towards `peer`, now failed.
    bool writer_failed(int status, uint32_t peer) const noexcept;
    // Where build_rtr_put() gathers an RTR's segments and keys (kept: no allocation once grown).
    SegmentMessageScratch rtr_scratch_;
};

}  // namespace ufi::runtime::proto
