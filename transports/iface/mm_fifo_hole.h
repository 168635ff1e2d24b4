// A hole in the shared-memory FIFO this process receives on (UCT's mm transports: posix,
// sysv), and how ufi closes it.
//
// Why: a writer claims a FIFO element by advancing the shared head (a compare-and-swap),
// copies its message in, and only then publishes the element by flipping its owner bit. The
// reader (UCT's iface progress) reads in order and checks nothing but that bit: a writer
// killed between claim and publish leaves an element that is never published, and the reader
// waits at it for ever. Every other sender then fills the rest of the FIFO and is refused
// from then on: one process killed at the wrong instant (about one kill in several hundred
// in the soak, docs/reliability.md) stalls every shared-memory peer of the endpoint. UCX has
// no call to skip the element or reset the FIFO.
//
// What ufi does: the endpoint's worker looks now and then (DataPath::check_peers_if_due) at
// the element its reader waits at; one claimed and still unpublished after
// UFI_SHM_HOLE_TIMEOUT is published by ufi as an empty message under an active-message id
// nobody sends (kMmHoleAmId), which the data path drops and counts. The message the writer
// was writing is lost (its writer is gone). The risk, stated in the docs: a live writer
// stopped in the middle of its copy for that long (SIGSTOP, a debugger) whose message is
// lost instead, and whose late write lands in an element the FIFO may have handed to another
// message by then.
//
// UCT does not expose its receive FIFO: locate_recv_fifo() reads it from the iface's words,
// accepted only where they fingerprint (UCX 1.13 to 1.18's uct_mm_iface_t: the FIFO's control
// block, its first element, the element being read, the read index and the FIFO's shift and
// mask, consistent with the geometry ufi configured and the control block naming this
// process as owner).
#pragma once

#include "transports/ucx_fwd.h"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace ufi::transports {

// The active-message id a skipped hole is published under: above every id ufi sends
// (runtime/proto/wire.h checks), below UCT's limit.
inline constexpr uint8_t kMmHoleAmId = 31;

// The receive FIFO of an mm iface, as located; all null where it did not fingerprint.
struct MmRecvFifo {
    const volatile uint64_t *head = nullptr;  // the control block's head (claims, plus a flag bit)
    uint8_t *elems = nullptr;                 // the first element
    const uint64_t *read_index = nullptr;     // UCT's reader's own index (in the iface)
    uint64_t mask = 0;                        // elements - 1
    unsigned shift = 0;                       // log2(elements): the owner bit's lap
    size_t elem_size = 0;
};

// Locates `iface`'s receive FIFO of `elem_count` elements of `elem_size` bytes; false where
// its layout does not fingerprint (logged at debug).
bool locate_recv_fifo(uct_iface_h iface, size_t elem_size, size_t elem_count, MmRecvFifo &out) noexcept;

// The element the reader waits at, watched from one call to the next. Called by the thread
// that progresses the iface, never from inside UCT's progress.
class MmHoleWatch {
  public:
    // Publishes the element the reader waits at as a hole when it has been claimed and left
    // unpublished for `after` (since the first call that saw it so); true when it did.
    bool check(const MmRecvFifo &f, std::chrono::steady_clock::time_point now,
               std::chrono::milliseconds after) noexcept;

  private:
    uint64_t index_ = UINT64_MAX;  // the claimed, unpublished element seen last
    std::chrono::steady_clock::time_point since_{};
};

}  // namespace ufi::transports
