// RMA over active messages (wire.h RMA_WRITE, RMA_WRITE_SHORT, RMA_READ_REQ, RMA_READ_RESP,
// RMA_ACK), one protocol module: fi_write* and fi_read* on every transport. The target moves
// the bytes itself, after TargetAccess checked the access against its MR key table (key,
// enabled state, FI_REMOTE_READ / FI_REMOTE_WRITE, bounds), so a refused access leaves its
// memory untouched and the initiator gets the error as a completion. Operations ride the
// peer's send queue like messages, in order with them: a read posted after a write to the same
// peer sees the write (the target handles a lane's messages in order).
//
// A write completes when the target acknowledged its last fragment (the data is in place:
// delivery complete, whatever level was asked), a read when its last bytes arrived. From the
// peer's zero-copy threshold on, where RmaZcopyProtocol says it applies, the operation goes
// that way instead (rma_zcopy.h).
#pragma once

#include "base/status.h"
#include "runtime/proto/message_handler.h"
#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <sys/types.h>

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class RmaProtocol {
  public:
    // `dp`: the data path whose peers, scheduler, control messages and completions it uses.
    explicit RmaProtocol(DataPath &dp) noexcept : dp_(dp) {}
    RmaProtocol(const RmaProtocol &) = delete;
    RmaProtocol &operator=(const RmaProtocol &) = delete;

    // fi_write* / fi_read*: moves `local` to (kWrite) or from (kRead) the peer's `segs` (keys
    // and addresses of its MRs; at most wire::kMaxRmaSegments, whose lengths sum to
    // local.total). `flags`: FI_COMPLETION, FI_INJECT (the data is copied at the call),
    // FI_REMOTE_CQ_DATA (`data` for the target's CQ). `inject_call` (fi_inject_write*) writes
    // no completion; FI_INJECT alone (fi_writemsg) still writes one (fi_rma(3)). 0,
    // -FI_EAGAIN, -FI_EINVAL, -FI_EMSGSIZE, or the peer's error. Access errors come back as
    // error completions.
    ssize_t start(SendOp op, const IovList &local, const wire::RmaSeg *segs, size_t nsegs,
                  fi_addr_t dest, void *context, uint64_t flags, uint64_t data,
                  bool inject_call) noexcept;
    // fi_inject_write / fi_inject_writedata (flags FI_INJECT, and FI_REMOTE_CQ_DATA with
    // `data`): one buffer, one target range. Short ones to a connected peer go at once with no
    // record (fast_path.h); the rest as start() does them.
    inline ssize_t inject_write(const void *buf, size_t len, fi_addr_t dest, uint64_t key,
                                uint64_t addr, uint64_t flags, uint64_t data) noexcept;
    // The scheduler hands it a queued write, read, or a read's response (the target's): kOk
    // when it is complete, kInProgress when the peer's answer completes it, kNoResource, or
    // an error.
    base::Status push(Peer &p, SendReq &r) noexcept;
    // A one-sided record (RMA, atomic, or the target's side of a peer's access) reached its
    // end: its completion and counter (the initiator's), its count (a read served), back to
    // the pool.
    void finish(SendReq *r, int error) noexcept;
    // RMA_ACK of a write sent with no record (or the peer failed): its counter, its error
    // completion.
    void finish_untracked_write(Peer &p, uint64_t len, int error) noexcept;

    // The target's side, shared with zero copy: a peer's write is in place (counters, remote
    // CQ data); a read's answer without data (an error, or a zero-copy read's end at `offset`).
    void target_write_done(Peer &p, const wire::RmaSeg *segs, size_t nsegs, uint64_t total,
                           uint32_t flags, uint64_t data) noexcept;
    void send_read_answer(Peer &p, uint64_t id, int status, uint64_t offset) noexcept;

    // RMA_WRITE, RMA_WRITE_SHORT, RMA_READ_REQ at the target; RMA_READ_RESP and RMA_ACK at
    // the initiator.
    static std::span<const MessageHandler> handlers() noexcept;

  private:
    // Whether a write of `len` bytes (with remote CQ data or not) to one target range goes
    // to p as one RMA_WRITE_SHORT.
    inline bool fits_write_short(const Peer &p, size_t len, bool has_data) const noexcept;
    // Sends it (the caller checked fits_write_short); `id` comes back in RMA_ACK.
    base::Status send_write_short(Peer &p, uint64_t id, const wire::RmaSeg &seg,
                                  const IovList &local, uint32_t flags, uint64_t data) noexcept;
    // An injected short write of [buf, +len) to a connected peer with nothing queued, sent at
    // once with no request record (Peer::untracked_writes counts it): true when it went.
    inline bool write_untracked(Peer &p, const void *buf, size_t len, uint64_t key,
                                uint64_t addr, uint64_t flags, uint64_t data) noexcept;

    void handle_write(const uint8_t *data, size_t length) noexcept;
    void handle_write_short(const uint8_t *data, size_t length) noexcept;
    void handle_read_request(const uint8_t *data, size_t length) noexcept;
    void handle_read_answer(const uint8_t *data, size_t length) noexcept;
    void handle_ack(const uint8_t *data, size_t length) noexcept;

    DataPath &dp_;
};

}  // namespace ufi::runtime::proto
