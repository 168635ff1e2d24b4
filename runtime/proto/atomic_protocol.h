// Atomics over active messages (wire.h ATOMIC / ATOMIC_RESP), one protocol module: the
// initiator sends the op, the datatype, the target's segments and the operand (and compare)
// values in one message; the target checks the access (TargetAccess: FI_REMOTE_WRITE to
// update, FI_REMOTE_READ to fetch), applies the op under the process's atomic lock
// (atomic_ops.h) and answers with the old values. Every op on every datatype libfabric defines
// it for is served this way, on every transport (no capability to probe); the operations ride
// the peer's send queue in order with its messages and RMA.
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

class AtomicProtocol {
  public:
    // `dp`: the data path whose peers, scheduler, control messages and completions it uses.
    explicit AtomicProtocol(DataPath &dp) noexcept : dp_(dp) {}
    AtomicProtocol(const AtomicProtocol &) = delete;
    AtomicProtocol &operator=(const AtomicProtocol &) = delete;

    // fi_atomic* (kind kWrite), fi_fetch_atomic* (kFetch), fi_compare_atomic* (kCompare):
    // `op` on `count` elements of `datatype` at the peer's `segs` (byte lengths), with
    // `operand` and `compare` (copied at the call); the old values land in `result`.
    // `inject_call` (fi_inject_atomic) writes no completion; FI_INJECT alone (fi_atomicmsg)
    // still writes one. 0, -FI_EAGAIN, -FI_EINVAL, -FI_EOPNOTSUPP (op and datatype do not go
    // together), or the peer's error. Access errors come back as error completions.
    ssize_t start(uint8_t kind, int op, int datatype, size_t count, const IovList &operand,
                  const IovList &compare, const IovList &result, const wire::RmaSeg *segs,
                  size_t nsegs, fi_addr_t dest, void *context, uint64_t flags, uint64_t data,
                  bool inject_call) noexcept;
    // The scheduler hands it a queued atomic (SendOp::kAtomic): kOk when its answer came
    // inside the call (self), kInProgress when the answer will complete it, kNoResource, or
    // an error.
    base::Status push(Peer &p, SendReq &r) noexcept;

    // ATOMIC at the target, ATOMIC_RESP at the initiator.
    static std::span<const MessageHandler> handlers() noexcept;

  private:
    void handle_request(const uint8_t *data, size_t length) noexcept;
    void handle_answer(const uint8_t *data, size_t length) noexcept;
    // The target's answer: the old values, or a status alone; queued behind the peer's control
    // messages when the lane has no room.
    void send_answer(Peer &p, uint64_t id, int status, const uint8_t *result,
                     size_t len) noexcept;

    DataPath &dp_;
};

}  // namespace ufi::runtime::proto
