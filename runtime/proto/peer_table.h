// The data path's peer table, a service every module uses: peers by index (what `src` in a
// message names), by identity (the uuid in an address), and by AV entry (the address cache a
// send reads inline, one load while the entry is unchanged). A peer is made known from an AV
// entry (resolve) or from its WIREUP_REQ (add, by the handshake: wireup.h); found again by
// identity, or by the tcp listener a host-and-port address names; and it knows what
// completions report as a peer's source. A peer's record stays while anything may name its
// index (a restarted peer is replaced in place, restart.cpp); a departed one's slot is given
// up once nothing does and taken by the next new peer under the next generation of its key
// (peer_reuse.cpp), so that a server whose clients come and go keeps a table as large as the
// clients it has, and a late message of a departed peer is never taken for its successor's.
#pragma once

#include "runtime/av/binding.h"
#include "runtime/proto/peer.h"
#include "transports/address.h"

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ufi::runtime::proto {

class DataPath;

class PeerTable {
  public:
    explicit PeerTable(DataPath &dp) noexcept : dp_(dp) {}
    // A connected endpoint's table (DataPathConfig::connected): every address names entry 0,
    // and completions report no source.
    void set_connected(bool connected) noexcept {
        addr_mask_ = connected ? 0 : ~fi_addr_t{0};
        connected_ = connected;
    }
    PeerTable(const PeerTable &) = delete;
    PeerTable &operator=(const PeerTable &) = delete;

    // By index, as a vector's (restart.cpp replaces a slot's peer).
    std::unique_ptr<Peer> &operator[](size_t idx) noexcept { return peers_[idx]; }
    const std::unique_ptr<Peer> &operator[](size_t idx) const noexcept { return peers_[idx]; }
    size_t size() const noexcept { return peers_.size(); }
    auto begin() noexcept { return peers_.begin(); }
    auto end() noexcept { return peers_.end(); }
    // The data path closes: the peers (and their lanes) go.
    void clear() noexcept { peers_.clear(); }

    // The peer an AV entry names, made known on first use; nullptr when fi_addr names no
    // entry or its address does not parse. A scalable endpoint's entry names one peer per
    // receive context: fi_rx_addr's index picks it (0 without). The cache (the AV entry's version, one load,
    // still the one the peer was found for) is inline; resolve() does the rest. Bits beyond
    // the entry index are checked by resolve(), never cached: an fi_addr_t with them set
    // misses.
    Peer *for_addr(fi_addr_t addr) noexcept {
        addr &= addr_mask_;  // (a connected endpoint's calls all name its one peer: entry 0)
        const uint32_t hit = cached(addr);
        return hit != kNoPeer ? peers_[hit].get() : resolve(addr);
    }
    // The peer the address cache holds for `addr` while its AV entry is unchanged; kNoPeer
    // when it holds none (resolve() finds it).
    uint32_t cached(fi_addr_t addr) const noexcept {
        if (addr < by_addr_.size()) {
            const AddrCache &c = by_addr_[addr];
            if (c.version != 0 && c.version == av::version_at(c.version_ptr)) return c.peer;
        }
        return kNoPeer;
    }
    Peer *resolve(fi_addr_t addr) noexcept;
    // A new peer in a retired slot, else at the next index (named by its identity where the
    // address has one); throws std::bad_alloc (also past kMaxPeers).
    Peer *add(transports::address::EndpointAddress &&address);

    // `src` on the wire is a peer's key: its index in the low kIndexBits bits, the slot's
    // generation (how often the slot was reused, modulo 256) above them. The index limit
    // keeps a key from ever being kNoPeer.
    static constexpr int kIndexBits = 24;
    static constexpr uint32_t kIndexMask = (uint32_t{1} << kIndexBits) - 1;
    static constexpr size_t kMaxPeers = kIndexMask;
    // The index of the peer whose key is `key`, or kNoPeer (no such slot, or an earlier
    // generation of it: a departed peer's).
    uint32_t by_key(uint32_t key) const noexcept {
        const uint32_t idx = key & kIndexMask;
        return idx < peers_.size() && peers_[idx]->src_key == key ? idx : kNoPeer;
    }
    // Gives up slot `idx`, whose peer failed and which nothing refers to any more
    // (DataPath::retire_departed_peers checked): its identity is forgotten, and the next
    // add() takes the slot. The record stays until then (stale indices find a failed peer).
    void retire(uint32_t idx) noexcept;
    // Marks in `refs` (one per slot) the peers an AV entry's cache still names.
    void mark_cached(std::vector<uint8_t> &refs) const noexcept;

    // The index of the peer with identity `uuid`, or kNoPeer.
    uint32_t by_identity(uint64_t uuid) const noexcept {
        const auto it = by_identity_.find(uuid);
        return it != by_identity_.end() ? it->second : kNoPeer;
    }
    // Names peer `idx` by identity `uuid` (a peer first known by host and port); throws
    // std::bad_alloc.
    void name(uint64_t uuid, uint32_t idx) { by_identity_[uuid] = idx; }
    // The known peer (its identity learned) whose tcp listener `a` names by host and port;
    // nullptr when none. A scan, on a connection-cache miss only.
    Peer *listening_at(const transports::address::EndpointAddress &a) noexcept;
    // The peer this side knows only by host and port whose tcp listener is one of `full`'s.
    Peer *host_port_peer_of(const transports::address::EndpointAddress &full) noexcept;

    // What completions report as the peer's source: its AV entry's fi_addr (or user ID),
    // looked up again when the AV changed since it was last not found.
    fi_addr_t source_of(Peer &p) noexcept;
    fi_addr_t report_id_for(const transports::address::EndpointAddress &a) const noexcept;

  private:
    DataPath &dp_;
    fi_addr_t addr_mask_ = ~fi_addr_t{0};
    bool connected_ = false;
    std::vector<std::unique_ptr<Peer>> peers_;
    std::vector<uint32_t> free_;  // retired slots, taken by add() last first
    std::unordered_map<uint64_t, uint32_t> by_identity_;  // uuid -> peer index
    // AV entry index -> peer, valid while the entry keeps the version it had when cached:
    // the fi_addr_t of a send is checked with one load (av::version_at).
    struct AddrCache {
        const uint32_t *version_ptr = nullptr;  // the entry's version field
        uint32_t version = 0;                   // its value when cached (0: none)
        uint32_t peer = kNoPeer;
    };
    std::vector<AddrCache> by_addr_;
    // fi_rx_addr addresses (a receive context of a scalable peer): [entry index][context].
    std::vector<std::vector<AddrCache>> by_rx_addr_;
};

}  // namespace ufi::runtime::proto
