// RMA moved zero copy, one protocol module. From the peer's zero-copy threshold on, where a
// zero-copy transport joins the two (cma here, RDMA elsewhere; tcp for reads), the initiator
// registers its buffers and sends one request naming them (RMA_WRITE or RMA_READ_REQ with
// wire::kRmaZcopy); the target checks the access as always (TargetAccess), then moves the
// bytes itself (get_zcopy for a write, put_zcopy for a read) with the rendezvous's transfer
// engine, counts it and answers. Target-driven, so the target's protection and FI_RMA_EVENT
// counting hold, and no key cache is needed.
//
// A write over a transport without get (tcp) is the exception (wire::kRmaInitiatorPuts): the
// target checks it and names its memory in RTR, the initiator puts it and says so
// (RMA_WRITE_DONE), and the target counts it then.
#pragma once

#include "base/status.h"
#include "runtime/proto/message_handler.h"
#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"
#include "transports/transport_code.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class RmaZcopyProtocol {
  public:
    explicit RmaZcopyProtocol(DataPath &dp) noexcept : dp_(dp) {}
    RmaZcopyProtocol(const RmaZcopyProtocol &) = delete;
    RmaZcopyProtocol &operator=(const RmaZcopyProtocol &) = delete;

    // The decision, made once per operation before anything is sent: whether write or read r
    // to p goes zero copy (its size reaches the peer's threshold, a zero-copy transport joins
    // the two and may be used, the buffers fit one request, never an injected write) and, where
    // the target reads or writes our buffers, they registered. Kept in r.rma_way, so that a
    // retry after a full lane does not decide again. False: active messages (logged when the
    // buffers would not register).
    bool choose(Peer &p, SendReq &r) noexcept;
    // Initiator: the one request, where choose() said so and r holds a send slot: kOk,
    // kNoResource (sent again later), or an error the operation completes with.
    base::Status send(Peer &p, SendReq &r) noexcept;
    // A write we put: its puts are on their way before anything sent after them, or it ended;
    // the peer's later operations may go.
    void release_put_hold(SendReq &r) noexcept;

    // Target: a zero-copy request whose access was checked (`where`: the local buffers; the
    // request's section after its segments in [section, +len)); the gets or puts start, or
    // the grant goes (kRmaInitiatorPuts). Answers the initiator with an error when it cannot.
    void start(Peer &p, SendOp op, const wire::RmaHdr &h, const wire::RmaSeg *segs,
               const IovList &where, const uint8_t *section, size_t len) noexcept;
    // The target's gets or puts ended: counted and answered.
    void done(SendReq *r) noexcept;

    // RMA_WRITE_DONE at the target (the requests themselves are RmaProtocol's messages).
    static std::span<const MessageHandler> handlers() noexcept;

  private:
    // The probe part of choose(): what the peer's lanes and the request's shape allow.
    bool fits(const Peer &p, const SendReq &r) const noexcept;
    base::Status send_write_put(Peer &p, SendReq &r, transports::TransportCode transport) noexcept;
    // A target's record of a peer's zero-copy access (kWriteTarget, kReadResp) from its
    // request header, started; and one that could not start, returned to the pool.
    void start_target_record(SendReq &t, const Peer &p, SendOp op, uint8_t protocol,
                             const wire::RmaHdr &h) noexcept;
    void drop_target_record(SendReq *t) noexcept;
    // kRmaInitiatorPuts at the target: RTR grants the initiator `where` (a record waits for
    // RMA_WRITE_DONE, which has it counted); RMA_ACK with -FI_EIO when it cannot.
    void grant_put(Peer &p, const wire::RmaHdr &h, const wire::RmaSeg *segs,
                   const IovList &where, transports::TransportCode transport) noexcept;
    void handle_write_done(const uint8_t *data, size_t length) noexcept;

    DataPath &dp_;
    // The request is built here (capacity kept: no allocation once grown; packed out before
    // send_bcopy returns, so a request sent inside that call, over `self`, may reuse them).
    SegmentMessageScratch scratch_;
};

}  // namespace ufi::runtime::proto
