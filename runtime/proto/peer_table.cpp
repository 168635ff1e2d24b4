// The data path's peer table (peer_table.h), and a peer failed (DataPath::fail_peer).
#include "runtime/proto/peer_table.h"

#include "runtime/av/addr_encoding.h"
#include "runtime/av/binding.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"
#include "transports/address_svc.h"
#include "transports/scalable_name.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

namespace address = transports::address;
namespace scalable = transports::scalable;
using log::Subsys;

Peer *PeerTable::add(address::EndpointAddress &&a) {
    auto p = std::make_unique<Peer>();
    p->address = std::move(a);
    const uint64_t uuid = p->address.uuid;
    uint32_t idx = 0;
    uint32_t generation = 0;
    if (!free_.empty()) {
        idx = free_.back();
        generation = ((peers_[idx]->src_key >> kIndexBits) + 1) & 0xff;
        if (uuid != 0) by_identity_[uuid] = idx;  // (first: bad_alloc leaves the slot free)
        free_.pop_back();
        peers_[idx] = std::move(p);  // (the departed peer's record goes)
    } else {
        if (peers_.size() >= kMaxPeers) throw std::bad_alloc();
        idx = static_cast<uint32_t>(peers_.size());
        peers_.push_back(std::move(p));
        try {
            if (uuid != 0) by_identity_[uuid] = idx;
        } catch (const std::bad_alloc &) {
            peers_.pop_back();
            throw;
        }
    }
    Peer &peer = *peers_[idx];
    peer.local_idx = idx;
    peer.src_key = idx | generation << kIndexBits;
    return &peer;
}

void PeerTable::retire(uint32_t idx) noexcept {
    Peer &p = *peers_[idx];
    try {
        free_.push_back(idx);
    } catch (const std::bad_alloc &) {
        return;  // (not reused, that is all)
    }
    p.retired = true;
    if (p.address.uuid != 0) {
        const auto it = by_identity_.find(p.address.uuid);
        if (it != by_identity_.end() && it->second == idx) by_identity_.erase(it);
    }
}

void PeerTable::mark_cached(std::vector<uint8_t> &refs) const noexcept {
    const auto mark = [&](const AddrCache &c) {
        if (c.version != 0 && c.version == av::version_at(c.version_ptr) && c.peer < refs.size()) refs[c.peer] = 1;
    };
    for (const AddrCache &c : by_addr_) mark(c);
    for (const auto &row : by_rx_addr_) {
        for (const AddrCache &c : row) mark(c);
    }
}

Peer *PeerTable::resolve(fi_addr_t addr) noexcept {
    const uint64_t index = addr;
    // fi_rx_addr's form (a receive context's index in the top rx_ctx_bits bits): a scalable
    // peer's receive context j, cached apart from plain indices.
    const int bits = av::rx_ctx_bits(dp_.cfg_.av);
    const uint64_t entry = addr & av::encoding::kLowMask;
    const uint64_t rx = bits > 0 ? addr >> (64 - bits) : 0;
    const bool rx_form = rx != 0 && entry <= av::encoding::kMaxEntryIndex &&
                         av::encoding::meaningless_bits(addr, bits) == 0;
    if (rx_form && entry < by_rx_addr_.size() && rx < by_rx_addr_[entry].size()) {
        const AddrCache &c = by_rx_addr_[entry][rx];
        if (c.version != 0 && c.version == av::version_at(c.version_ptr)) return peers_[c.peer].get();
    }
    av::PeerEntry e;
    if (av::resolve(dp_.cfg_.av, addr, e) != 0) return nullptr;
    try {
        const uint8_t *blob = e.blob;
        size_t len = e.len;
        if (scalable::starts_scalable(blob, len)) {
            // A scalable endpoint's entry: the name of the receive context the address picks
            // (0 without fi_rx_addr).
            scalable::View v;
            std::string why;
            if (!scalable::parse(blob, len, v, &why)) return nullptr;  // (the AV validated it)
            if (rx >= v.rx_count) {
                UFI_LOG_WARN(Subsys::EpData,
                             "fi_addr {:#x} names receive context {} of a scalable endpoint "
                             "with {} receive contexts",
                             addr, rx, v.rx_count);
                return nullptr;
            }
            blob = v.rx(static_cast<uint32_t>(rx));
            len = v.name_len;
        }
        address::EndpointAddress a;
        if (!address::unpack(blob, len, a)) return nullptr;  // the AV validated it
        if (rx != 0 && blob == e.blob) {
            // Not a scalable endpoint's name. A host and port reaches receive context j of
            // the scalable endpoint listening there at port + j (scalable_name.h); an
            // ordinary endpoint's name has no context but 0.
            if (a.uuid != 0 || !scalable::offset_tcp_ports(a, static_cast<uint32_t>(rx))) {
                UFI_LOG_WARN(Subsys::EpData,
                             "fi_addr {:#x} names receive context {} of an address that is "
                             "neither a scalable endpoint's name nor a host and port",
                             addr, rx);
                return nullptr;
            }
        }
        // Its own name: the full address (names leave out self, which only it can use).
        if (a.uuid == dp_.cfg_.uuid && a.endpoint_id == dp_.cfg_.endpoint_id &&
            !address::unpack(dp_.cfg_.address.data(), dp_.cfg_.address.size(), a)) {
            return nullptr;
        }
        Peer *p = nullptr;
        if (a.uuid != 0) {
            const auto it = by_identity_.find(a.uuid);
            if (it != by_identity_.end()) p = peers_[it->second].get();
            // The entry names the endpoint this peer was admitted as, but with other records:
            // the endpoint was opened again under its name (restart.cpp). Or the peer failed,
            // and an entry inserted since names it again: it is connected afresh (an entry
            // index only: addresses with bits beyond it are resolved on every call).
            if (p != nullptr && p->address.endpoint_id == a.endpoint_id) {
                if (p->remote_incarnation != 0 && address::records_conflict(p->address, a)) {
                    p = &dp_.wireup_.restart_peer(p->local_idx, std::move(a),
                                      "an AV entry names it with other transport addresses");
                } else if (p->state == PeerState::kFailed && index <= av::encoding::kMaxEntryIndex) {
                    p = &dp_.wireup_.restart_peer(p->local_idx, std::move(a),
                                      "it failed, and an AV entry inserted since names it");
                }
            }
        } else {
            p = listening_at(a);  // a host and port: the peer that contacted us from there
            // Or the endpoint we reached there, failed since (a server killed, restarted on
            // its port): an entry inserted since connects afresh to whoever listens there now.
            if (p != nullptr && p->state == PeerState::kFailed && index <= av::encoding::kMaxEntryIndex) {
                p = &dp_.wireup_.restart_peer(p->local_idx, std::move(a),
                                              "it failed, and an AV entry inserted since names its host and port");
            }
        }
        if (p == nullptr) p = add(std::move(a));
        p->report_id = connected_ ? FI_ADDR_NOTAVAIL : e.user_id;
        if (dp_.cfg_.av_auth_keys && p->present_key.empty()) {
            const uint8_t *kb = nullptr;
            size_t kl = 0;
            if (av::auth_key_bytes(dp_.cfg_.av, e.auth_key, kb, kl) == 0) p->present_key.assign(kb, kb + kl);
        }
        // Only plain entry indices are cached (not rx-context addresses or other high bits).
        if (index <= av::encoding::kMaxEntryIndex) {
            if (index >= by_addr_.size()) by_addr_.resize(index + 1);
            by_addr_[index] = {av::entry_version_ptr(dp_.cfg_.av, addr), e.version, p->local_idx};
        } else if (rx_form) {
            if (entry >= by_rx_addr_.size()) by_rx_addr_.resize(entry + 1);
            auto &row = by_rx_addr_[entry];
            if (rx >= row.size()) row.resize(rx + 1);
            row[rx] = {av::entry_version_ptr(dp_.cfg_.av, entry), e.version, p->local_idx};
        }
        return p;
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

Peer *PeerTable::listening_at(const address::EndpointAddress &a) noexcept {
    for (auto &pp : peers_) {
        // (a peer itself known by host and port only is no identity to name)
        if (!pp->retired && pp->address.uuid != 0 && address::shares_tcp_listener(pp->address, a)) return pp.get();
    }
    return nullptr;
}

Peer *PeerTable::host_port_peer_of(const address::EndpointAddress &full) noexcept {
    for (auto &pp : peers_) {
        if (!pp->retired && pp->address.uuid == 0 && address::shares_tcp_listener(pp->address, full)) {
            return pp.get();
        }
    }
    return nullptr;
}

fi_addr_t PeerTable::report_id_for(const address::EndpointAddress &a) const noexcept {
    if (a.uuid == 0 || connected_) return FI_ADDR_NOTAVAIL;  // known by host and port only: no identity yet
    fi_addr_t addr = FI_ADDR_NOTAVAIL;
    av::PeerEntry e;
    // Its identity, else its tcp listener inserted as a host and port (a socket address).
    if (av::find_identity(dp_.cfg_.av, a.uuid, a.endpoint_id, addr, e) != 0 &&
        av::find_listener(dp_.cfg_.av, a, addr, e) != 0) {
        return FI_ADDR_NOTAVAIL;
    }
    return e.user_id;
}

void DataPath::fail_peer(Peer &p, int error, bool restarting) {
    p.state = PeerState::kFailed;
    p.failed_at = std::chrono::steady_clock::now();
    departed_ = true;  // (its slot may be reused once nothing refers to it: peer_reuse.cpp)
    refresh_eager_gate(p);
    p.fail_status = error != 0 ? error : -FI_EIO;
    p.request_unsent = p.reply_unsent = p.ack_unsent = false;
    // Injected short writes that went without a record first (they went before anything
    // queued); their lengths are not kept, so their error entries say 0.
    while (p.untracked_writes > 0) rma_.finish_untracked_write(p, 0, p.fail_status);
    while (SendReq *r = p.queue.pop_front()) {
        // (FI_EP_DGRAM: the messages are dropped, as UDP drops them; they complete as sent.)
        if (cfg_.datagrams && r->op == SendOp::kMessage) ++stats_.datagrams_dropped;
        finish_send(r, cfg_.datagrams && r->op == SendOp::kMessage ? 0 : p.fail_status);
    }
    ctrl_.drop_queued(p);
    p.held.clear();  // (what it sent before the connection dies with it)
    zcopy_.fail(p);
    // A message that was arriving from it is lost: its receive completes with the error.
    if (p.rx_recv != nullptr) {
        RecvReq *r = p.rx_recv;
        p.rx_recv = nullptr;
        --partial_rx_;
        r->msg_tag = p.rx_tag;
        complete_recv_error(r, p.local_idx, -p.fail_status, std::min(p.rx_received, r->iov.total));
    }
    if (p.rx_unexp != nullptr) {
        UnexpMsg *u = p.rx_unexp;
        p.rx_unexp = nullptr;
        --partial_rx_;
        if (RecvReq *r = u->claimed) {
            r->msg_tag = u->tag;
            complete_recv_error(r, p.local_idx, -p.fail_status, 0);
        } else if (!u->discarded) {
            match_.remove_unexpected(u);
            if (u->claim_ctx != nullptr) claimed_.erase(u->claim_ctx);
        }
        retire_unexpected(u);
    }
    tell_receivers(p, restarting);
    if (cfg_.connected) end_connection();  // (its one peer is the connection)
}


fi_addr_t PeerTable::source_of(Peer &p) noexcept {
    if (p.report_id != FI_ADDR_NOTAVAIL) return p.report_id;
    const uint64_t now = av::changes(dp_.cfg_.av);
    if (now != p.report_checked) {
        p.report_checked = now;
        p.report_id = report_id_for(p.address);
    }
    return p.report_id;
}

}  // namespace ufi::runtime::proto
