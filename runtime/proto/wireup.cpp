// Peers and the connection handshake (wire.h): a peer is made known from an AV entry or from
// its WIREUP_REQ; connecting chooses its AM lane, sends WIREUP_REQ and queues sends until
// WIREUP_REP tells the index to put in them. A request from a peer is answered at once (its
// key checked), so after one exchange both sides know each other.
#include "runtime/av/addr_encoding.h"
#include "runtime/av/binding.h"
#include "runtime/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"
#include "runtime/ucs_status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::proto {

namespace address = transports::address;
using log::Subsys;

// A WIREUP message, checked: the header and, for requests, the sender's address and key.
struct WireupView {
    wire::WireupHdr hdr;
    const uint8_t *addr = nullptr;
    const uint8_t *key = nullptr;
};

namespace {

struct WireupPack {
    const wire::WireupHdr *hdr;
    const uint8_t *addr;
    size_t addr_len;
    const uint8_t *key;
    size_t key_len;
};

size_t pack_wireup(void *dest, void *arg) {
    const auto *w = static_cast<const WireupPack *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, w->hdr, sizeof *w->hdr);
    if (w->addr_len) std::memcpy(d + sizeof *w->hdr, w->addr, w->addr_len);
    if (w->key_len) std::memcpy(d + sizeof *w->hdr + w->addr_len, w->key, w->key_len);
    return sizeof *w->hdr + w->addr_len + w->key_len;
}

transports::Status status_of_bcopy(ssize_t rc) {
    return rc >= 0 ? transports::kOk : static_cast<transports::Status>(rc);
}

}  // namespace

Peer *DataPath::add_peer(address::EndpointAddress &&a) {
    const uint32_t idx = static_cast<uint32_t>(peers_.size());
    auto p = std::make_unique<Peer>();
    p->local_idx = idx;
    p->address = std::move(a);
    if (p->address.uuid != 0) by_identity_[p->address.uuid] = idx;
    peers_.push_back(std::move(p));
    return peers_.back().get();
}

Peer *DataPath::peer_for_addr(fi_addr_t addr) noexcept {
    // The cache: the AV entry's version (one load) still the one the peer was found for.
    // Bits beyond the entry index are checked by resolve() when the cache misses, and are
    // never cached: an fi_addr_t with them set misses (its low bits index the cache).
    const uint64_t index = addr;
    if (index < by_addr_.size()) {
        const AddrCache &c = by_addr_[index];
        if (c.version != 0 && c.version == av::version_at(c.version_ptr)) {
            return peers_[c.peer].get();
        }
    }
    av::PeerEntry e;
    if (av::resolve(cfg_.av, addr, e) != 0) return nullptr;
    try {
        address::EndpointAddress a;
        if (!address::unpack(e.blob, e.len, a)) return nullptr;  // the AV validated it
        Peer *p = nullptr;
        if (a.uuid != 0) {
            const auto it = by_identity_.find(a.uuid);
            if (it != by_identity_.end()) p = peers_[it->second].get();
        }
        if (p == nullptr) p = add_peer(std::move(a));
        p->report_id = e.user_id;
        if (cfg_.av_auth_keys && p->present_key.empty()) {
            const uint8_t *kb = nullptr;
            size_t kl = 0;
            if (av::auth_key_bytes(cfg_.av, e.auth_key, kb, kl) == 0) p->present_key.assign(kb, kb + kl);
        }
        // Only plain entry indices are cached (not rx-context addresses or other high bits).
        if (index <= av::encoding::kMaxEntryIndex) {
            if (index >= by_addr_.size()) by_addr_.resize(index + 1);
            by_addr_[index] = {av::entry_version_ptr(cfg_.av, addr), e.version, p->local_idx};
        }
        return p;
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

fi_addr_t DataPath::report_id_for(const address::EndpointAddress &a) const noexcept {
    if (a.uuid == 0) return FI_ADDR_NOTAVAIL;  // known by host and port only: no identity yet
    fi_addr_t addr = FI_ADDR_NOTAVAIL;
    av::PeerEntry e;
    if (av::find_identity(cfg_.av, a.uuid, a.endpoint_id, addr, e) != 0) return FI_ADDR_NOTAVAIL;
    return e.user_id;
}

bool DataPath::open_lane(Peer &p) {
    if (p.lane.connected()) return true;
    const transports::LaneChoice choice = transports::choose_am_lane(*worker_, p.address, lane_policy_);
    if (choice.iface == SIZE_MAX) {
        UFI_LOG_WARN(Subsys::EpData, "peer {}: {}", address::describe(p.address), choice.why);
        fail_peer(p, -FI_EHOSTUNREACH);
        return false;
    }
    transports::OpenIface &iface = *worker_->ifaces()[choice.iface];
    worker_->activate(iface);  // a network iface is progressed once it carries traffic
    const ucs_status_t status =
        transports::AmLane::connect(iface, p.address.records[choice.record], p.lane);
    if (status != UCS_OK) {
        UFI_LOG_WARN(Subsys::EpData, "peer {}: cannot connect over {}: {}",
                     address::describe(p.address), worker_->ifaces()[choice.iface]->resource->label(),
                     transports::to_string(status));
        fail_peer(p, fi_errno_of(status));
        return false;
    }
    UFI_LOG_DEBUG(Subsys::EpData, "peer {}: active messages over {}", address::describe(p.address),
                  p.lane.resource().label());
    return true;
}

void DataPath::connect(Peer &p) {
    if (p.state != PeerState::kKnown) return;
    if (!open_lane(p)) return;
    // Before the send: over `self` the reply is handled inside it.
    p.state = PeerState::kConnecting;
    const transports::Status s = send_request(p);
    if (s == transports::kNoResource) {
        p.request_unsent = true;  // tcp: until its own handshake completes
        mark_busy(p);
    } else if (s != transports::kOk) {
        fail_peer(p, fi_errno_of(s));
    }
}

transports::Status DataPath::send_request(Peer &p) {
    wire::WireupHdr h{};
    h.type = wire::kWireupRequest;
    h.version = wire::kProtocolVersion;
    h.sender_idx = p.local_idx;
    h.receiver_idx = kNoPeer;
    h.addr_len = static_cast<uint16_t>(cfg_.address.size());
    const std::vector<uint8_t> &key = cfg_.av_auth_keys ? p.present_key : cfg_.auth_key;
    h.key_len = static_cast<uint16_t>(key.size());
    h.uuid = cfg_.uuid;
    h.endpoint_id = cfg_.endpoint_id;
    WireupPack w{&h, cfg_.address.data(), cfg_.address.size(), key.data(), key.size()};
    return status_of_bcopy(p.lane.send_bcopy(wire::kAmWireup, pack_wireup, &w));
}

transports::Status DataPath::send_reply(Peer &p, uint16_t status, uint32_t sender_idx,
                                        uint8_t type) {
    wire::WireupHdr h{};
    h.type = type;
    h.version = wire::kProtocolVersion;
    h.status = status;
    h.sender_idx = sender_idx;
    h.receiver_idx = p.local_idx;
    h.uuid = cfg_.uuid;
    h.endpoint_id = cfg_.endpoint_id;
    WireupPack w{&h, nullptr, 0, nullptr, 0};
    return status_of_bcopy(p.lane.send_bcopy(wire::kAmWireup, pack_wireup, &w));
}

void DataPath::fail_peer(Peer &p, int error) {
    p.state = PeerState::kFailed;
    p.fail_status = error != 0 ? error : -FI_EIO;
    p.request_unsent = p.reply_unsent = false;
    while (SendReq *r = p.queue.pop_front()) finish_send(r, p.fail_status);
    p.ctrl.clear();
    fail_rndv(p);
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
            (u->tagged ? unexp_tagged_ : unexp_msg_).remove(u);
            if (u->claim_ctx != nullptr) claimed_.erase(u->claim_ctx);
        }
        retire_unexpected(u);
    }
}

bool DataPath::key_accepted(const uint8_t *key, size_t len, fi_addr_t *handle) const noexcept {
    *handle = FI_ADDR_NOTAVAIL;
    if (cfg_.av_auth_keys) {
        // One of the keys this endpoint took at fi_enable.
        for (const auto &k : cfg_.held_keys) {
            if (k.bytes.size() == len && len != 0 && std::memcmp(key, k.bytes.data(), len) == 0) {
                *handle = k.handle;
                return true;
            }
        }
        return false;
    }
    // Classic keys: endpoints that share a key communicate.
    if (len != cfg_.auth_key.size()) return false;
    return len == 0 || std::memcmp(key, cfg_.auth_key.data(), len) == 0;
}

fi_addr_t DataPath::source_of(Peer &p) noexcept {
    if (p.report_id != FI_ADDR_NOTAVAIL) return p.report_id;
    const uint64_t now = av::changes(cfg_.av);
    if (now != p.report_checked) {
        p.report_checked = now;
        p.report_id = report_id_for(p.address);
    }
    return p.report_id;
}

void DataPath::handle_wireup(const uint8_t *data, size_t length) {
    WireupView w;
    if (length < sizeof w.hdr) {
        ++stats_.dropped_malformed;
        return;
    }
    std::memcpy(&w.hdr, data, sizeof w.hdr);
    const size_t extra = size_t{w.hdr.addr_len} + w.hdr.key_len;
    if (w.hdr.type == wire::kWireupRequest) {
        if (length != sizeof w.hdr + extra) {
            ++stats_.dropped_malformed;
            return;
        }
        w.addr = data + sizeof w.hdr;
        w.key = w.addr + w.hdr.addr_len;
        handle_request(w);
    } else if (w.hdr.type == wire::kWireupReply || w.hdr.type == wire::kWireupRefuse) {
        handle_reply(w);
    } else {
        ++stats_.dropped_malformed;
    }
}

void DataPath::handle_request(const WireupView &w) {
    try {
        address::EndpointAddress a;
        std::string why;
        if (!address::unpack(w.addr, w.hdr.addr_len, a, &why) || a.uuid != w.hdr.uuid) {
            ++stats_.dropped_malformed;
            UFI_LOG_INFO(Subsys::EpData, "wireup request with a bad address dropped: {}", why);
            return;
        }
        Peer *p = nullptr;
        const auto it = by_identity_.find(a.uuid);
        if (it != by_identity_.end()) {
            p = peers_[it->second].get();
        } else {
            p = add_peer(std::move(a));
            p->report_id = report_id_for(p->address);
        }
        uint16_t status = wire::kWireupOk;
        if (w.hdr.version != wire::kProtocolVersion) {
            status = wire::kWireupBadVersion;
        } else if (!key_accepted(w.key, w.hdr.key_len, &p->key_handle)) {
            status = wire::kWireupBadKey;
        }
        if (!open_lane(*p)) return;  // we cannot answer a peer we cannot reach
        if (status != wire::kWireupOk) {
            ++stats_.refused_peers;
            UFI_LOG_INFO(Subsys::EpData, "wireup: refused {}: {}", address::describe(p->address),
                         status == wire::kWireupBadVersion ? "protocol version differs"
                                                           : "authorization key not held");
            // Delivered even when the lane is still connecting (tcp): the refused sender's
            // operations fail instead of waiting for an answer.
            if (send_reply(*p, status, w.hdr.sender_idx, wire::kWireupRefuse) == transports::kNoResource) {
                p->reply_unsent = true;
                p->reply_to = w.hdr.sender_idx;
                p->reply_type = wire::kWireupRefuse;
                p->reply_status = status;
                mark_busy(*p);
            }
            return;
        }
        p->remote_idx = w.hdr.sender_idx;
        const bool was_waiting = p->state == PeerState::kConnecting;
        p->state = PeerState::kConnected;
        p->request_unsent = false;  // its request told it everything ours would have
        choose_rndv(*p);
        const transports::Status s =
            send_reply(*p, wire::kWireupOk, w.hdr.sender_idx, wire::kWireupReply);
        if (s == transports::kNoResource) {
            p->reply_unsent = true;
            p->reply_to = w.hdr.sender_idx;
            p->reply_type = wire::kWireupReply;
            p->reply_status = wire::kWireupOk;
            mark_busy(*p);
        } else if (s != transports::kOk) {
            fail_peer(*p, fi_errno_of(s));
            return;
        }
        if (was_waiting || !p->queue.empty()) mark_busy(*p);
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: a wireup request is dropped");
    }
}

void DataPath::handle_reply(const WireupView &w) {
    const uint32_t idx = w.hdr.sender_idx;  // our own index, echoed
    if (idx >= peers_.size()) {
        ++stats_.dropped_malformed;
        return;
    }
    Peer &p = *peers_[idx];
    if (p.address.uuid != 0 && p.address.uuid != w.hdr.uuid) {
        ++stats_.dropped_malformed;
        return;
    }
    if (w.hdr.type == wire::kWireupRefuse) {
        UFI_LOG_WARN(Subsys::EpData, "peer {} refused the connection: {}",
                     address::describe(p.address),
                     w.hdr.status == wire::kWireupBadKey ? "it does not hold this endpoint's authorization key"
                     : w.hdr.status == wire::kWireupBadVersion ? "protocol version differs"
                                                               : "no resources");
        fail_peer(p, w.hdr.status == wire::kWireupBadKey ? -FI_EACCES : -FI_ECONNREFUSED);
        return;
    }
    if (p.state == PeerState::kFailed) return;
    if (p.address.uuid == 0 && w.hdr.uuid != 0) {
        // A peer known by host and port (uuid 0 in the AV entry): now its identity is known,
        // so its own requests and its full address (inserted later) name this same peer.
        p.address.uuid = w.hdr.uuid;
        p.address.endpoint_id = w.hdr.endpoint_id;
        const auto known = by_identity_.find(w.hdr.uuid);
        if (known == by_identity_.end()) {
            try {
                by_identity_[w.hdr.uuid] = p.local_idx;
            } catch (const std::bad_alloc &) {
                // Its later requests make a second peer: the traffic still flows.
            }
        } else if (known->second != p.local_idx) {
            UFI_LOG_DEBUG(Subsys::EpData,
                          "peer {} reached by host and port is also known as peer {}",
                          p.local_idx, known->second);
        }
    }
    p.remote_idx = w.hdr.receiver_idx;
    p.state = PeerState::kConnected;
    p.request_unsent = false;
    choose_rndv(p);
    mark_busy(p);  // queued sends go now
}

}  // namespace ufi::runtime::proto
