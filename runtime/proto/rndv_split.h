// Rendezvous SPLIT (wire.h kRndvSplit), a GET both sides copy at once: over a transport whose
// zero copy the CPU makes (cma), a large message's receiver reads the part before a split point
// and asks the sender, with RTR, to write the part behind it, so two CPUs copy at once. It ends
// when both halves are in: ATS (the receiver's gets) and ATP (the sender's puts) cross, and each
// side finishes once it has sent its own and received the other's.
//
// The sender offers it in RTS (kRtsSenderPuts) where it can write over the transport it offered
// to be read over; the receiver decides (UFI_RNDV_SPLIT, this side's setting).
#pragma once

#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"

#include <cstdint>

namespace ufi::transports {
struct OpenIface;
}

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class RndvSplit {
  public:
    explicit RndvSplit(DataPath &dp) noexcept : dp_(dp) {}
    RndvSplit(const RndvSplit &) = delete;
    RndvSplit &operator=(const RndvSplit &) = delete;

    // Sender, building RTS for a GET over `zcopy`: whether to offer writing a part.
    bool offer(const transports::OpenIface &zcopy) noexcept;
    // Receiver, a GET it can do: when the message qualifies, RTR for the part behind the split
    // point, then the gets before it. false: nothing was sent (a plain GET follows).
    bool start(Peer &p, RecvReq *r, const RtsInfo &info) noexcept;

    // Sender, the receiver's RTR naming the `sum` bytes it wants written (0: segments that do
    // not add up), r's recv_id and length set from it: where our puts start (r.put_base).
    // false: the RTR did not answer what we offered; it was refused (ATP with an error) and r
    // waits on for ATS, as a plain GET.
    bool take_rtr(Peer &p, SendReq &r, const wire::RtrHdr &h, uint64_t sum) noexcept;
    // Sender: our half cannot be written (r.status set): ATP says so, and the receiver's ATS
    // ends it.
    void cannot_put(SendReq &r) noexcept;
    // Sender, ATS for a split send; receiver, ATP for a split receive.
    void on_ats(SendReq &r, int status) noexcept;
    void on_atp(RecvReq &r, int status) noexcept;
    // Our own half is done (our ATS or ATP went): whether the operation is finished too (the
    // other side's half came, or the peer failed). Receiver first, then sender.
    bool gets_done(const Peer &p, RecvReq &r) noexcept;
    bool puts_done(const Peer &p, SendReq &r) noexcept;

  private:
    DataPath &dp_;
};

}  // namespace ufi::runtime::proto
