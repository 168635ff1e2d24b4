// A peer that died or whose connection broke: the transports report it (tcp by itself, shared
// memory only when asked with uct_ep_check, which a dead process cannot answer), and every
// operation towards it completes with the error, so nothing waits for it forever.
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <chrono>

namespace ufi::runtime::proto {

using log::Subsys;

void DataPath::take_in_arrivals() noexcept {
    for (int i = 0; i < kIntakeRounds && worker_->progress_everything() != 0; ++i) {
    }
}

bool DataPath::awaits_p2p_ack(const Peer &p) noexcept {
    return p.state == PeerState::kConnecting && p.p2p_connected && !p.p2p_peer_ready && !p.lane.p2p();
}

bool DataPath::await_p2p_acks(bool failed_lane_only) noexcept {
    const auto waiting = [&] {
        for (const auto &pp : peers_) {  // (no handler runs meanwhile: the list stays)
            const Peer &p = *pp;
            if (awaits_p2p_ack(p) && (!failed_lane_only || worker_->failure_reported(p.lane.handle()))) {
                return true;
            }
        }
        return false;
    };
    if (!waiting()) return false;
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::milliseconds(kP2pAckWaitMs);
    bool still = true;
    while (still && std::chrono::steady_clock::now() < deadline) {
        (void)worker_->progress_everything();
        still = waiting();
    }
    UFI_LOG_DEBUG(Subsys::EpData, "a peer's handshake lane failed while its ack was due on the new lane: "
                  "{} after {} us",
                  still ? "no ack" : "the ack came",
                  std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
                      .count());
    return true;
}

void DataPath::handle_failures() noexcept {
    // What a peer sent before it failed may wait in another of its connections than the one
    // that reported the failure: a connected endpoint's client that sends and closes at once
    // leaves the handshake's ack and its message in the new endpoint-to-endpoint connection
    // while the handshake connection's end arrives first (tcp, UFI_CONNECT_TO_EP). Taken in
    // first, they are delivered (the ack moves the peer to the new lane, whose old one's
    // failure is then forgotten) rather than failed with the peer. Failures reported
    // meanwhile are taken below with the others.
    take_in_arrivals();
    // The same when the failed connection is a handshake lane about to be retired: the new
    // lane's connection may still be in the listener's queue (UCX's async thread accepts it)
    // while the old one's end is read here. What followed the ack there is taken in too.
    if (await_p2p_acks(true)) take_in_arrivals();
    std::vector<transports::EndpointWorker::EpFailure> failures;
    try {
        failures = worker_->take_failures();
    } catch (const std::bad_alloc &) {
        return;  // kept: the next progress tries again
    }
    // The causes of one batch are asked within one probe's time in all: a host gone silent
    // with many peers on it must not hold this progress call for a probe per peer. What is
    // left unasked keeps the transport's status.
    const auto probe_deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(transports::kCauseProbeMs);
    for (const auto &f : failures) {
        for (auto &pp : peers_) {
            Peer &p = *pp;
            if (f.ep == nullptr || (p.lane.handle() != f.ep && p.rma.handle() != f.ep &&
                                    p.aux.handle() != f.ep && p.p2p.handle() != f.ep)) {
                continue;
            }
            if (p.state != PeerState::kFailed) {
                const transports::Resource &over = p.lane.handle() == f.ep ? p.lane.resource()
                                                   : p.rma.handle() == f.ep ? *p.rma.iface().resource
                                                   : p.aux.handle() == f.ep ? p.aux.resource()
                                                                            : p.p2p.resource();
                // The transport's status often hides the cause (UCT's tcp reports every
                // failure as an endpoint timeout): name it, and complete with that.
                const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                      probe_deadline - std::chrono::steady_clock::now())
                                      .count();
                const transports::FailureCause cause = transports::failure_cause(
                    over, p.address, f.status, p.state == PeerState::kConnected,
                    left > 0 ? static_cast<int>(left) : 0);
                const int error = transports::fi_errno_of(cause, f.status);
                UFI_LOG_WARN(Subsys::EpData,
                             "peer {} failed ({} on {}{}{}): its operations complete with {}",
                             transports::address::describe(p.address),
                             transports::to_string(f.status), over.label(),
                             cause == transports::FailureCause::kAsReported ? "" : ": ",
                             transports::describe(cause), fi_strerror(-error));
                fail_peer(p, error);
            }
            // UCT wants a failed endpoint destroyed; zero-copy operations on it never complete
            // now, so the transfers still counting them finish here.
            p.rma.reset();
            p.lane.reset();
            p.aux.reset();
            p.p2p.reset();
            zcopy_.fail(p, true);
            break;
        }
    }
}

void DataPath::peer_closed(Peer &p) noexcept {
    if (p.state == PeerState::kFailed) return;
    UFI_LOG_INFO(Subsys::EpData,
                 "peer {} closed its endpoint: its operations complete with FI_ECONNRESET",
                 transports::address::describe(p.address));
    fail_peer(p, -FI_ECONNRESET);
    drop_gone_peer(p);
}

void DataPath::drop_gone_peer(Peer &p) noexcept {
    p.rma.reset();
    p.lane.reset();
    p.aux.reset();
    p.p2p.reset();
    zcopy_.fail(p, true);
    for (List<UnexpMsg> *q : {&match_.unexpected(true), &match_.unexpected(false)}) {
        for (UnexpMsg *u = q->front(); u != nullptr; u = u->hook.next) {
            if (u->src == p.local_idx && u->rts) u->sender_gone = true;
        }
    }
}

void DataPath::say_goodbye(int bound_ms) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(bound_ms);
    // What peers sent so far is taken in first: a handshake request still unread here would
    // wait for its answer forever, its sender's process being alive (the liveness check
    // watches processes, not endpoints). Answered, it is told of the close below.
    take_in_arrivals();
    // Sends one message, progressing for room on a full lane (a shared-memory lane needs its
    // sender's progress once it refused) within the bound; false when it did not go.
    const auto with_room = [&](Peer &p, auto &&send) {
        for (;;) {
            const transports::Status s = send();
            if (s != transports::kNoResource) return s == transports::kOk;  // or the lane failed
            if (std::chrono::steady_clock::now() >= deadline) {
                UFI_LOG_DEBUG(Subsys::EpData,
                              "fi_close: the lane to {} stayed full; it is not told of the close",
                              transports::address::describe(p.address));
                return false;
            }
            worker_->progress();
            if (p.state == PeerState::kFailed) return false;  // a handler failed it meanwhile
        }
    };
    // By index: a handler run by the progress above and below may add peers (never replace
    // one: that is progress()'s, which is not called here).
    for (size_t i = 0; i < peers_.size(); ++i) {
        Peer &p = *peers_[i];
        // Not this endpoint itself (an AV entry of its own name, over self), and not over a
        // lane a fork() child inherited: the parent's endpoint is not closing (docs/fork.md).
        if (p.state == PeerState::kFailed || !p.lane.connected() || p.lane.inherited() ||
            (p.address.uuid == cfg_.uuid && p.address.endpoint_id == cfg_.endpoint_id)) {
            continue;
        }
        // An answer owed to its request goes first: it tells our incarnation, which the close
        // names. A refusal ends the exchange by itself.
        if (p.reply_unsent) {
            const auto reply = [&] {
                return wireup_.send_reply(p, p.reply_status, p.reply_to, p.reply_type);
            };
            if (!with_room(p, reply)) continue;
            p.reply_unsent = false;
            if (p.reply_type != wire::kWireupReply) continue;
        }
        // Every peer that knows this endpoint's incarnation, or learns it from our request
        // before the close (the same lane, in order), whatever the handshake's state: it was
        // answered (connected, or waiting for the peer's ack), or our request is on its way.
        const bool told = p.remote_incarnation != 0 ||
                          (p.state == PeerState::kConnecting && !p.request_unsent);
        if (!told) continue;
        with_room(p, [&] { return wireup_.send_close(p); });
    }
}

size_t DataPath::settle_sends(int bound_ms, bool shared_connections_only) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(bound_ms);
    const auto unsettled = [&] {
        size_t n = 0;
        for (const auto &pp : peers_) {  // (no handler runs meanwhile: the list stays)
            Peer &p = *pp;
            if (p.state == PeerState::kFailed ||
                (cfg_.lives_here != nullptr && cfg_.lives_here(p.address.endpoint_id, p.address.uuid))) {
                continue;
            }
            for (transports::AmLane *lane : {&p.aux, &p.lane}) {  // (the older lane first)
                if (shared_connections_only && !lane->p2p()) continue;
                const transports::Status s = lane->flushed();
                if (s == transports::kInProgress || s == transports::kNoResource) {
                    ++n;
                    break;
                }
            }
        }
        return n;
    };
    size_t n = unsettled();
    while (n != 0 && std::chrono::steady_clock::now() < deadline) {
        (void)worker_->progress_everything();
        n = unsettled();
    }
    if (n != 0) {
        UFI_LOG_INFO(Subsys::EpData,
                     "fi_shutdown/fi_close: what was sent to {} peers had not all left after {} "
                     "ms; what is left is dropped with the connections",
                     n, bound_ms);
    }
    return n;
}

size_t DataPath::await_split_writers(int bound_ms) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(bound_ms);
    auto waiting = [this] {
        size_t n = 0;
        zcopy_.each_recv([&](const RecvReq &r) {
            n += r.rndv_protocol == wire::kRndvSplit && !r.split_acked &&
                 peers_[r.peer]->state == PeerState::kConnected;
        });
        return n;
    };
    size_t n = waiting();
    while (n != 0 && std::chrono::steady_clock::now() < deadline) {
        worker_->progress();  // the ATPs, and our own gets
        progress();           // control messages queued on full lanes (RTR, ATS)
        n = waiting();
    }
    if (n != 0) {
        UFI_LOG_INFO(Subsys::EpData,
                     "fi_close: {} receives copied by both sides still wait for their senders' "
                     "part after {} ms; a sender that progresses later may still write into "
                     "those buffers",
                     n, bound_ms);
    }
    return n;
}

void DataPath::check_peers_if_due() noexcept {
    const bool checks = needs_peer_checks();
    if (!checks && !departed_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_check_) return;
    next_check_ = now + std::chrono::milliseconds(cfg_.peer_check_ms > 0 ? cfg_.peer_check_ms : 1000);
    if (departed_) retire_departed_peers(now);  // (peer_reuse.cpp)
    if (!checks) return;
    for (auto &pp : peers_) {
        Peer &p = *pp;
        if (p.state == PeerState::kFailed || !p.lane.can_check()) continue;
        p.lane.check();  // a dead peer is reported to the worker (maybe from inside the call)
    }
    watch_hosts();  // (host_watch.cpp)
    // A shared-memory FIFO element a killed writer claimed and never wrote would hold every
    // message behind it for ever (transports/iface/mm_fifo_hole.h).
    (void)worker_->skip_fifo_holes();
}

void DataPath::tell_receivers(Peer &p, bool restarting) noexcept {
    ++failed_peers_;
    // A receive directed at the peer can never be filled by anyone else: it completes with
    // the peer's error (a receive for any source waits on: someone else may send). A
    // multi-receive buffer serves every source and stays.
    for (bool tagged : {false, true}) {
        if (restarting) break;  // (they wait for the endpoint that came back)
        List<RecvReq> &posted = match_.posted(tagged);
        for (RecvReq *r = posted.front(); r != nullptr;) {
            RecvReq *next = r->hook.next;
            if (r->src == p.local_idx && !r->multi) {
                posted.remove(r);
                r->msg_tag = r->tag;
                ++stats_.directed_recvs_failed;
                complete_recv_error(r, p.local_idx, -p.fail_status, 0);
            }
            r = next;
        }
    }
    // A connected endpoint's one peer is its connection: FI_SHUTDOWN tells.
    if (cfg_.peer_failed != nullptr && !cfg_.connected) {
        cfg_.peer_failed(cfg_.peer_failed_arg, peers_.source_of(p), p.fail_status);
    }
}

void DataPath::lose_peers(int error) noexcept {
    // The peer ended the connection (its disconnect travels apart from the data): what it
    // sent before is delivered first, as over a socket. Our own fi_shutdown cancels instead.
    if (error != -FI_ESHUTDOWN) {
        take_in_arrivals();
        if (await_p2p_acks(false)) take_in_arrivals();
    }
    for (size_t i = 0; i < peers_.size(); ++i) {
        Peer &p = *peers_[i];
        if (p.state != PeerState::kFailed) fail_peer(p, error);
    }
    end_connection();  // (also when no peer was known yet)
}

void DataPath::end_connection() noexcept {
    if (connection_over_) return;
    connection_over_ = true;
    // fi_shutdown's page: operations outstanding are canceled, their completions written
    // before it returns. The receives the connection would have filled complete with
    // FI_ECANCELED (the sends failed with their peer); new ones are refused (new_recv), and
    // every receive takes that slow path once the queue has no room.
    for (bool tagged : {false, true}) {
        List<RecvReq> &posted = match_.posted(tagged);
        while (RecvReq *r = posted.front()) cancel_posted(posted, r);
    }
    rx_size_ = 0;
}

}  // namespace ufi::runtime::proto
