#include "base/fork_generation.h"

#include <pthread.h>

#include <atomic>

namespace ufi::base::fork {

namespace {

std::atomic<unsigned> g_generation{0};
std::atomic<void (*)() noexcept> g_child_hook{nullptr};

// Runs in the child, which has one thread: nothing else reads these yet.
void in_child() {
    g_generation.fetch_add(1, std::memory_order_relaxed);
    if (const auto hook = g_child_hook.load(std::memory_order_relaxed)) hook();
}

void install() noexcept {
    // Once, before the first handle records a generation: a fork earlier than that cannot
    // leave an inherited handle behind.
    static const bool installed = pthread_atfork(nullptr, nullptr, in_child) == 0;
    (void)installed;
}

}  // namespace

unsigned generation() noexcept {
    install();
    return g_generation.load(std::memory_order_relaxed);
}

bool set_child_hook(void (*hook)() noexcept) noexcept {
    install();
    void (*expected)() noexcept = nullptr;
    return g_child_hook.compare_exchange_strong(expected, hook, std::memory_order_acq_rel);
}

}  // namespace ufi::base::fork
