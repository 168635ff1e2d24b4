// What other subsystems (endpoints, MRs) need from an address vector, implemented by the AV
// subsystem (runtime/av/). Kept apart from the AV's own header so the binding rules are one
// small, stable interface.
#pragma once

#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ufi::transports::address {
struct EndpointAddress;
}

namespace ufi::runtime::av {

class Av;

// The ufi AV behind a handle, or nullptr (not an AV, or not ufi's).
Av *av_of(fid_av *av) noexcept;
Av *av_of(fid_t fid) noexcept;

// An endpoint bound to the AV: fi_close(av) returns -FI_EBUSY while any is attached.
void attach_endpoint(Av *av) noexcept;
void detach_endpoint(Av *av) noexcept;

// FI_AV_AUTH_KEY domains: the authorization-key handles present now. An endpoint (or MR)
// takes them when it is enabled and holds them until it closes; fi_av_remove(FI_AUTH_KEY)
// of a held key returns -FI_EBUSY. Later insertions do not reach already enabled objects.
std::vector<fi_addr_t> hold_auth_keys(Av *av);
void release_auth_keys(Av *av, const std::vector<fi_addr_t> &keys) noexcept;

// --- For the data path (lock-free; fi_addr_t layout in runtime/av/addr_encoding.h). ---

// An AV entry as the data path uses it.
struct PeerEntry {
    const uint8_t *blob = nullptr;  // the peer's ufi address (transports/address.h); stays
    uint32_t len = 0;               // valid until the entry is removed
    uint32_t version = 0;           // changes whenever the slot is removed or reused: a
                                    // connection cached for (fi_addr, version) is still the peer's
    fi_addr_t auth_key = FI_ADDR_NOTAVAIL;  // the key handle the address was inserted with
    fi_addr_t user_id = FI_ADDR_NOTAVAIL;   // what completions report as this peer's source:
                                            // its user ID (FI_AV_USER_ID), FI_ADDR_NOTAVAIL while
                                            // an FI_AV_USER_ID AV has none set, else the fi_addr
    bool firewall = false;                  // inserted with FI_FIREWALL_ADDR
};

// The entry `addr` names; fi_rx_addr's rx index (the top rx_ctx_bits bits) is ignored.
// -FI_EINVAL when addr names no address (never inserted, removed, a key handle,
// FI_ADDR_NOTAVAIL) or sets high bits the AV gives no meaning (runtime/av/addr_encoding.h).
int resolve(const Av *av, fi_addr_t addr, PeerEntry &out) noexcept;

// The entry whose address carries this identity (the uuid and endpoint id of a ufi address),
// for a peer that contacted an endpoint first: its fi_addr and entry. A scan of the table, for
// the wireup path only. -FI_ENOENT when no entry has it.
int find_identity(const Av *av, uint64_t uuid, uint32_t endpoint_id, fi_addr_t &addr,
                  PeerEntry &out) noexcept;

// The entry that names `peer` by host and port only (uuid 0: fi_av_insertsvc, a socket
// address, fi_getinfo's dest_addr) with the listener of one of its tcp records, for a peer
// whose identity no entry carries. A scan, for the wireup path only. -FI_ENOENT when none.
int find_listener(const Av *av, const transports::address::EndpointAddress &peer, fi_addr_t &addr,
                  PeerEntry &out) noexcept;

// The version resolve() would report for `addr` (its entry's PeerEntry::version), or 0 when
// `addr` names no address.
uint32_t entry_version(const Av *av, fi_addr_t addr) noexcept;

// For the data path's connection cache: where the version of the entry `addr` names lives
// (valid as long as the AV), so that a cached connection is checked with one load
// (version_at). nullptr when `addr` names no slot.
const uint32_t *entry_version_ptr(const Av *av, fi_addr_t addr) noexcept;
inline uint32_t version_at(const uint32_t *p) noexcept {
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

// What an FI_SOURCE_ERR completion reports for an authorization-key handle: its user ID
// (FI_AV_USER_ID AVs; FI_ADDR_NOTAVAIL until set), else the handle itself. FI_ADDR_NOTAVAIL
// for a handle that names no key.
fi_addr_t key_report_id(const Av *av, fi_addr_t key) noexcept;

// The bytes of the key a handle names (for the wireup's key check). -FI_EINVAL if none.
int auth_key_bytes(const Av *av, fi_addr_t key, const uint8_t *&bytes, size_t &len) noexcept;

// A counter that moves whenever this process inserts, removes or renames (user ID) an entry.
uint64_t changes(const Av *av) noexcept;

// fi_av_attr::rx_ctx_bits of the AV (0 to 32).
int rx_ctx_bits(const Av *av) noexcept;

}  // namespace ufi::runtime::av
