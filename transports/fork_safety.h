// What fork() does to UCX state, and how ufi keeps a child from breaking its parent
// (docs/fork.md).
//
// Handles: a child shares its parent's UCT state (shared-memory FIFOs and memory pools, verbs
// contexts, epoll sets), reached through memory and file descriptions both processes hold.
// Tearing down an inherited handle in the child tears it down under the parent (UCX asserts in
// the child, the parent crashes later). So every handle remembers the generation it was made
// in, and a process releases only its own; an inherited one is left alone (its memory goes
// when the child exits).
//
// UCX's async thread (UCS_ASYNC_MODE_THREAD_*) is process-wide: a child copies its state,
// including the epoll set it shares with the parent, but not the thread. A child of a process
// that had such a context open must not register with it; its endpoints poll their async
// events instead (UCS_ASYNC_MODE_POLL).
#pragma once

#include "base/fork_generation.h"

namespace ufi::transports::fork {

// The generation of a handle (base/fork_generation.h).
using base::fork::generation;
using base::fork::inherited;

// True in a fork() child (or a descendant of one) of a process that had an async context in a
// thread mode open (counted by AsyncThreadUse) when it forked: UCX's async thread is not
// usable here.
bool async_thread_inherited() noexcept;

// Held for the life of each async context in a thread mode, so that fork() knows whether the
// child inherits UCX's async thread state.
class AsyncThreadUse {
  public:
    AsyncThreadUse() noexcept;
    ~AsyncThreadUse();
    AsyncThreadUse(const AsyncThreadUse &) = delete;
    AsyncThreadUse &operator=(const AsyncThreadUse &) = delete;

  private:
    unsigned generation_;
};

}  // namespace ufi::transports::fork
