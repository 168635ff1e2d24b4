// The progress sources bound to a CQ or counter (FI_PROGRESS_MANUAL): reading progresses
// them, and a blocking wait arms them and sleeps on their event fds. A source attached twice
// (an endpoint bound for FI_TRANSMIT and FI_RECV) counts once: one detach removes it. Not
// synchronised: the owner holds its lock around every call.
#pragma once

#include "runtime/progress.h"

#include <cstddef>
#include <vector>

namespace ufi::runtime::wait {

class WaitObject;

class SourceSet {
  public:
    // 0 (also when already attached), -FI_EINVAL (no progress function), -FI_ENOMEM.
    int attach(const ProgressSource &source) noexcept;
    // Removes the source and its fds from `wait` (may be nullptr). False when the source was
    // not attached.
    bool detach(const ProgressSource &source, WaitObject *wait) noexcept;
    // Distinct sources attached.
    size_t size() const noexcept { return entries_.size(); }
    bool empty() const noexcept { return entries_.empty(); }

    // Progresses every source once; returns the events they processed.
    unsigned progress() noexcept {
        unsigned n = 0;
        for (auto &e : entries_) n += e.source.progress(e.source.arg);
        return n;
    }

    // Before sleeping on `wait`: arms every source and adds its fds to the wait object's
    // epoll set. -FI_EAGAIN when a source has work pending (progress again instead of
    // sleeping). *needs_polling is set when some source has no fd to sleep on (the caller
    // then sleeps in short slices).
    int arm(WaitObject &wait, bool *needs_polling) noexcept;

  private:
    static constexpr int kMaxFds = 8;
    struct Entry {
        ProgressSource source;
        int fds[kMaxFds] = {};  // fds added to a wait object, removed on detach
        int nfds = 0;
    };
    std::vector<Entry> entries_;
};

}  // namespace ufi::runtime::wait
