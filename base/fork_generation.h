// Which process made a thing: fork() children share their parent's memory and file
// descriptions, so each handle, thread or wait object remembers the generation it was made in
// and a process releases only its own (transports/fork_safety.h says what fork() does to UCX
// state, docs/fork.md what it means for users).
#pragma once

namespace ufi::base::fork {

// 0 in the first process; each fork() child gets a new value (a pthread_atfork handler,
// installed by the first call, before any handle can exist).
unsigned generation() noexcept;

// True when something made in generation `made_in` belongs to an ancestor process.
inline bool inherited(unsigned made_in) noexcept {
    return made_in != generation();
}

// Runs `hook` in each fork() child, after the generation has moved on (one hook; the fork
// safety of transports/ installs its own there). Returns false if one is already set.
bool set_child_hook(void (*hook)() noexcept) noexcept;

}  // namespace ufi::base::fork
