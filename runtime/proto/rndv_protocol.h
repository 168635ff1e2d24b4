// Rendezvous (wire.h RTS, RTR, ATS, ATP, RNDV_DATA): a message above the peer's threshold is
// announced with RTS and moved once a receive matches it, by one of four protocols, each a
// module of its own: the receiver reads the sender's buffers (GET, rndv_get.h: cma here, RDMA
// elsewhere; SPLIT, rndv_split.h: both sides copy a part at once over a transport whose zero
// copy is a CPU copy), or the sender writes the receiver's (PUT, rndv_put.h: tcp), or, where
// neither exists, the sender streams it in active messages into the matched buffer (AM,
// rndv_am.h). No copy through an unexpected buffer either way, and the receive buffer is known
// before a byte moves.
//
// This class is what they share: the choice per peer (choose(), the capability probe, once at
// connection: the protocol both sides can do, its transport and its threshold), RTS (built,
// parsed, matched or kept as unexpected), the receive's record in the table of operations in
// flight and its completion, and the dispatch of RTR, ATS and ATP to the protocol they answer.
//
// The zero-copy transfers themselves (gets and puts, their completions, retries and failures)
// and the table of operations in flight by id are the data path's (zcopy_transfers.cpp), which
// RMA zero copy uses too.
//
// Over `self` the whole exchange runs inside the sender's RTS call (each handler sends the next
// message at once); a send being announced is therefore never finished under that call
// (SendReq::announcing), its caller finishes it.
#pragma once

#include "base/status.h"
#include "runtime/proto/message_handler.h"
#include "runtime/proto/requests.h"
#include "runtime/proto/rndv_am.h"
#include "runtime/proto/rndv_get.h"
#include "runtime/proto/rndv_put.h"
#include "runtime/proto/rndv_split.h"
#include "runtime/proto/wire.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class RndvProtocol {
  public:
    explicit RndvProtocol(DataPath &dp) noexcept
        : dp_(dp), get_(dp), split_(dp), put_(dp), am_(dp) {}
    RndvProtocol(const RndvProtocol &) = delete;
    RndvProtocol &operator=(const RndvProtocol &) = delete;

    // Picks the peer's rendezvous protocol, transport and threshold (once, at connection).
    void choose(Peer &p);
    // Sends RTS for r, where the data path's rts_fits() holds (kOk, kNoResource: again later,
    // or an error).
    base::Status start_send(Peer &p, SendReq &r) noexcept;
    // kRndvAm: the data after RTR, from the peer's send queue.
    base::Status push_data(Peer &p, SendReq &r) noexcept { return am_.push_data(p, r); }
    // A receive matched an RTS (at its arrival, or kept as unexpected): moves the data in by
    // the protocol both sides can do.
    void start_recv(RecvReq *r, uint32_t src, uint32_t wire_flags, uint64_t tag,
                    uint64_t cq_data, RtsInfo &info) noexcept;
    // The receive's data is all in place (its gets, the peer's puts or streamed data).
    void finish_recv(RecvReq *r) noexcept;

    // SPLIT, for the zero-copy engine's gets and puts and the PUT module's RTR.
    RndvSplit &split() noexcept { return split_; }

    // RTS and RNDV_DATA at the receiver, RTR and ATS at the sender, ATP at the receiver.
    static std::span<const MessageHandler> handlers() noexcept;

  private:
    bool parse_rts(const uint8_t *data, size_t length, wire::EagerHdr &h, uint64_t &cq_data,
                   RtsInfo &info) noexcept;
    void handle_rts(const uint8_t *data, size_t length) noexcept;
    void handle_rtr(const uint8_t *data, size_t length) noexcept;
    void handle_ack(uint8_t id, const uint8_t *data, size_t length) noexcept;
    void handle_ats(const uint8_t *data, size_t length) noexcept {
        handle_ack(wire::kAmAts, data, length);
    }
    void handle_atp(const uint8_t *data, size_t length) noexcept {
        handle_ack(wire::kAmAtp, data, length);
    }
    void handle_data(const uint8_t *data, size_t length) noexcept { am_.handle_data(data, length); }

    DataPath &dp_;
    RndvGet get_;
    RndvSplit split_;
    RndvPut put_;
    RndvAm am_;
    // Where start_send() builds an RTS (kept between sends: no allocation once grown).
    SegmentMessageScratch rts_scratch_;
    // Where handle_rts() parses an RTS (likewise kept), and whether a handling uses it now.
    RtsInfo rts_in_;
    bool rts_in_busy_ = false;
};

}  // namespace ufi::runtime::proto
