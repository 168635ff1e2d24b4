// Departed peers' slots, reused. A server whose clients come and go would otherwise keep
// every client it ever had in its peer table: an 800-byte record with its address and
// identity, about 1.4 KiB per client incarnation (docs/reliability.md's soak). A peer that
// failed (killed, closed, timed out) at least UFI_PEER_REUSE_DELAY ago, which nothing refers
// to any more, gives its slot up (PeerTable::retire); the next new peer takes it under the
// slot's next generation, which is part of the key every message carries in `src`, so that a
// late message of the departed peer (a partitioned peer coming back, data still in a socket)
// is dropped rather than taken for its successor's.
#include "base/log/log.h"
#include "runtime/av/binding.h"
#include "runtime/proto/data_path.h"

#include <new>
#include <vector>

namespace ufi::runtime::proto {

using log::Subsys;

namespace {

// Nothing of the peer's own is in flight or queued.
bool idle(const Peer &p) noexcept {
    return !p.busy && p.queue.empty() && p.ctrl.empty() && p.held.empty() && p.handed_off == 0 &&
           p.rma_handed_off == 0 && p.untracked_writes == 0 && p.put_writes_held == 0 &&
           p.rx_recv == nullptr && p.rx_unexp == nullptr;
}

}  // namespace

void DataPath::retire_departed_peers(std::chrono::steady_clock::time_point now) noexcept {
    // A connected endpoint's one peer is its connection; 0: never reused.
    if (cfg_.connected || cfg_.peer_reuse_ms <= 0) {
        departed_ = false;
        return;
    }
    const auto delay = std::chrono::milliseconds(cfg_.peer_reuse_ms);
    // (+1: a count of 0 is "never looked")
    const uint64_t av_now = cfg_.av != nullptr ? av::changes(cfg_.av) + 1 : 1;
    const auto candidate = [&](const Peer &p) {
        // An AV entry named it when the AV was as it is now: it still does.
        return now - p.failed_at >= delay && idle(p) && p.av_kept_at != av_now;
    };
    bool waiting = false;
    size_t candidates = 0;
    for (const auto &pp : peers_) {
        const Peer &p = *pp;
        if (p.state != PeerState::kFailed || p.retired) continue;
        if (candidate(p)) {
            ++candidates;
        } else {
            waiting = true;
        }
    }
    departed_ = waiting;
    if (candidates == 0) return;
    // What else may name a slot: the AV caches, receives and unexpected messages, transfers,
    // the handshake's pending lists. One pass over each, for all candidates at once.
    std::vector<uint8_t> refs;
    try {
        refs.assign(peers_.size(), 0);
    } catch (const std::bad_alloc &) {
        departed_ = true;  // (tried again at the next check)
        return;
    }
    peers_.mark_cached(refs);
    zcopy_.mark_peers(refs);
    wireup_.mark_peers(refs);
    for (bool tagged : {false, true}) {
        for (const RecvReq *r = match_.posted(tagged).front(); r != nullptr; r = r->hook.next) {
            if (r->src < refs.size()) refs[r->src] = 1;
        }
        for (const UnexpMsg *u = match_.unexpected(tagged).front(); u != nullptr; u = u->hook.next) {
            if (u->src < refs.size()) refs[u->src] = 1;
        }
    }
    for (const auto &[ctx, u] : claimed_) {
        if (u->src < refs.size()) refs[u->src] = 1;
    }
    for (uint32_t i = 0; i < peers_.size(); ++i) {
        Peer &p = *peers_[i];
        if (p.state != PeerState::kFailed || p.retired || !candidate(p)) continue;
        // An AV entry still naming it: sends to it fail at once, as the application expects
        // of a failed peer, rather than connect afresh (an entry removed and inserted again
        // does that).
        fi_addr_t addr = FI_ADDR_NOTAVAIL;
        av::PeerEntry e;
        const bool in_av =
            cfg_.av != nullptr &&
            ((p.address.uuid != 0 && av::find_identity(cfg_.av, p.address.uuid, p.address.endpoint_id, addr, e) == 0) ||
             av::find_listener(cfg_.av, p.address, addr, e) == 0);
        if (refs[i] != 0 || in_av) {
            if (in_av) p.av_kept_at = av_now;
            departed_ = true;
            continue;
        }
        UFI_LOG_DEBUG(Subsys::EpData, "peer {} (slot {}) departed {} ms ago: its slot goes to the next new peer",
                      transports::address::describe(p.address), i,
                      std::chrono::duration_cast<std::chrono::milliseconds>(now - p.failed_at).count());
        peers_.retire(i);
        if (p.retired) ++stats_.peers_retired;
    }
}

}  // namespace ufi::runtime::proto
