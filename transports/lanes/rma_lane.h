// Zero-copy paths to one peer for large messages (rendezvous) and RMA: a connect-to-iface UCT
// endpoint on a transport that gets (cma here, RDMA elsewhere) or puts (tcp) straight between
// user buffers, or the peer's AM lane itself where its transport also gets or puts (tcp here;
// InfiniBand rc, which connects no other way, and dc), with
// what the protocol needs around it: registering a local buffer on the transport's memory
// domain, packing its remote key, unpacking a peer's. The calls are inline wrappers of UCT's,
// so runtime/proto stays free of UCX's API.
#pragma once

#include "transports/address.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/lanes/am_lane.h"
#include "transports/status.h"
#include "transports/ucx_fwd.h"
#include "transports/ucx_handles.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ufi::transports {

// A peer's remote key as the zero-copy calls take it (UCT's uct_rkey_t).
using RemoteKey = uintptr_t;

// What a zero-copy lane does.
enum class RmaKind : uint8_t {
    kGet = 1,  // the receiver reads the sender's buffer (get_zcopy)
    kPut = 2,  // the sender writes the receiver's buffer (put_zcopy)
};

// A buffer registered on one memory domain for one operation; RAII.
class LocalRegion {
  public:
    LocalRegion() = default;
    ~LocalRegion() { reset(); }
    LocalRegion(LocalRegion &&o) noexcept;
    LocalRegion &operator=(LocalRegion &&o) noexcept;
    LocalRegion(const LocalRegion &) = delete;
    LocalRegion &operator=(const LocalRegion &) = delete;

    // Registers [addr, addr + len) on `iface`'s memory domain for remote access.
    static Status create(const OpenIface &iface, void *addr, size_t len, LocalRegion &out);
    // The packed remote key a peer unpacks (the MD's rkey_packed_size bytes; may be none).
    Status pack(std::vector<uint8_t> &out) const;
    uct_mem_h memh() const noexcept { return memh_; }
    void reset() noexcept;

  private:
    uct_md_h md_ = nullptr;
    uct_mem_h memh_ = nullptr;  // (UCT_MEM_HANDLE_NULL)
    size_t rkey_size_ = 0;
    unsigned generation_ = 0;
};

// A peer's key unpacked for `iface`'s component; RAII (uct_rkey_release).
class PeerKey {
  public:
    PeerKey() = default;
    ~PeerKey() { reset(); }
    PeerKey(PeerKey &&o) noexcept;
    PeerKey &operator=(PeerKey &&o) noexcept;
    PeerKey(const PeerKey &) = delete;
    PeerKey &operator=(const PeerKey &) = delete;

    // `packed` must be exactly the MD's rkey_packed_size bytes (checked: UCT reads that many).
    static Status unpack(const OpenIface &iface, const uint8_t *packed, size_t len, PeerKey &out);
    RemoteKey rkey() const noexcept { return bundle_.rkey; }
    void reset() noexcept;

  private:
    uct_component_h component_ = nullptr;
    UctRkeyBundle bundle_;
    bool valid_ = false;
    unsigned generation_ = 0;
};

class RmaLane {
  public:
    RmaLane() = default;
    RmaLane(RmaLane &&o) noexcept
        : owned_(std::move(o.owned_)), ep_(std::exchange(o.ep_, nullptr)), iface_(o.iface_) {}
    RmaLane &operator=(RmaLane &&o) noexcept {
        if (this != &o) {
            owned_ = std::move(o.owned_);
            ep_ = std::exchange(o.ep_, nullptr);
            iface_ = o.iface_;
        }
        return *this;
    }

    static Status connect(const OpenIface &iface, const address::TransportRecord &peer, RmaLane &out);
    // Zero copy on the AM lane's own endpoint: no second connection (rc has no other way to
    // make one), and the puts and gets share the lane's order. The lane must stay until this
    // one is reset (a Peer declares `rma` after its AM lanes, and resets it first).
    static void share(const AmLane &lane, RmaLane &out) noexcept;

    bool connected() const noexcept { return ep_ != nullptr; }
    // Whether this is an AM lane's endpoint rather than one of its own.
    bool shares_lane() const noexcept { return ep_ != nullptr && !owned_; }
    const OpenIface &iface() const noexcept { return *iface_; }
    // The most bytes one call moves, and buffers it takes.
    size_t max_get() const noexcept { return iface_->caps.limits.get.max_zcopy; }
    size_t max_put() const noexcept { return iface_->caps.limits.put.max_zcopy; }
    size_t max_iov(RmaKind k) const noexcept {
        return k == RmaKind::kGet ? iface_->caps.limits.get.max_iov
                                  : iface_->caps.limits.put.max_iov;
    }

    // kOk (done: `comp` is not called), kInProgress (`comp` is called from progress),
    // kNoResource, or an error.
    Status get(const Iov *iov, size_t n, uint64_t raddr, RemoteKey rkey, Completion *comp) noexcept;
    Status put(const Iov *iov, size_t n, uint64_t raddr, RemoteKey rkey, Completion *comp) noexcept;
    uct_ep_h handle() const noexcept { return ep_; }
    void reset() noexcept {
        ep_ = nullptr;
        const uct_ep_h gone = owned_.get();
        owned_.reset();  // (drained first: ucx_handles.h)
        if (gone != nullptr && iface_ != nullptr && iface_->owner != nullptr) {
            iface_->owner->forget_failures(gone);
        }
    }

  private:
    Ep owned_;              // a connection of its own (connect); empty when shared
    uct_ep_h ep_ = nullptr;  // the endpoint the operations go on
    const OpenIface *iface_ = nullptr;
};

// Whether zero copy of `kind` can go on AM lane `lane`: its transport has it and its memory
// domain registers user memory.
bool lane_serves_rma(const AmLane &lane, RmaKind kind) noexcept;

// The transport of this worker that moves large messages to `peer` with `kind`: among the
// ifaces with GET_ZCOPY (or PUT_ZCOPY), a memory domain that registers user memory, reaching
// one of the peer's records by connecting to its iface, or being the transport of `am_lane`
// (the peer's AM lane, or nullptr; on equal bandwidth it goes before a second connection),
// the one with the highest estimated bandwidth. iface SIZE_MAX when none.
LaneChoice choose_rma_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                           RmaKind kind, const AmLane *am_lane = nullptr);

// Whether cross-process copies (cma: process_vm_readv) work in this process: ptrace rights are
// often denied in containers. Probed once (against this process itself).
bool cross_process_copy_permitted() noexcept;

// Whether zero copy over `iface` can work in this process at all (cma: only where
// cross_process_copy_permitted()).
bool zcopy_permitted(const OpenIface &iface) noexcept;

}  // namespace ufi::transports
