// What the data path (endpoints, RMA, atomics) needs from memory regions, implemented by the
// MR subsystem (runtime/mr/). The initiator side: descriptors, registrations for buffers
// passed without one, mapped raw keys. The target side: the key table's validation of a
// peer's access and the reply to a peer's key request (docs/memory-keys.md).
#pragma once

#include "runtime/cntr/access_tally.h"
#include "transports/memory/memory_domains.h"
#include "transports/memory/reg_cache.h"

#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ufi::runtime {
struct Domain;
}

namespace ufi::runtime::mr {

struct Mr;
struct MappedKey;

// ---- initiator side ------------------------------------------------------------------------

// The ufi MR behind a handle, or nullptr.
Mr *mr_of(fid_mr *mr) noexcept;
Mr *mr_of(fid_t fid) noexcept;
// The MR behind a desc the application passed (fi_mr_desc's value), or nullptr for NULL or
// anything that is not a live ufi descriptor.
Mr *mr_of_desc(void *desc) noexcept;

// FI_MR_LOCAL is in effect: local buffers need a valid desc (else NULL is fine and ufi
// registers through its cache, acquire_local()).
bool local_desc_required(Domain *domain) noexcept;

// A desc given with [buf, buf + len) for a local operation needing `access` (FI_SEND,
// FI_RECV, FI_READ, FI_WRITE): 0, -FI_EINVAL when the range is outside the MR, -FI_EACCES
// when the MR lacks the access (ufi enforces only when FI_MR_LOCAL is in effect: without
// it the page lets a desc be a hint).
int check_local(Domain *domain, const Mr *mr, const void *buf, std::size_t len,
                std::uint64_t access) noexcept;

// A registration of [buf, buf + len) for a buffer passed without desc (the registration
// cache; never stale after munmap). 0 or a negative fi errno.
int acquire_local(Domain *domain, const void *buf, std::size_t len, transports::RegionRef &out);

// The domain's open UCT memory domains: interfaces must be opened on these handles so that
// the memh of ufi's registrations fit them (nullptr when the MR state cannot be created).
const transports::MemoryDomains *memory_domains(Domain *domain) noexcept;

// Whether a key from an RMA call may be one fi_mr_map_raw returned (top bit set); a peer's
// requested key may have the top bit too, so only find_mapped_key decides.
bool is_mapped_key(std::uint64_t key) noexcept;
// The mapped raw key behind `key` (bundle and unpacked rkeys), or nullptr (nothing mapped in
// the domain: no lookup, no lock).
const MappedKey *find_mapped_key(Domain *domain, std::uint64_t key) noexcept;

// ---- target side -------------------------------------------------------------------------

enum class KeyCheck {
    Ok,
    UnknownKey,    // no MR has the key (closed, never registered): -FI_EKEYREJECTED
    Disabled,      // the MR is not enabled (FI_MR_ENDPOINT / FI_MR_RMA_EVENT): -FI_EACCES
    AccessDenied,  // the MR lacks FI_REMOTE_READ / FI_REMOTE_WRITE: -FI_EACCES
    OutOfBounds,   // the range leaves the MR: -FI_EACCES
    Consumed,      // FI_MR_SINGLE_USE key already used: -FI_EKEYREJECTED
    Unauthorized,  // the peer does not hold the MR's authorization key: -FI_EACCES
    NotMapped,     // an address-space MR's range this process does not map (or not so that
                   // the access may touch it: read-only, guard pages): -FI_EFAULT
};

// The authorization key a peer was admitted with (the endpoint checked it at the handshake):
// classic domains, its bytes (the endpoint's own key); FI_AV_AUTH_KEY domains, the handle of
// the held key it matched.
struct PeerAuth {
    const std::uint8_t *key = nullptr;
    std::size_t key_len = 0;
    fi_addr_t key_handle = FI_ADDR_NOTAVAIL;
};
int key_check_errno(KeyCheck check) noexcept;
const char *key_check_name(KeyCheck check) noexcept;

// Where a validated remote access lands here.
struct RemoteTarget {
    std::uintptr_t local_addr = 0;  // the first byte
    std::size_t contiguous = 0;     // bytes from local_addr within one segment (<= len)
    std::size_t segment = 0;        // its segment index (offset-addressed MRs may span several)
};

// Validates a peer's access to [addr, addr + len) of key `key` for `access` (FI_REMOTE_READ
// and/or FI_REMOTE_WRITE): bounds (virtual address under FI_MR_VIRT_ADDR, else offset from
// 0), access rights and enabled state; in an MR registered from NULL, that the process maps
// the range now, for that access (a system call: address_probe.h). `consume` uses up a FI_MR_SINGLE_USE key. `out` is
// filled for Ok, and for Consumed (the range is valid; the key was used). With `auth`, a peer
// must hold the MR's authorization key: the MR's own bytes when it was registered with one
// (classic domains), one of the keys it holds (FI_AV_AUTH_KEY domains: the AV's, or the one
// FI_AUTH_KEY named).
KeyCheck check_remote_access(Domain *domain, std::uint64_t key, std::uint64_t addr, std::size_t len,
                             std::uint64_t access, bool consume, RemoteTarget *out,
                             const PeerAuth *auth = nullptr) noexcept;

// Counts a completed remote access (`bytes` of it on this MR) on the counters bound to the MR
// with a matching flag (FI_REMOTE_WRITE / FI_REMOTE_READ), each once per access: `tally`
// holds the counters the access counted already (the endpoint's, another segment's MR).
void count_remote_access(Domain *domain, std::uint64_t key, std::uint64_t access,
                         std::uint64_t bytes, cntr::AccessTally &tally) noexcept;

// The same two on the domain's MR state (mr_state_of, mr_state.h), for a caller that looked
// it up once (the data path, per access); `state` may be nullptr (no state: no key).
struct MrState;
KeyCheck check_remote_access(MrState *state, std::uint64_t key, std::uint64_t addr, std::size_t len,
                             std::uint64_t access, bool consume, RemoteTarget *out,
                             const PeerAuth *auth = nullptr) noexcept;
void count_remote_access(MrState *state, std::uint64_t key, std::uint64_t access,
                         std::uint64_t bytes, cntr::AccessTally &tally) noexcept;

// The reply to a peer's key request for `key`: the MR's packed bundle (the same bytes as its
// raw key). 0, -FI_EKEYREJECTED (no such key, or a used single-use key), -FI_EACCES
// (disabled), -FI_ENOMEM.
int build_key_reply(Domain *domain, std::uint64_t key, std::vector<std::uint8_t> &out) noexcept;

}  // namespace ufi::runtime::mr
