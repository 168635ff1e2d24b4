#include "runtime/wait/source_set.h"

#include "runtime/wait/wait.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <new>

namespace ufi::runtime::wait {

int SourceSet::attach(const ProgressSource &source) noexcept {
    if (source.progress == nullptr) return -FI_EINVAL;
    for (auto &e : entries_) {
        if (e.source == source) return 0;
    }
    try {
        Entry e;
        e.source = source;
        entries_.push_back(e);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    return 0;
}

bool SourceSet::detach(const ProgressSource &source, WaitObject *wait) noexcept {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const Entry &e) { return e.source == source; });
    if (it == entries_.end()) return false;
    if (wait != nullptr) {
        for (int i = 0; i < it->nfds; ++i) wait->unwatch_fd(it->fds[i]);
    }
    entries_.erase(it);
    return true;
}

int SourceSet::arm(WaitObject &wait, bool *needs_polling) noexcept {
    for (auto &e : entries_) {
        if (e.source.arm != nullptr && e.source.arm(e.source.arg) == -FI_EAGAIN) return -FI_EAGAIN;
        int fds[kMaxFds];
        const int n =
            e.source.wait_fds != nullptr ? e.source.wait_fds(e.source.arg, fds, kMaxFds) : 0;
        if (n <= 0 || !wait.has_fd()) {
            *needs_polling = true;
            continue;
        }
        // Added every time: an endpoint may create its interfaces (and fds) after binding,
        // and epoll forgets an fd that was closed. Adding a present fd is harmless.
        for (int i = 0; i < n && i < kMaxFds; ++i) {
            if (wait.watch_fd(fds[i]) != 0) {
                *needs_polling = true;
                continue;
            }
            if (std::find(e.fds, e.fds + e.nfds, fds[i]) == e.fds + e.nfds && e.nfds < kMaxFds) {
                e.fds[e.nfds++] = fds[i];
            }
        }
    }
    return 0;
}

}  // namespace ufi::runtime::wait
