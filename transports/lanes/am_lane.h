// The path active messages take to one peer: a UCT endpoint on the transport choose_am_lane()
// picked, with that transport's limits. Most transports connect to the peer's iface at once;
// some (InfiniBand rc, and tcp where UFI_CONNECT_TO_EP names it) connect endpoint to endpoint:
// both sides create one, exchange its address over a connect-to-iface lane (the handshake in
// runtime/proto/wireup.cpp) and connect it to the other's. The send calls are inline wrappers of
// UCT's, so the protocols (runtime/proto) pay nothing for going through this layer and stay
// free of UCX's API.
#pragma once

#include "transports/address.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/lanes/mm_fifo_head.h"
#include "transports/status.h"
#include "transports/ucx_fwd.h"
#include "transports/ucx_handles.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ufi::transports {

// One buffer of a send: UCT's uct_iov_t, field by field (am_lane.cpp checks the layout), so
// that the protocols build them without UCX's headers and the lanes pass them on as they are.
struct Iov {
    void *buffer;
    size_t length;
    void *memh;  // the buffer's registration on the lane's memory domain (nullptr: none)
    size_t stride;
    unsigned count;
};
// Packs a bcopy message into `dest` (at most the lane's max_bcopy bytes); returns its size.
using PackFn = size_t (*)(void *dest, void *arg);

inline Iov make_iov(const void *buffer, size_t length) {
    Iov iov;
    iov.buffer = const_cast<void *>(buffer);
    iov.length = length;
    iov.memh = nullptr;  // UCT_MEM_HANDLE_NULL
    iov.stride = 0;
    iov.count = 1;
    return iov;
}

// A zero-copy operation's completion: UCT's uct_completion_t, field by field (am_lane.cpp
// checks the layout). UCT calls `func` once `count` reaches zero; `status` holds the first
// error (set it to kOk before the operation).
struct Completion {
    void (*func)(Completion *self);
    int count;
    Status status;
};

class AmLane {
  public:
    AmLane() = default;
    AmLane(AmLane &&) noexcept = default;
    AmLane &operator=(AmLane &&) noexcept = default;

    // Connects to `peer` (a record of the same transport) from local `iface`.
    static Status connect(const OpenIface &iface, const address::TransportRecord &peer,
                          AmLane &out);

    // An endpoint-to-endpoint lane, not connected yet: its address (ep_address()) goes to the
    // peer, whose own goes to connect_to_peer().
    static Status create_p2p(const OpenIface &iface, AmLane &out);
    // This lane's endpoint address (create_p2p lanes): attr.ep_addr_len bytes.
    Status ep_address(std::vector<uint8_t> &out) const;
    // Connects a create_p2p lane to the peer's endpoint, whose address the peer sent; `peer`
    // is the peer's record of the same transport (its device address). UCS_ERR_INVALID_PARAM
    // when the address is not this transport's length.
    Status connect_to_peer(const address::TransportRecord &peer, const uint8_t *ep_addr,
                           size_t len) noexcept;
    bool p2p() const noexcept { return p2p_; }

    bool connected() const noexcept { return static_cast<bool>(ep_); }
    // Made by an ancestor process: this fork() child holds a copy of the parent's connection.
    bool inherited() const noexcept { return ep_.inherited(); }
    const Resource &resource() const noexcept { return *iface_->resource; }
    const OpenIface &iface() const noexcept { return *iface_; }
    // Bytes one short message may carry in all (its iovs together).
    size_t max_short() const noexcept { return max_short_; }
    // Bytes one bcopy message may carry.
    size_t max_bcopy() const noexcept { return max_bcopy_; }

    // kOk, kNoResource (retry after progress), or an error (the peer failed).
    Status send_short(uint8_t id, const Iov *iov, size_t iovcnt) noexcept;
    // One short message of `header` (8 bytes, first on the wire) and `length` bytes after it.
    Status send_short(uint8_t id, uint64_t header, const void *payload, unsigned length) noexcept;
    // The packed size, or a negative Status (kNoResource: retry after progress).
    ssize_t send_bcopy(uint8_t id, PackFn pack, void *arg) noexcept;
    // Whether one zero-copy message of a `header_len`-byte header and `length` bytes from
    // `iovcnt` buffers goes on this lane: the transport sends AMs from the caller's buffers
    // (AM_ZCOPY: tcp, RDMA) without a registration of them (no NEED_MEMH: tcp).
    bool fits_zcopy(size_t header_len, size_t length, size_t iovcnt) const noexcept {
        if (iface_ == nullptr || iface_->md_needs_memh) return false;
        const AmLimits &am = iface_->caps.limits.am;
        return iface_->caps.am_zcopy && header_len <= am.max_hdr &&
               header_len + length <= am.max_zcopy && iovcnt <= am.max_iov;
    }
    // The most bytes after a `header_len`-byte header that one such message carries (0: the
    // lane sends none).
    size_t max_zcopy_payload(size_t header_len) const noexcept {
        if (!fits_zcopy(header_len, 0, 1)) return 0;
        return iface_->caps.limits.am.max_zcopy - header_len;
    }
    // kOk (sent: the buffers are free), kInProgress (`comp` is called once they are), or
    // kNoResource, or an error. The receiver sees `header` and the buffers as one message.
    Status send_zcopy(uint8_t id, const void *header, unsigned header_len, const Iov *iov,
                      size_t iovcnt, Completion *comp) noexcept;
    // Whether check() is how this lane learns of a dead peer: UCT_IFACE_FLAG_EP_CHECK without
    // a keepalive of its own (shared memory, where a dead process is otherwise silent). tcp
    // reports a closed connection by itself (UCT_IFACE_FLAG_EP_KEEPALIVE), and UCX 1.13's tcp
    // ep check (a keepalive active message) crashes the receiving side when it meets a
    // connection still being set up, so it is never asked.
    bool can_check() const noexcept {
        return connected() && iface_ != nullptr && iface_->caps.ep_check &&
               !iface_->caps.ep_keepalive;
    }
    // Asks the transport whether the peer is alive; a dead one is reported to the iface's
    // error handler (EndpointWorker::report_failure), possibly from inside this call.
    void check() noexcept;
    // Whether everything sent on this lane has left this process (kOk), not yet
    // (kInProgress, kNoResource: progress and ask again), or an error. Over tcp that is the
    // peer's acknowledgment of it (UCT's flush asks for one); a completed short or bcopy send
    // may otherwise still wait in UCT's buffer for room in the socket.
    Status flushed() noexcept;
    // The UCT endpoint, to recognize it in an error report.
    uct_ep_h handle() const noexcept { return ep_.get(); }
    // Drops the connection (pending requests purged).
    void reset() noexcept {
        const uct_ep_h gone = ep_.get();
        ep_.reset();  // (drained first: ucx_handles.h)
        // What its last operations reported while it drained concerns nothing now.
        if (gone != nullptr && iface_ != nullptr && iface_->owner != nullptr) {
            iface_->owner->forget_failures(gone);
        }
        warms_ = false;
        demotes_ = false;
        answer_due_ = false;
        fifo_head_ = nullptr;
        fifo_elems_ = nullptr;
    }
    // Shared-memory FIFO lanes (UCT's mm transports: posix, sysv) start every send with an
    // atomic on the head of the peer's FIFO, and UCX built with assertions reads that head
    // when the message arrives, which leaves the line shared: the next send's atomic would
    // stall on taking it back (mm_fifo_head.h). Two calls ready it for the next send:
    //
    // prime(), when a message from this peer arrives (an answer to it is likely next): a
    // PREFETCHW takes the line back while the message is processed, long after the peer's
    // read of it. 8-byte ping-pong latency fell by about a tenth (docs/performance-history.md).
    // It also marks the next send to the peer as an answer (take_answer()).
    void prime() noexcept {
        if (fifo_head_ != nullptr && ep_) {
            prefetch_for_write(fifo_head_);
            answer_due_ = demotes_;
        }
    }
    // Whether a message from the peer was prime()d since the last call (on a lane that
    // demotes): the send being made answers it. The data path then demote()s the head once
    // it has stopped sending to this peer.
    bool take_answer() noexcept {
        const bool due = answer_due_;
        answer_due_ = false;
        answering_ = due;
        return due;
    }
    // demote(), once the answer is sent: the peer reads the head the moment the answer
    // arrives, and the lines of the answer's element after the first (the first is the one
    // it polls, already on its way), so they go to the shared cache (CLDEMOTE) instead of
    // waiting in this core's. Only after an answer: in a stream the next send would have to
    // fetch the head back from there (8-byte streams ran at half their rate when every send
    // demoted), and only once this side stopped sending to the peer (a one-sided write's
    // acknowledgement demoting the head right before the write that answers too cost that
    // write 0.2 us). The element is the last one this lane wrote where no other sender to
    // the peer took a turn since: else another's, a wasted hint. True when the hint was given.
    bool demote() noexcept {
        answering_ = false;
        if (!demotes_ || fifo_head_ == nullptr || !ep_) return false;
        if (last_short_ + kMmElemHeader > kLine) {
            if (const volatile uint8_t *elem = last_element()) {
                const size_t end = std::min<size_t>(kMmElemHeader + last_short_, elem_size_);
                for (size_t at = kLine; at < end; at += kLine) demote_line(elem + at);
            }
        }
        demote_line(fifo_head_);
        return true;
    }
    // The peer FIFO element the head says was written last (nullptr where the elements are
    // not located), and the bytes of this lane's last short message in it (0: bcopy).
    const volatile uint8_t *last_element() const noexcept {
        if (fifo_elems_ == nullptr || fifo_head_ == nullptr || !ep_) return nullptr;
        const uint64_t last = (*fifo_head_ & kMmHeadCountMask) - 1;
        return fifo_elems_ + (last & elem_mask_) * elem_size_;
    }
    size_t last_short() const noexcept { return last_short_; }
    // warm(), on an empty poll after a send to this peer, only where the head could not be
    // located (another UCX layout, a CPU without write prefetch): a uct_ep_flush() without a
    // completion, a few loads that the head is among, spares the next send its load miss at
    // least. (A PREFETCHW there instead fights the peer's own read of the head while the
    // peer works on the message: one-sided write ping-pongs slowed by a tenth.) Nothing on
    // other lanes, nor on a lane moved from (the endpoint went with the move). (A fork()
    // child does not progress what it inherited, docs/fork.md; were it to, this only reads
    // shared memory.)
    void warm() noexcept {
        if (warms_ && fifo_head_ == nullptr && ep_) flush_local();
    }
    // The peer FIFO head prime() prefetches (nullptr: none, warm() loads it where it warms).
    const volatile uint64_t *fifo_head() const noexcept { return fifo_head_; }
    bool warms() const noexcept { return warms_; }

    // Bytes of an answer's receive descriptor moved to the shared cache, and where
    // send_bcopy_answer() found them (for tests; nullptr: none yet).
    size_t last_demoted_bytes() const noexcept { return demoted_len_; }
    const uint8_t *last_demoted() const noexcept { return demoted_at_; }

  private:
    void set_limits(const OpenIface &iface) noexcept;
    void flush_local() noexcept;  // uct_ep_flush(UCT_FLUSH_FLAG_LOCAL) without a completion
    // A bcopy that answers: UCT packs it into a receive descriptor of the peer's (shared
    // memory, not the FIFO element), which the peer copies out as soon as the element's flag
    // shows; its lines are demoted right after the send, while the peer finds the element.
    // (Streams never come here: each line costs the sender a write-back, 0.3 us for 4-8 KiB,
    // and halved their rate when every bcopy paid it.)
    ssize_t send_bcopy_answer(uint8_t id, PackFn pack, void *arg) noexcept;

    Ep ep_;
    const OpenIface *iface_ = nullptr;
    size_t max_short_ = 0;
    size_t max_bcopy_ = 0;
    bool p2p_ = false;
    bool warms_ = false;       // a connected shared-memory FIFO lane: prime() or warm() readies it
    bool demotes_ = false;     // fifo_head_ located on a CPU that demotes lines (demote())
    bool answer_due_ = false;  // prime()d since the last take_answer()
    bool answering_ = false;   // take_answer() said so, and no send since
    const uint8_t *demoted_at_ = nullptr;  // the last answer's descriptor (send_bcopy_answer)
    size_t demoted_len_ = 0;
    static constexpr size_t kLine = 64;
    // The peer FIFO's elements (nullptr: not located, or of a shape not known), for demote().
    const volatile uint8_t *fifo_elems_ = nullptr;
    size_t elem_size_ = 0;
    uint64_t elem_mask_ = 0;
    uint32_t last_short_ = 0;  // bytes of the last short message (UCT's header in), 0: bcopy
    const volatile uint64_t *fifo_head_ = nullptr;  // the peer's FIFO head (mm_fifo)
};

// Releases an AM descriptor a handler kept (it returned kInProgress for kAmDesc data).
void release_am_desc(void *data, size_t rx_headroom) noexcept;

// How lanes may be chosen.
struct LanePolicy {
    // sysv makes its segments group-writable (UCT): use it only when UFI_TLS names it.
    bool sysv_allowed = false;
    // UFI_CONNECT_TO_EP: transports connected endpoint to endpoint even where they can
    // connect to an iface.
    std::vector<std::string> connect_to_ep;

    // Whether lanes over this iface connect endpoint to endpoint: it cannot connect to an
    // iface, or UFI_CONNECT_TO_EP names its transport (and it can).
    bool p2p(const OpenIface &iface) const noexcept;

    static LanePolicy from_registry();
};

// The transport active messages to `peer` take: among this worker's ifaces that send AMs
// (short or bcopy) and connect (to ifaces, or endpoint to endpoint), those that reach one of
// the peer's records, the one with the lowest estimated latency + overhead (self, then shared
// memory, then the network), ties to the higher priority, then to posix over sysv. An
// endpoint-to-endpoint choice (`p2p`) comes with the best connect-to-iface lane for the
// handshake (aux_iface, aux_record); without one it is not chosen. iface/record SIZE_MAX with
// `why` when none reaches the peer.
struct LaneChoice {
    size_t iface = SIZE_MAX;   // index in worker.ifaces()
    size_t record = SIZE_MAX;  // index in peer.records
    bool p2p = false;
    size_t aux_iface = SIZE_MAX;
    size_t aux_record = SIZE_MAX;
    std::string why;
    // Set where a shared-memory FIFO transport that reaches the peer was refused because the
    // peer's FIFO is shaped otherwise (fifo_tuning.h): what to tell the user, lane or not.
    std::string fifo_mismatch;
};
LaneChoice choose_am_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                          const LanePolicy &policy);
// The endpoint-to-endpoint lane over transport `tl` that reaches `peer` (a peer's handshake
// offered one): iface SIZE_MAX when this worker has none or its policy does not connect `tl`
// that way.
LaneChoice choose_p2p_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                           const LanePolicy &policy, const std::string &tl);

}  // namespace ufi::transports
