#include "runtime/wait/sleepers.h"

#include "runtime/wait/wait.h"
#include "base/fork_generation.h"

#include <sched.h>

#include <thread>

namespace ufi::runtime::wait {

namespace {

constexpr uint64_t kCountMask = 0xffffffffULL;

uint64_t generation_bits() noexcept {
    return static_cast<uint64_t>(base::fork::generation()) << 32;
}

}  // namespace

bool SleeperGate::enter() noexcept {
    const uint64_t gen = generation_bits();
    uint64_t cur = state_.load(std::memory_order_seq_cst);
    uint64_t next;
    do {
        // A count of another generation belongs to threads that are not in this process.
        next = (cur & ~kCountMask) == gen ? cur + 1 : gen | 1;
    } while (!state_.compare_exchange_weak(cur, next, std::memory_order_seq_cst));
    // After the count is visible: shut() sets closing_ before it reads the count, so either
    // it sees this sleeper or this sleeper sees closing_.
    if (closing()) {
        leave();
        return false;
    }
    return true;
}

void SleeperGate::leave() noexcept {
    // Entered in this process, so the generation matches and only the count moves. Nothing
    // after this touches the object: it may be freed the moment the count reaches 0.
    state_.fetch_sub(1, std::memory_order_seq_cst);
}

uint32_t SleeperGate::sleepers() const noexcept {
    const uint64_t s = state_.load(std::memory_order_seq_cst);
    return (s & ~kCountMask) == generation_bits() ? static_cast<uint32_t>(s & kCountMask) : 0;
}

bool SleeperGate::shut(WaitObject &wait, std::chrono::milliseconds limit) noexcept {
    closing_.store(true, std::memory_order_seq_cst);
    const auto give_up = std::chrono::steady_clock::now() + limit;
    for (unsigned round = 0;; ++round) {
        // Again every round: a sleeper that drained the eventfd just before it saw closing_
        // may have taken the wake-up another one needed.
        wait.interrupt();
        if (sleepers() == 0) return true;
        if (std::chrono::steady_clock::now() >= give_up) return false;
        if (round < 64) {
            sched_yield();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
}

}  // namespace ufi::runtime::wait
