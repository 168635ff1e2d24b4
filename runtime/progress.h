// How completion objects drive the transports under FI_PROGRESS_MANUAL: an endpoint bound to
// a CQ or counter registers a progress source; reading, waiting on or polling the CQ/counter
// calls progress on each source. Plain function pointers: no virtual dispatch on this path.
#pragma once

namespace ufi::runtime {

struct ProgressSource {
    void *arg = nullptr;
    // Drives the source's transports once; returns how many events it processed.
    unsigned (*progress)(void *arg) = nullptr;
    // Prepares to sleep: 0 when armed (every event will wake its fds), -FI_EAGAIN when work
    // is pending and the caller must progress again instead of sleeping.
    int (*arm)(void *arg) = nullptr;
    // Writes up to `max` file descriptors to watch (poll/epoll readable) into fds; returns
    // how many. A source without fds (e.g. a transport with no event fd) returns 0 and makes
    // waits fall back to short sleeps.
    int (*wait_fds)(void *arg, int *fds, int max) = nullptr;

    bool operator==(const ProgressSource &o) const { return arg == o.arg && progress == o.progress; }
};

}  // namespace ufi::runtime
