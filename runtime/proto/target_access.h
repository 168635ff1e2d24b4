// The target's side of every one-sided operation (RMA over active messages or zero copy,
// atomics): a peer's access checked against this domain's MR key table before a byte moves,
// and counted once it is done. One concern, no protocol: the RMA and atomic modules both ask it.
//
// Checked: the key, the MR's enabled state, FI_REMOTE_READ / FI_REMOTE_WRITE, bounds, and
// that the peer holds the MR's authorization key (the one it was admitted with). A refused
// access leaves the memory untouched and gives the negative fi errno the initiator's error
// completion carries.
#pragma once

#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace ufi::runtime {
struct Domain;
namespace cntr {
class Cntr;
}
namespace mr {
struct MrState;
}
}  // namespace ufi::runtime

namespace ufi::runtime::proto {

class TargetAccess {
  public:
    // `domain`: whose MR key table accesses are checked against (nullptr: every access is
    // refused). `auth_key`: the endpoint's classic authorization key (may be empty), which
    // the peers it admitted hold; it must outlive this object. The counters: FI_REMOTE_READ
    // and FI_REMOTE_WRITE bound to the endpoint (nullptr: none).
    TargetAccess(Domain *domain, std::span<const uint8_t> auth_key, cntr::Cntr *rem_read,
                 cntr::Cntr *rem_write) noexcept
        : domain_(domain), auth_key_(auth_key), rem_read_(rem_read), rem_write_(rem_write) {}

    // The local buffers behind an access's target segments (`total` bytes in all), checked
    // for `access` (FI_REMOTE_READ and/or FI_REMOTE_WRITE): 0 or the negative fi errno.
    // `first` (the operation's first check) uses up FI_MR_SINGLE_USE keys. `peer_key` is the
    // held key the peer was admitted with (Peer::key_handle; FI_AV_AUTH_KEY domains).
    int check(fi_addr_t peer_key, const wire::RmaSeg *segs, size_t nsegs, uint64_t total,
              uint64_t access, bool first, IovList &out) noexcept;
    // check() for one target range, the common case, without the walk.
    int check_one(fi_addr_t peer_key, const wire::RmaSeg &s, uint64_t access,
                  IovList &out) noexcept;
    // A done access counted on the endpoint's counters and the MRs' for `access`, once per
    // counter however many bindings reach it.
    void count(const wire::RmaSeg *segs, size_t nsegs, uint64_t total, uint64_t access) noexcept;

  private:
    // The domain's MR state, looked up at the first access: later checks and counts use it
    // without finding it again.
    mr::MrState *keys() noexcept;

    Domain *domain_;
    std::span<const uint8_t> auth_key_;
    cntr::Cntr *rem_read_;
    cntr::Cntr *rem_write_;
    mr::MrState *mr_state_ = nullptr;
};

}  // namespace ufi::runtime::proto
