// Rendezvous PUT (wire.h kRndvPut): the receiver registers its matched buffer and names it in
// RTR; the sender writes it with zero-copy puts (tcp here, RDMA elsewhere) and, once they
// completed, tells the receiver with ATP. The same sender side writes SPLIT's second half
// (rndv_split.h) and RMA writes a target lets the initiator put (rma_zcopy.h), which answer
// with the same RTR. The puts themselves are the zero-copy engine's (zcopy_transfers.cpp).
#pragma once

#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class RndvPut {
  public:
    explicit RndvPut(DataPath &dp) noexcept : dp_(dp) {}
    RndvPut(const RndvPut &) = delete;
    RndvPut &operator=(const RndvPut &) = delete;

    // Receiver: RTR naming r's buffer for the sender to write, where the sender's transport
    // (info.transport) is ours and the buffer registers. false: nothing was sent.
    bool start(Peer &p, RecvReq *r, const RtsInfo &info) noexcept;
    // Sender: an RTR of PUT or SPLIT (checked by the caller, r's recv_id and length set from
    // it): its segments and keys follow the header in `data` (`length` bytes in all). Puts
    // into them, or fails r (ATP / RMA_WRITE_DONE with the error) when it cannot.
    void on_rtr(Peer &p, SendReq &r, const wire::RtrHdr &h, const uint8_t *data,
                size_t length) noexcept;
    // Receiver: ATP, the sender's puts are all in place.
    void on_atp(RecvReq &r, int status) noexcept;

  private:
    DataPath &dp_;
};

}  // namespace ufi::runtime::proto
