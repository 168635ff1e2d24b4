// Control messages (RTR, ATS, ATP, RMA acknowledgements and answers), a service the protocol
// modules use: small messages of the protocols' own, sent at once when the peer's control
// queue is empty and the lane has room, else queued in order (Peer::ctrl) and sent ahead of
// the peer's data when the scheduler drains it. Records come from a pool whose byte vectors
// keep their capacity: a warm data path builds one without allocating.
#pragma once

#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class ControlChannel {
  public:
    explicit ControlChannel(DataPath &dp) noexcept : dp_(dp) {}
    ControlChannel(const ControlChannel &) = delete;
    ControlChannel &operator=(const ControlChannel &) = delete;

    // A control message from the pool: byte 0 `id`, then `payload` bytes for the caller to
    // fill (a builder may also resize it), to be given to send() or back by drop(); nullptr
    // when memory runs out.
    ControlMsg *make(uint8_t id, size_t payload) noexcept;
    void drop(ControlMsg *m) noexcept;
    // Sends m at once when the peer's control queue is empty and the lane has room, else
    // queues it in order (drain() sends it ahead of the peer's data). Takes m. A lane that
    // fails the send fails the peer.
    void send(Peer &p, ControlMsg *m) noexcept;
    // An AckHdr message (ATS, ATP, RMA_ACK, RMA_WRITE_DONE) naming operation `which` with
    // `status`: one short message when nothing is queued before it, else queued. The caller
    // checks afterwards whether the peer failed under it (ZcopyTransfers::holds).
    void send_ack(Peer &p, uint8_t id, uint64_t which, int status) noexcept;
    // Sends the peer's queued control messages; false while the lane has no room (or it
    // failed the peer).
    bool drain(Peer &p) noexcept;
    // The peer failed: its queued control messages go back to the pool unsent.
    void drop_queued(Peer &p) noexcept;
    // An AckHdr message in `a`: false (dropped, counted) when malformed or from no connected
    // peer.
    bool parse_ack(uint8_t id, const uint8_t *data, size_t length, wire::AckHdr &a) noexcept;

  private:
    DataPath &dp_;
    Pool<ControlMsg> pool_;
};

}  // namespace ufi::runtime::proto
