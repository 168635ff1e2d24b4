// The send scheduler's rules, apart from the data path that applies them: the order in which a
// peer's operations may go (fences, the orderings an endpoint asked for, writes whose puts hold
// everything behind them), where a target's answer to a peer's read goes in the queue, how a
// peer's queue is drained, and the list of peers with queued work that progress drains. Plain
// code over Peer's queue and counters: unit-tested without a transport
// (tests/unit/proto/sched_test.cpp). DataPath (send_queue.cpp) drives it: submit, push, drain.
#pragma once

#include "base/status.h"
#include "runtime/proto/peer.h"
#include "runtime/proto/requests.h"

#include <cstdint>
#include <vector>

namespace ufi::runtime::proto::sched {

// Whether r must stay in p's queue for now: FI_FENCE waits until every earlier operation to the
// peer completed; an endpoint whose tx msg_order asks for more than FI_ORDER_SAS (`ordered`)
// has an RMA or atomic wait behind anything that went out, and a message behind RMA and
// atomics; anything waits behind a write we put whose puts are not on their way yet. An
// operation partly sent never waits (its rest follows its start), nor a target's answer to a
// peer's read (answers are not ordered with this side's operations).
inline bool held_by_order(const Peer &p, const SendReq &r, bool ordered) noexcept {
    if (r.started || r.op == SendOp::kReadResp) return false;
    const bool rma = r.op != SendOp::kMessage;
    return (r.fence && p.handed_off > 0) || p.put_writes_held > 0 ||
           (ordered && (rma ? p.handed_off : p.rma_handed_off) > 0);
}

// r went out and waits for the peer's answer (its push said kInProgress): counted once, and an
// RMA or atomic closes the short send's gate (messages may have to wait behind it; the data
// path's refresh_eager_gate reopens it when the answer came).
inline void count_handed_off(Peer &p, SendReq &r) noexcept {
    if (r.handed_off) return;
    r.handed_off = true;
    ++p.handed_off;
    if (r.op != SendOp::kMessage) {
        ++p.rma_handed_off;
        p.eager_short_max = -1;
    }
}

// A target's answer to a peer's read, queued: ahead of this side's own operations that have not
// started (on an ordered endpoint they may wait for the peer's answers to ours, and the peer's
// answers for this one: both sides reading at once would wait for each other), behind what
// started going out (a message's later fragments) and earlier answers.
inline void queue_answer(Peer &p, SendReq *r) noexcept {
    SendReq *before = p.queue.front();
    while (before != nullptr && (before->started || before->op == SendOp::kReadResp)) {
        before = before->hook.next;
    }
    p.queue.insert_before(before, r);
}

// How drain_sends() stopped.
enum class DrainEnd : uint8_t {
    kEmpty,   // everything queued went (or was handed off)
    kNoRoom,  // the lane took no more: the peer stays busy
    kError,   // a push failed with `error`: the caller fails the peer
    kFailed,  // a handler run inside a push failed the peer (its queue is completed already)
};

// Hands p's queued operations to `push` in order (Status push(Peer &, SendReq &)): kOk
// finishes the head (finish(SendReq *)), kInProgress takes it off the queue (the peer's answer
// finishes it), kNoResource stops. `failed()` says whether the peer failed meanwhile.
template <class Push, class Finish, class Failed>
DrainEnd drain_sends(Peer &p, Push &&push, Finish &&finish, Failed &&failed,
                     base::Status &error) noexcept {
    while (SendReq *r = p.queue.front()) {
        const base::Status s = push(p, *r);
        if (failed()) return DrainEnd::kFailed;
        if (s == base::Status::kNoResource) return DrainEnd::kNoRoom;
        if (s == base::Status::kInProgress) {
            p.queue.pop_front();
            continue;
        }
        if (s != base::Status::kOk) {
            error = s;
            return DrainEnd::kError;
        }
        p.queue.pop_front();
        finish(r);
    }
    return DrainEnd::kEmpty;
}

// The peers with queued work, each once (Peer::busy), by index: progress drains them.
class BusyPeers {
  public:
    void mark(Peer &p) {
        if (p.busy) return;
        p.busy = true;
        list_.push_back(p.local_idx);
    }
    bool empty() const noexcept { return list_.empty(); }
    // Calls each(index) for the peers marked until now, which must clear Peer::busy before it
    // drains the peer; those marked meanwhile (a handler run by a drain may queue more) wait
    // for the next call. Returns how many were called. The two lists trade places and keep
    // their capacity: no allocation per call once grown.
    template <class Each>
    unsigned take_each(Each &&each) {
        if (list_.empty()) return 0;
        draining_.swap(list_);
        for (uint32_t idx : draining_) each(idx);
        const auto n = static_cast<unsigned>(draining_.size());
        draining_.clear();
        return n;
    }

  private:
    std::vector<uint32_t> list_;
    std::vector<uint32_t> draining_;
};

}  // namespace ufi::runtime::proto::sched
