// The threads inside a blocking call (fi_cq_sread/sreadfrom, fi_eq_sread, fi_cntr_wait) of one
// CQ, EQ or counter, so that fi_close can send them away before the object is freed: close
// refuses new sleepers, wakes the present ones through the wait object, and frees the object
// only after the last one has left; each returns -FI_ECANCELED. Separate from the wait
// object's watcher count, which an FI_GETWAIT fd holds for good. docs/completions.md.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace ufi::runtime::wait {

class WaitObject;

class SleeperGate {
  public:
    // How long close waits for sleepers to leave before it gives up on freeing the object.
    // They leave within a scheduling delay of being woken; this bound only exists so that
    // fi_close cannot hang on a thread that cannot run (say, one it interrupted itself).
    static constexpr std::chrono::milliseconds kLeaveLimit{10000};

    // A blocking call enters before it touches anything else of the object. False when the
    // object is closing: the call then returns -FI_ECANCELED at once.
    bool enter() noexcept;
    // The blocking call's last access to the object.
    void leave() noexcept;
    // Whether fi_close has begun: a sleeper checks it after every wake-up and leaves.
    bool closing() const noexcept { return closing_.load(std::memory_order_seq_cst); }
    // Threads of this process inside a blocking call now.
    uint32_t sleepers() const noexcept;

    // For fi_close: from now on enter() refuses; wakes the sleepers (through `wait`, and the
    // closing flag for those that poll) until every one has left. True when none is left;
    // false when some did not leave within `limit`: the object must then not be freed.
    // The caller must hold none of the object's locks (sleepers may need them to leave).
    bool shut(WaitObject &wait, std::chrono::milliseconds limit = kLeaveLimit) noexcept;

  private:
    // fork generation << 32 | sleepers: a fork() child inherits the count, not the threads,
    // so a count of another generation means no sleeper in this process.
    std::atomic<uint64_t> state_{0};
    std::atomic<bool> closing_{false};
};

// Enters a gate for the duration of a blocking call.
class Sleeper {
  public:
    explicit Sleeper(SleeperGate &gate) noexcept : gate_(gate), admitted_(gate.enter()) {}
    ~Sleeper() {
        if (admitted_) gate_.leave();
    }
    Sleeper(const Sleeper &) = delete;
    Sleeper &operator=(const Sleeper &) = delete;
    // False: the object is closing; return -FI_ECANCELED without touching it.
    bool admitted() const noexcept { return admitted_; }

  private:
    SleeperGate &gate_;
    bool admitted_;
};

}  // namespace ufi::runtime::wait
