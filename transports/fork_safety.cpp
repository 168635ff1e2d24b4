#include "transports/fork_safety.h"

#include <atomic>

namespace ufi::transports::fork {

namespace {

std::atomic<int> g_async_thread_users{0};  // AsyncThreadUse objects of this generation
std::atomic<bool> g_async_thread_inherited{false};

// Runs in the child (base::fork's hook), which has one thread: nothing else reads these yet.
void in_child() noexcept {
    if (g_async_thread_users.load(std::memory_order_relaxed) > 0) {
        g_async_thread_inherited.store(true, std::memory_order_relaxed);
    }
    g_async_thread_users.store(0, std::memory_order_relaxed);  // the parent's, not ours
}

void install() noexcept {
    // Once, before the first AsyncThreadUse is counted: a fork earlier than that cannot
    // inherit an async thread.
    static const bool installed = base::fork::set_child_hook(&in_child);
    (void)installed;
}

}  // namespace

bool async_thread_inherited() noexcept {
    install();
    return g_async_thread_inherited.load(std::memory_order_relaxed);
}

AsyncThreadUse::AsyncThreadUse() noexcept : generation_(generation()) {
    install();
    g_async_thread_users.fetch_add(1, std::memory_order_relaxed);
}

AsyncThreadUse::~AsyncThreadUse() {
    // An inherited one was counted in the parent; the child's count started at 0.
    if (!inherited(generation_)) g_async_thread_users.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace ufi::transports::fork
