// The connection handshake, one module (wireup.h).
#include "runtime/proto/wireup.h"

#include "runtime/av/addr_encoding.h"
#include "runtime/av/binding.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/message_building.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"
#include "transports/address_svc.h"

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
    const uint8_t *p2p = nullptr;  // the P2P section (hdr.p2p_len bytes), if any
    const uint8_t *raw = nullptr;  // the whole message (raw_len bytes)
    size_t raw_len = 0;
};

namespace {

struct WireupPack {
    const wire::WireupHdr *hdr;
    size_t hdr_size;  // sizeof(WireupHdr), or wire::kWireupPrefixSize (refusals)
    const uint8_t *addr;
    size_t addr_len;
    const uint8_t *key;
    size_t key_len;
    const uint8_t *p2p = nullptr;
    size_t p2p_len = 0;
};

size_t pack_wireup(void *dest, void *arg) {
    const auto *w = static_cast<const WireupPack *>(arg);
    auto *d = static_cast<uint8_t *>(dest);
    std::memcpy(d, w->hdr, w->hdr_size);
    size_t at = w->hdr_size;
    if (w->addr_len) std::memcpy(d + at, w->addr, w->addr_len);
    at += w->addr_len;
    if (w->key_len) std::memcpy(d + at, w->key, w->key_len);
    at += w->key_len;
    if (w->p2p_len) std::memcpy(d + at, w->p2p, w->p2p_len);
    return at + w->p2p_len;
}

}  // namespace

bool Wireup::open_lane(Peer &p) {
    if (p.lane.connected()) return true;
    const transports::LaneChoice choice = transports::choose_am_lane(*dp_.worker_, p.address, dp_.lane_policy_);
    if (choice.iface == SIZE_MAX) {
        UFI_LOG_WARN(Subsys::EpData, "peer {}: {}", address::describe(p.address), choice.why);
        dp_.fail_peer(p, -FI_EHOSTUNREACH);
        return false;
    }
    if (!choice.fifo_mismatch.empty()) {
        UFI_LOG_WARN(Subsys::EpData, "peer {}: {}; its traffic goes over {}",
                     address::describe(p.address), choice.fifo_mismatch,
                     dp_.worker_->ifaces()[choice.iface]->resource->label());
    }
    // An endpoint talking to itself stays on the lane that connects at once.
    const bool itself = p.address.uuid != 0 && p.address.uuid == dp_.cfg_.uuid &&
                        p.address.endpoint_id == dp_.cfg_.endpoint_id;
    const bool p2p = choice.p2p && !itself;
    const size_t first = choice.p2p ? choice.aux_iface : choice.iface;
    const size_t record = choice.p2p ? choice.aux_record : choice.record;
    transports::OpenIface &iface = *dp_.worker_->ifaces()[first];
    dp_.worker_->activate(iface);  // a network iface is progressed once it carries traffic
    const transports::Status status =
        transports::AmLane::connect(iface, p.address.records[record], p.lane);
    if (status != transports::Status::kOk) {
        // (UCT's tcp says UCS_ERR_UNREACHABLE for any connect() that fails at once, a port
        // nobody listens on included: ask the peer's listener which it was.)
        const transports::FailureCause cause =
            transports::failure_cause(*iface.resource, p.address, status, false,
                                      transports::kCauseProbeMs);
        const int error = transports::fi_errno_of(cause, status);
        UFI_LOG_WARN(Subsys::EpData, "peer {}: cannot connect over {}: {}{}{}",
                     address::describe(p.address), iface.resource->label(),
                     transports::to_string(status),
                     cause == transports::FailureCause::kAsReported ? "" : ": ",
                     transports::describe(cause));
        dp_.fail_peer(p, error);
        return false;
    }
    if (p2p) {
        transports::OpenIface &target = *dp_.worker_->ifaces()[choice.iface];
        dp_.worker_->activate(target);
        const transports::Status ps = transports::AmLane::create_p2p(target, p.p2p);
        if (ps == transports::Status::kOk) {
            p.p2p_record = choice.record;
        } else {
            UFI_LOG_INFO(Subsys::EpData, "peer {}: no endpoint over {} ({}): staying on {}",
                         address::describe(p.address), target.resource->label(),
                         transports::to_string(ps), iface.resource->label());
        }
    }
    UFI_LOG_DEBUG(Subsys::EpData, "peer {}: active messages over {}{}{}",
                  address::describe(p.address), p.lane.resource().label(),
                  p.p2p.connected() ? ", then endpoint to endpoint over " : "",
                  p.p2p.connected() ? p.p2p.resource().label() : std::string());
    return true;
}

std::vector<uint8_t> Wireup::p2p_section(const Peer &p) const {
    std::vector<uint8_t> out;
    // Its endpoint-to-endpoint lane: still aside, or already carrying the traffic (a reply
    // that waited for lane room while this side moved, in crossing handshakes).
    const transports::AmLane &lane = p.lane.p2p() ? p.lane : p.p2p;
    if (!lane.connected()) return out;
    std::vector<uint8_t> ep;
    if (lane.ep_address(ep) != transports::Status::kOk) return out;
    const transports::TransportCode code = lane.iface().code;
    if (code == transports::kNoTransport || 1 + ep.size() > wire::kMaxP2pSection) return out;
    out.reserve(1 + ep.size());
    out.push_back(code);
    out.insert(out.end(), ep.begin(), ep.end());
    return out;
}

bool Wireup::accept_p2p(Peer &p, const uint8_t *section, size_t len) {
    if (len < 1 || section[0] == transports::kNoTransport) return false;
    const transports::TransportCode code = section[0];
    const uint8_t *ep = section + 1;
    const size_t ep_len = len - 1;
    if (p.address.uuid == dp_.cfg_.uuid && p.address.endpoint_id == dp_.cfg_.endpoint_id) return false;
    if (!p.p2p.connected() || p.p2p.iface().code != code) {
        // This side had none (or another transport's): one over the peer's, if the policy
        // connects that transport endpoint to endpoint here too.
        drop_p2p(p);
        const transports::LaneChoice c = transports::choose_p2p_lane(
            *dp_.worker_, p.address, dp_.lane_policy_, std::string(transports::transport_name(code)));
        if (c.iface == SIZE_MAX) return false;
        transports::OpenIface &target = *dp_.worker_->ifaces()[c.iface];
        dp_.worker_->activate(target);
        if (transports::AmLane::create_p2p(target, p.p2p) != transports::Status::kOk) return false;
        p.p2p_record = c.record;
    }
    if (p.p2p_connected) return true;  // crossing handshakes: connected at the first one
    const transports::Status s = p.p2p.connect_to_peer(p.address.records[p.p2p_record], ep, ep_len);
    if (s != transports::Status::kOk) {
        UFI_LOG_INFO(Subsys::EpData, "peer {}: cannot connect endpoint to endpoint over {}: {}",
                     address::describe(p.address), p.p2p.resource().label(),
                     transports::to_string(s));
        drop_p2p(p);
        return false;
    }
    p.p2p_connected = true;
    return true;
}

void Wireup::promote_p2p(Peer &p) {
    if (!p.p2p_connected || !p.p2p_peer_ready || !p.p2p.connected()) return;
    dp_.abortive_due_ = dp_.named_ports_;  // (the new lane's connection may be one accepted)
    p.aux = std::move(p.lane);
    p.lane = std::move(p.p2p);
    p.p2p_connected = p.p2p_peer_ready = false;
    dp_.refresh_eager_gate(p);  // (another lane, another short limit)
    ++dp_.stats_.p2p_lanes;
    UFI_LOG_DEBUG(Subsys::EpData, "peer {}: traffic moves to {} (endpoint to endpoint)",
                  address::describe(p.address), p.lane.resource().label());
}

void Wireup::drop_p2p(Peer &p) noexcept {
    p.p2p = transports::AmLane();
    p.p2p_record = SIZE_MAX;
    p.p2p_connected = p.p2p_peer_ready = false;
}

void Wireup::connect(Peer &p) {
    if (p.state != PeerState::kKnown) return;
    if (!open_lane(p)) return;
    // Before the send: over `self` the reply is handled inside it.
    p.state = PeerState::kConnecting;
    dp_.refresh_eager_gate(p);
    const transports::Status s = send_request(p);
    if (s == transports::kNoResource) {
        p.request_unsent = true;  // tcp: until its own handshake completes
        dp_.mark_busy(p);
    } else if (s != transports::kOk) {
        dp_.fail_peer(p, transports::fi_errno_of(s));
    }
}

transports::Status Wireup::send_request(Peer &p) {
    wire::WireupHdr h{};
    h.type = wire::kWireupRequest;
    h.version = wire::kProtocolVersion;
    h.sender_idx = p.src_key;  // (what it puts in `src`, and echoes)
    h.receiver_idx = kNoPeer;
    h.addr_len = static_cast<uint16_t>(dp_.cfg_.address.size());
    const std::vector<uint8_t> &key = dp_.cfg_.av_auth_keys ? p.present_key : dp_.cfg_.auth_key;
    h.key_len = static_cast<uint16_t>(key.size());
    h.uuid = dp_.cfg_.uuid;
    h.endpoint_id = dp_.cfg_.endpoint_id;
    h.incarnation = dp_.cfg_.incarnation;
    std::vector<uint8_t> p2p;
    try {
        p2p = p2p_section(p);
    } catch (const std::bad_alloc &) {
        p2p.clear();
    }
    if (p2p.empty()) drop_p2p(p);  // the connect-to-iface lane serves
    h.p2p_len = static_cast<uint16_t>(p2p.size());
    // Known by host and port, or by a name that leaves records out: the reply brings the rest.
    if (p.address.uuid == 0 || p.address.partial) h.flags = wire::kWireupSendAddress;
    h.status = sizeof h;  // (the header's size: wire.h)
    WireupPack w{&h, sizeof h, dp_.cfg_.address.data(), dp_.cfg_.address.size(), key.data(), key.size(),
                 p2p.data(), p2p.size()};
    return status_of_bcopy(p.lane.send_bcopy(wire::kAmWireup, pack_wireup, &w));
}

transports::Status Wireup::send_reply(Peer &p, uint16_t status, uint32_t sender_idx,
                                        uint8_t type) {
    wire::WireupHdr h{};
    h.type = type;
    h.version = wire::kProtocolVersion;
    h.status = status;
    h.sender_idx = sender_idx;
    h.receiver_idx = p.src_key;
    h.uuid = dp_.cfg_.uuid;
    h.endpoint_id = dp_.cfg_.endpoint_id;
    h.incarnation = dp_.cfg_.incarnation;
    std::vector<uint8_t> p2p;
    // A reply sent after this side moved to the endpoint-to-endpoint lane (it waited for
    // room while the crossing handshake's reply came) still offers it: without the section
    // the requester would drop its own and send on the handshake lane while this side sends
    // on the new one, and the two lanes reorder the peers' first messages.
    if (type == wire::kWireupReply && (p.p2p_connected || p.lane.p2p())) {
        try {
            p2p = p2p_section(p);
        } catch (const std::bad_alloc &) {
            p2p.clear();
        }
        if (p2p.empty()) drop_p2p(p);  // the requester then stays on the handshake lane
    }
    h.p2p_len = static_cast<uint16_t>(p2p.size());
    const bool with_address = type == wire::kWireupReply && p.send_address;
    h.addr_len = with_address ? static_cast<uint16_t>(dp_.cfg_.address.size()) : 0;
    // A refusal is the prefix every version reads (a peer of another version is refused too).
    const size_t hdr_size = type == wire::kWireupRefuse ? wire::kWireupPrefixSize : sizeof h;
    WireupPack w{&h, hdr_size, with_address ? dp_.cfg_.address.data() : nullptr, h.addr_len, nullptr, 0,
                 p2p.data(), p2p.size()};
    return status_of_bcopy(p.lane.send_bcopy(wire::kAmWireup, pack_wireup, &w));
}

transports::Status Wireup::send_header_only(Peer &p, uint8_t type, uint16_t status) {
    wire::WireupHdr h{};
    h.type = type;
    h.version = wire::kProtocolVersion;
    h.status = status;
    h.sender_idx = p.remote_idx;  // the receiver's own key for us
    h.receiver_idx = p.src_key;
    h.uuid = dp_.cfg_.uuid;
    h.endpoint_id = dp_.cfg_.endpoint_id;
    h.incarnation = dp_.cfg_.incarnation;
    WireupPack w{&h, sizeof h, nullptr, 0, nullptr, 0};
    return status_of_bcopy(p.lane.send_bcopy(wire::kAmWireup, pack_wireup, &w));
}

transports::Status Wireup::send_keepalive(Peer &p) {
    return send_header_only(p, wire::kWireupKeepalive, 0);
}

transports::Status Wireup::send_wireup_ack(Peer &p) {
    return send_header_only(p, wire::kWireupAck, p.ack_status);
}

bool Wireup::key_accepted(const uint8_t *key, size_t len, fi_addr_t *handle) const noexcept {
    *handle = FI_ADDR_NOTAVAIL;
    if (dp_.cfg_.av_auth_keys) {
        // One of the keys this endpoint took at fi_enable.
        for (const auto &k : dp_.cfg_.held_keys) {
            if (k.bytes.size() == len && len != 0 && std::memcmp(key, k.bytes.data(), len) == 0) {
                *handle = k.handle;
                return true;
            }
        }
        return false;
    }
    // Classic keys: endpoints that share a key communicate.
    if (len != dp_.cfg_.auth_key.size()) return false;
    return len == 0 || std::memcmp(key, dp_.cfg_.auth_key.data(), len) == 0;
}

void Wireup::handle_wireup(const uint8_t *data, size_t length) {
    WireupView w{};
    if (length < wire::kWireupPrefixSize) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    // The fields every version shares, then the header's size: a request says it (versions
    // 1-4: 0, their header is the prefix), a refusal is the prefix, the rest are this
    // version's (wire.h).
    std::memcpy(&w.hdr, data, wire::kWireupPrefixSize);
    const bool foreign = w.hdr.version != wire::kProtocolVersion;
    size_t hdr_size = sizeof w.hdr;
    if (w.hdr.type == wire::kWireupRequest) {
        hdr_size = w.hdr.status == 0 ? wire::kWireupPrefixSize : w.hdr.status;
    } else if (w.hdr.type == wire::kWireupRefuse) {
        hdr_size = wire::kWireupPrefixSize;
    }
    if (hdr_size < wire::kWireupPrefixSize || hdr_size > length ||
        (!foreign && w.hdr.type == wire::kWireupRequest && hdr_size != sizeof w.hdr)) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (foreign && w.hdr.type != wire::kWireupRequest) {
        // Nothing but a request of another version is read: the request is refused
        // (handle_request), which ends the exchange on both sides.
        ++dp_.stats_.refused_peers;
        return;
    }
    std::memcpy(&w.hdr, data, std::min(hdr_size, sizeof w.hdr));
    if (hdr_size < sizeof w.hdr) w.hdr.incarnation = 0;
    w.raw = data;
    w.raw_len = length;
    const uint8_t *body = data + hdr_size;
    const size_t extra = size_t{w.hdr.addr_len} + w.hdr.key_len + w.hdr.p2p_len;
    if (w.hdr.p2p_len > wire::kMaxP2pSection) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (w.hdr.type == wire::kWireupRequest) {
        if (length != hdr_size + extra) {
            ++dp_.stats_.dropped_malformed;
            return;
        }
        w.addr = body;
        w.key = w.addr + w.hdr.addr_len;
        if (w.hdr.p2p_len) w.p2p = w.key + w.hdr.key_len;
        handle_request(w);
    } else if (w.hdr.type == wire::kWireupReply || w.hdr.type == wire::kWireupRefuse) {
        // Replies carry no key; an address (asked for) and a P2P section only when they
        // accept.
        if (w.hdr.key_len != 0 || length != hdr_size + extra ||
            (w.hdr.type != wire::kWireupReply && (w.hdr.p2p_len != 0 || w.hdr.addr_len != 0))) {
            ++dp_.stats_.dropped_malformed;
            return;
        }
        if (w.hdr.addr_len) w.addr = body;
        if (w.hdr.p2p_len) w.p2p = body + w.hdr.addr_len;
        handle_reply(w);
    } else if (w.hdr.type == wire::kWireupAck || w.hdr.type == wire::kWireupClose ||
               w.hdr.type == wire::kWireupKeepalive) {
        if (length != hdr_size || extra != 0) {
            ++dp_.stats_.dropped_malformed;
            return;
        }
        if (w.hdr.type == wire::kWireupAck) {
            handle_wireup_ack(w);
        } else if (w.hdr.type == wire::kWireupClose) {
            handle_close(w);
        } else {
            ++dp_.stats_.keepalives_received;  // (its purpose was the host's acknowledgement)
        }
    } else {
        ++dp_.stats_.dropped_malformed;
    }
}

void Wireup::handle_request(const WireupView &w) {
    // (It came over a connection this endpoint may have accepted on its named port.)
    dp_.abortive_due_ = dp_.named_ports_;
    try {
        address::EndpointAddress a;
        std::string why;
        if (!address::unpack(w.addr, w.hdr.addr_len, a, &why) || a.uuid != w.hdr.uuid) {
            ++dp_.stats_.dropped_malformed;
            UFI_LOG_INFO(Subsys::EpData, "wireup request with a bad address dropped: {}", why);
            return;
        }
        Peer *p = nullptr;
        if (const uint32_t known = dp_.peers_.by_identity(a.uuid); known != kNoPeer) {
            p = dp_.peers_[known].get();
            if (w.hdr.version == wire::kProtocolVersion && p->remote_incarnation != 0 &&
                p->remote_incarnation != w.hdr.incarnation) {
                // The endpoint it was has gone and come back under its name: reset it where
                // no UCT callback runs (its lanes are destroyed), then take this request.
                if (w.hdr.incarnation == 0) {
                    ++dp_.stats_.dropped_malformed;
                    return;
                }
                // Only a sender that holds the key resets anything: a forged request naming a
                // peer's identity (not a secret) must not fail its operations.
                fi_addr_t handle = FI_ADDR_NOTAVAIL;
                if (!key_accepted(w.key, w.hdr.key_len, &handle)) {
                    ++dp_.stats_.refused_peers;
                    UFI_LOG_INFO(Subsys::EpData,
                                 "wireup: a request as {} under a new incarnation without an "
                                 "authorization key this endpoint holds: dropped, the peer kept",
                                 address::describe(p->address));
                    return;
                }
                restarts_.push_back(PendingRestart{
                    p->local_idx, std::move(a), std::vector<uint8_t>(w.raw, w.raw + w.raw_len)});
                dp_.mark_busy(*p);  // progress() runs the restart first
                return;
            }
            // Known by its name so far: the request brings its full address (crossing
            // handshakes: ours may still be unanswered, so it may move to the best lane).
            if (p->address.partial && a.endpoint_id == p->address.endpoint_id) {
                move_to_best_lane(*p, std::move(a));
            }
        } else if ((p = dp_.peers_.host_port_peer_of(a)) != nullptr) {
            // This side named it by host and port (a socket address, insertsvc) before it
            // called: the same peer, now with its identity and full address (and, if our own
            // request to it is still unanswered, on its best lane).
            dp_.peers_.name(a.uuid, p->local_idx);
            move_to_best_lane(*p, std::move(a));
        } else {
            p = dp_.peers_.add(std::move(a));
            p->report_id = dp_.peers_.report_id_for(p->address);
        }
        uint16_t status = wire::kWireupOk;
        if (w.hdr.version != wire::kProtocolVersion) {
            status = wire::kWireupBadVersion;
        } else if (!key_accepted(w.key, w.hdr.key_len, &p->key_handle)) {
            status = wire::kWireupBadKey;
        }
        if (!open_lane(*p)) return;  // we cannot answer a peer we cannot reach
        if (status != wire::kWireupOk) {
            ++dp_.stats_.refused_peers;
            if (status == wire::kWireupBadVersion) {
                UFI_LOG_WARN(Subsys::EpData,
                             "wireup: refused {}: it speaks ufi protocol version {}, this endpoint "
                             "{} (both sides must run the same ufi)",
                             address::describe(p->address), w.hdr.version, wire::kProtocolVersion);
            } else {
                UFI_LOG_INFO(Subsys::EpData, "wireup: refused {}: authorization key not held",
                             address::describe(p->address));
            }
            // Delivered even when the lane is still connecting (tcp): the refused sender's
            // operations fail instead of waiting for an answer.
            if (send_reply(*p, status, w.hdr.sender_idx, wire::kWireupRefuse) == transports::kNoResource) {
                p->reply_unsent = true;
                p->reply_to = w.hdr.sender_idx;
                p->reply_type = wire::kWireupRefuse;
                p->reply_status = status;
                dp_.mark_busy(*p);
            }
            return;
        }
        p->remote_idx = w.hdr.sender_idx;
        p->remote_incarnation = w.hdr.incarnation;
        p->send_address = (w.hdr.flags & wire::kWireupSendAddress) != 0;
        const bool was_waiting = p->state == PeerState::kConnecting;
        p->request_unsent = false;  // its request told it everything ours would have
        // An endpoint-to-endpoint lane: ours connects to the one the request offered, the
        // reply offers ours, and traffic waits for the requester's ack (or its own reply).
        const bool p2p =
            w.p2p != nullptr && !p->lane.p2p() && accept_p2p(*p, w.p2p, w.hdr.p2p_len);
        if (!p2p && !p->lane.p2p()) drop_p2p(*p);
        p->admitted = true;
        if (p2p && !p->p2p_peer_ready) {
            p->state = PeerState::kConnecting;
            dp_.refresh_eager_gate(*p);
        } else {
            promote_p2p(*p);
            set_connected(*p);
        }
        const transports::Status s =
            send_reply(*p, wire::kWireupOk, w.hdr.sender_idx, wire::kWireupReply);
        if (s == transports::kNoResource) {
            p->reply_unsent = true;
            p->reply_to = w.hdr.sender_idx;
            p->reply_type = wire::kWireupReply;
            p->reply_status = wire::kWireupOk;
            dp_.mark_busy(*p);
        } else if (s != transports::kOk) {
            dp_.fail_peer(*p, transports::fi_errno_of(s));
            return;
        }
        if (was_waiting || !p->queue.empty()) dp_.mark_busy(*p);
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpData, "out of memory: a wireup request is dropped");
    }
}

void Wireup::handle_reply(const WireupView &w) {
    const uint32_t idx = dp_.peers_.by_key(w.hdr.sender_idx);  // our own key, echoed
    if (idx == kNoPeer) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    Peer &p = *dp_.peers_[idx];
    // (from another endpoint, or from an earlier incarnation of the one it was admitted as)
    // (refusals are the prefix of every version: no incarnation)
    if ((p.address.uuid != 0 && p.address.uuid != w.hdr.uuid) ||
        (w.hdr.type == wire::kWireupReply && p.remote_incarnation != 0 &&
         p.remote_incarnation != w.hdr.incarnation)) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (w.hdr.type == wire::kWireupRefuse) {
        UFI_LOG_WARN(Subsys::EpData, "peer {} refused the connection: {}",
                     address::describe(p.address),
                     w.hdr.status == wire::kWireupBadKey ? "it does not hold this endpoint's authorization key"
                     : w.hdr.status == wire::kWireupBadVersion ? "protocol version differs"
                                                               : "no resources");
        dp_.fail_peer(p, w.hdr.status == wire::kWireupBadKey ? -FI_EACCES : -FI_ECONNREFUSED);
        return;
    }
    if (p.state == PeerState::kFailed) return;
    const bool by_host_and_port = p.address.uuid == 0;
    if (p.address.uuid == 0 && w.hdr.uuid != 0) {
        // A peer known by host and port (uuid 0 in the AV entry): now its identity is known,
        // so its own requests and its full address (inserted later) name this same peer.
        p.address.uuid = w.hdr.uuid;
        p.address.endpoint_id = w.hdr.endpoint_id;
        const uint32_t known = dp_.peers_.by_identity(w.hdr.uuid);
        if (known == kNoPeer) {
            try {
                dp_.peers_.name(w.hdr.uuid, p.local_idx);
            } catch (const std::bad_alloc &) {
                // Its later requests make a second peer: the traffic still flows.
            }
        } else if (known != p.local_idx) {
            UFI_LOG_DEBUG(Subsys::EpData,
                          "peer {} reached by host and port is also known as peer {}",
                          p.local_idx, known);
        }
    }
    if ((by_host_and_port || p.address.partial) && w.addr != nullptr) upgrade_lane(p, w);
    p.remote_idx = w.hdr.receiver_idx;
    p.remote_incarnation = w.hdr.incarnation;
    p.request_unsent = false;
    p.admitted = true;
    if (p.lane.p2p()) {
        // Traffic moved already (crossing handshakes): nothing left to agree.
    } else if (w.p2p != nullptr && p.p2p.connected() && accept_p2p(p, w.p2p, w.hdr.p2p_len)) {
        // The replier connected its endpoint to ours before it dp_.answered: ours connects to
        // its, the traffic moves, and the ack (the first message on the new lane) tells it so.
        p.p2p_peer_ready = true;
        promote_p2p(p);
        p.ack_status = wire::kWireupOk;
        p.ack_unsent = true;
    } else {
        const bool offered = w.p2p != nullptr;
        drop_p2p(p);
        if (offered) {  // it waits for our ack: tell it to stay on the handshake lane
            p.ack_status = wire::kWireupP2pDeclined;
            p.ack_unsent = true;
        }
    }
    if (p.ack_unsent) {
        // Nothing may go before the ack (the peer drops traffic from a peer it has not
        // connected yet): dp_.drain() sends it, then the queue.
        p.state = PeerState::kConnecting;
        dp_.mark_busy(p);
        return;
    }
    set_connected(p);
    dp_.mark_busy(p);  // queued sends go now
}

void Wireup::upgrade_lane(Peer &p, const WireupView &w) {
    address::EndpointAddress full;
    try {
        std::string why;
        if (!address::unpack(w.addr, w.hdr.addr_len, full, &why) || full.uuid != w.hdr.uuid ||
            full.endpoint_id != w.hdr.endpoint_id) {
            UFI_LOG_INFO(Subsys::EpData, "peer {}: its reply's address is unusable ({}): staying on {}",
                         address::describe(p.address), why, p.lane.resource().label());
            return;
        }
    } catch (const std::bad_alloc &) {
        return;
    }
    move_to_best_lane(p, std::move(full));
}

void Wireup::move_to_best_lane(Peer &p, address::EndpointAddress &&full) {
    if (p.p2p.connected()) return;  // its record index points into the address it has
    // Only before anything but the request went (the sends wait for the reply), and to a
    // lane that connects at once.
    if (p.state != PeerState::kConnecting || !p.lane.connected() || p.lane.p2p() ||
        p.aux.connected() || !p.ctrl.empty()) {
        p.address = std::move(full);
        return;
    }
    const transports::LaneChoice c = transports::choose_am_lane(*dp_.worker_, full, dp_.lane_policy_);
    transports::OpenIface *best = c.iface != SIZE_MAX ? dp_.worker_->ifaces()[c.iface].get() : nullptr;
    if (best == nullptr || c.p2p || best == &p.lane.iface()) {
        p.address = std::move(full);
        return;
    }
    transports::OpenIface &iface = *best;
    transports::AmLane better;
    dp_.worker_->activate(iface);
    const transports::Status s = transports::AmLane::connect(iface, full.records[c.record], better);
    if (s != transports::Status::kOk) {
        UFI_LOG_INFO(Subsys::EpData, "peer {}: cannot connect over {} ({}): staying on {}",
                     address::describe(full), iface.resource->label(), transports::to_string(s),
                     p.lane.resource().label());
        p.address = std::move(full);
        return;
    }
    UFI_LOG_DEBUG(Subsys::EpData, "peer {}: its full address came with the handshake: traffic moves from {} to {}",
                  address::describe(full), p.lane.resource().label(), better.resource().label());
    p.aux = std::move(p.lane);  // kept: the handshake's connection
    p.lane = std::move(better);
    dp_.refresh_eager_gate(p);  // (another lane, another short limit)
    p.address = std::move(full);
    ++dp_.stats_.lane_upgrades;
}

void Wireup::handle_wireup_ack(const WireupView &w) {
    const uint32_t idx = dp_.peers_.by_key(w.hdr.sender_idx);  // our own key for the sender
    if (idx == kNoPeer) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    Peer &p = *dp_.peers_[idx];
    if (p.address.uuid != w.hdr.uuid || p.state == PeerState::kFailed ||
        p.remote_incarnation != w.hdr.incarnation) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (w.hdr.status == wire::kWireupOk && p.p2p_connected) {
        p.p2p_peer_ready = true;
        promote_p2p(p);
    } else if (!p.lane.p2p()) {
        drop_p2p(p);  // declined (or nothing to agree on): the handshake lane carries it all
    }
    if (p.state == PeerState::kConnecting && p.remote_idx != kNoPeer && !p.ack_unsent) {
        set_connected(p);
        dp_.mark_busy(p);
    }
}

transports::Status Wireup::send_close(Peer &p) {
    return send_header_only(p, wire::kWireupClose, wire::kWireupOk);
}

void Wireup::handle_close(const WireupView &w) {
    // Our own key for the sender, or kNoPeer: it closed before our reply to its request came
    // (the request went first on the same lane, so we know it by its identity, and its
    // incarnation, by now).
    const uint32_t idx = w.hdr.sender_idx != kNoPeer ? dp_.peers_.by_key(w.hdr.sender_idx)
                                                      : dp_.peers_.by_identity(w.hdr.uuid);
    if (idx == kNoPeer) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    Peer &p = *dp_.peers_[idx];
    // The identity is in every name; the incarnation only in the handshake: a message that
    // does not know it fails nobody.
    if (p.address.uuid != w.hdr.uuid || p.address.endpoint_id != w.hdr.endpoint_id ||
        p.remote_incarnation == 0 || p.remote_incarnation != w.hdr.incarnation) {
        ++dp_.stats_.dropped_malformed;
        return;
    }
    if (p.state == PeerState::kFailed) return;
    closed_.push_back(ClosedPeer{idx, w.hdr.incarnation});
    dp_.mark_busy(p);  // progress() fails it first
}

void Wireup::set_connected(Peer &p) {
    p.state = PeerState::kConnected;
    dp_.on_connected_lane(p);
    dp_.rndv_.choose(p);
    dp_.refresh_eager_gate(p);  // the fast path opens
    // In arrival order. A handler may fail the peer (then the rest goes, as failing empties
    // `held`); none adds to it (only a connecting peer holds).
    std::vector<Peer::HeldMsg> early;
    early.swap(p.held);
    for (size_t i = 0; i < early.size() && p.state == PeerState::kConnected; ++i) {
        dp_.deliver(early[i].id, early[i].bytes.data(), early[i].bytes.size());
    }
}

void Wireup::hold_or_drop(uint32_t src, uint8_t id, const uint8_t *data,
                            size_t length) noexcept {
    if (const uint32_t idx = dp_.peers_.by_key(src); idx != kNoPeer) {
        Peer &p = *dp_.peers_[idx];
        if (p.admitted && p.state == PeerState::kConnecting) {
            try {
                p.held.push_back(Peer::HeldMsg{id, std::vector<uint8_t>(data, data + length)});
                ++dp_.stats_.held_early;
                return;
            } catch (const std::bad_alloc &) {
                UFI_LOG_WARN(Subsys::EpData, "out of memory: a message from {} that came before the connection is dropped",
                             address::describe(p.address));
            }
        }
    }
    ++dp_.stats_.dropped_unknown_src;
}

unsigned Wireup::progress() noexcept {
    unsigned done = 0;
    if (!closed_.empty()) {
        // Before the restarts: a peer's close comes before its new endpoint's request. Only
        // the incarnation that said it closes. (No handler runs here: nothing adds to the
        // list meanwhile.)
        for (const ClosedPeer &c : closed_) {
            Peer &p = *dp_.peers_[c.peer];
            if (p.remote_incarnation == c.incarnation) dp_.peer_closed(p);
        }
        closed_.clear();
        ++done;
    }
    if (!restarts_.empty()) {
        run_restarts();
        ++done;
    }
    if (dp_.abortive_due_) {
        // Outside UCT's callbacks: it reads this process's fd table.
        dp_.abortive_due_ = false;
        const unsigned n = dp_.worker_->close_named_abortively();
        UFI_LOG_DEBUG(Subsys::EpData, "{} connections accepted on named ports close abortively", n);
    }
    return done;
}

std::span<const MessageHandler> Wireup::handlers() noexcept {
    static constexpr MessageHandler kRows[] = {
        DataPath::module_row<&DataPath::wireup_, &Wireup::handle_wireup, false>(wire::kAmWireup),
    };
    return kRows;
}

}  // namespace ufi::runtime::proto
