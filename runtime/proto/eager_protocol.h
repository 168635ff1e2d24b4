// Eager messages (wire.h EAGER, EAGER_FIRST, EAGER_MIDDLE), one protocol module: a message that
// goes without rendezvous, as one short or bcopy active message when it fits the lane, as one
// zero-copy active message where the lane sends from the caller's buffers (tcp, RDMA), else as
// a first fragment and middle ones. The receiver matches a message at its first fragment, so
// matching follows arrival order per sender; one that comes before its receive is kept as
// unexpected (match.h).
//
// The way a message goes (DataPath::way_of: rendezvous or one of these) is decided before
// anything is sent. The send fast path (fast_path.h: a one-buffer message that fits one short
// message to a connected peer with nothing queued) is the data path's, inline in the
// application's call. The arrival handlers are defined in receive.cpp, beside the receive
// functions they call (docs/design-notes.md: a cross-file call costs the common receive about
// 14 instructions in saved registers).
#pragma once

#include "base/status.h"
#include "runtime/proto/message_handler.h"
#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace ufi::runtime::proto {

class DataPath;
struct Peer;
enum class MessageWay : uint8_t;

class EagerProtocol {
  public:
    explicit EagerProtocol(DataPath &dp) noexcept : dp_(dp) {}
    EagerProtocol(const EagerProtocol &) = delete;
    EagerProtocol &operator=(const EagerProtocol &) = delete;

    // Whether a message of `total` bytes with these flags goes as one short or bcopy active
    // message from `iovcnt` buffers (send_single's cases).
    static bool fits_single(const Peer &p, size_t total, size_t iovcnt,
                            uint32_t wire_flags) noexcept;
    // One message in one active message (short, else bcopy) straight from the caller's
    // buffers, where fits_single() holds: kOk, kNoResource, or an error.
    base::Status send_single(Peer &p, const IovList &iov, uint64_t tag, uint32_t wire_flags,
                             uint64_t data) noexcept;
    // The scheduler hands it message r, whose way (kSingle, kZeroCopy, kFragments) was
    // decided at its start; a message partly sent goes on with its middle fragments. kOk
    // when all of it went, kInProgress (a zero-copy message's completion finishes it),
    // kNoResource (r->offset says how far), or the lane's error.
    base::Status push(Peer &p, SendReq &r, MessageWay way) noexcept;

    // EAGER, EAGER_FIRST and EAGER_MIDDLE at the receiver.
    static std::span<const MessageHandler> handlers() noexcept;

  private:
    // A message above the bcopy size as one zero-copy active message from r's buffers (the
    // same bytes as EAGER), where r holds a send slot: kOk, kInProgress (its completion
    // finishes it), kNoResource, or an error.
    base::Status send_zcopy(Peer &p, SendReq &r) noexcept;

    // EAGER: matched, or kept as unexpected; `desc` (not null): the data lies in a transport
    // descriptor that may be kept instead of copied. Whether it was kept.
    bool arrive(const uint8_t *data, size_t length, void *desc) noexcept;
    void handle_first(const uint8_t *data, size_t length) noexcept;
    void handle_middle(const uint8_t *data, size_t length) noexcept;

    DataPath &dp_;
};

}  // namespace ufi::runtime::proto
