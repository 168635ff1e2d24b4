// Rendezvous AM (wire.h kRndvAm), where neither side can read or write the other's memory: the
// receiver answers RTS with RTR naming how much it takes, and the sender streams the data in
// RNDV_DATA active messages from its send queue straight into the matched buffer. It spares
// the unexpected copy and memory of a large message; the stream's last byte finishes both
// sides (the sender when it went, the receiver when it came).
#pragma once

#include "base/status.h"
#include "runtime/proto/requests.h"

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class RndvAm {
  public:
    explicit RndvAm(DataPath &dp) noexcept : dp_(dp) {}
    RndvAm(const RndvAm &) = delete;
    RndvAm &operator=(const RndvAm &) = delete;

    // Receiver: RTR asking for the stream (or, out of memory, ATS with the error).
    void start(Peer &p, RecvReq *r) noexcept;
    // Sender: the receiver's RTR came; the data goes from the peer's send queue.
    void on_rtr(Peer &p, SendReq &r) noexcept;
    // Sender, from the send queue: RNDV_DATA from r.offset on (kOk once all went,
    // kNoResource: again later, or an error).
    base::Status push_data(Peer &p, SendReq &r) noexcept;
    // Receiver: one RNDV_DATA.
    void handle_data(const uint8_t *data, size_t length) noexcept;

  private:
    DataPath &dp_;
};

}  // namespace ufi::runtime::proto
