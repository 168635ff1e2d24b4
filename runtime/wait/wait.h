// The wait object shared by completion queues, event queues and counters: how a blocking call
// (fi_cq_sread, fi_eq_sread, fi_cntr_wait) sleeps, and what fi_control(FI_GETWAIT) hands out.
// FD waits sleep on an epoll set holding an eventfd (ufi's own completions and fi_cq_signal)
// plus the UCT event fds of the progress sources bound to the object; the epoll fd itself is
// the FI_GETWAIT object, pollable with poll/select/epoll. A producer pays a fence and a load
// when nobody can be waiting, and one eventfd write per reset cycle when someone can.
#pragma once

#include <rdma/fi_eq.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace ufi::log {
enum class Subsys : int;
}

namespace ufi::runtime::wait {

// What a wait object does; FI_WAIT_UNSPEC becomes Fd.
enum class Kind { None, Fd, PollFd, Yield };

// The application's wait_obj (read as int). 0 and *out; -FI_ENOSYS for FI_WAIT_SET and
// FI_WAIT_MUTEX_COND (not implemented: deprecated in libfabric 2.x); -FI_EINVAL for values
// that are not an fi_wait_obj. Logs nothing: the caller names its argument.
int parse_kind(int wait_obj, Kind *out) noexcept;
// The fi_wait_obj that FI_GETWAITOBJ reports for a kind.
int reported_wait_obj(Kind kind) noexcept;
const char *kind_name(Kind kind) noexcept;

// A point in time after which a blocking call gives up. timeout_ms < 0: never.
class Deadline {
  public:
    explicit Deadline(int timeout_ms) noexcept;
    bool infinite() const noexcept { return infinite_; }
    bool expired() const noexcept;
    // Milliseconds left, rounded up (never 0 before expiry); -1 when infinite.
    int remaining_ms() const noexcept;

  private:
    std::chrono::steady_clock::time_point end_;
    bool infinite_;
};

class WaitObject {
  public:
    WaitObject() = default;
    ~WaitObject();
    WaitObject(const WaitObject &) = delete;
    WaitObject &operator=(const WaitObject &) = delete;

    // Creates the eventfd and epoll set for Fd/PollFd. 0, or -FI_EMFILE/-FI_ENOMEM/-FI_EOTHER.
    // serialized: the application serializes every call that can produce or consume on this
    // object (the domain's threading policy locks no completions: FI_THREAD_DOMAIN or
    // FI_THREAD_COMPLETION, manual progress), so no producer can run beside a sleeper that
    // is arming its sleep, and notify() needs no fence.
    int open(Kind kind, bool serialized = false) noexcept;
    Kind kind() const noexcept { return kind_; }
    // fi_cq_sread / fi_eq_sread / fi_cntr_wait are allowed.
    bool blocking() const noexcept { return kind_ != Kind::None; }
    bool has_fd() const noexcept { return epoll_fd_ >= 0; }
    // The FI_GETWAIT object (the epoll fd); -1 without one.
    int fd() const noexcept { return epoll_fd_; }

    // The application holds the fd now (FI_GETWAIT): every notify() must reach it.
    void export_fd() noexcept;

    // Producer side: the watched state changed (an entry arrived, a counter moved, a signal).
    // Called after the change is published. Cheap unless a waiter can be sleeping.
    // The fence orders the publication before the look at watchers_ against a sleeper's
    // begin_watch() before its look at the state (store-load: x86 reorders it too). A
    // serialized object skips it: its sleeper (sread, trywait) and its producers (progress
    // inside the application's calls) never run at once, and a thread polling the exported fd
    // has been a watcher since FI_GETWAIT, which happened before. The fence is on every
    // completion's critical path (an mfence after the slot's stores: tens of cycles).
    void notify() noexcept {
        if (epoll_fd_ < 0) return;
        if (!serialized_) std::atomic_thread_fence(std::memory_order_seq_cst);
        notify_fenced();
    }
    // notify() for a producer that may run beside a sleeper whatever the threading model
    // (fi_cq_signal, whose purpose is to wake a thread blocked in sread).
    void notify_from_any_thread() noexcept {
        if (epoll_fd_ < 0) return;
        std::atomic_thread_fence(std::memory_order_seq_cst);
        notify_fenced();
    }

    // Consumer side. A sleeper brackets its sleep with begin_watch()/end_watch(); between
    // them it calls reset() and then re-checks its condition before sleep(): a notify() after
    // the change it missed is then guaranteed to wake it.
    void begin_watch() noexcept { watchers_.fetch_add(1, std::memory_order_seq_cst); }
    void end_watch() noexcept { watchers_.fetch_sub(1, std::memory_order_seq_cst); }
    // Clears the signal (drains the eventfd). Re-check the condition afterwards.
    void reset() noexcept;
    // reset() only if a signal is pending (no syscall otherwise).
    void reset_if_signaled() noexcept {
        if (signaled_.load(std::memory_order_relaxed)) reset();
    }
    bool signaled() const noexcept { return signaled_.load(std::memory_order_acquire); }

    // Wakes every thread sleeping on the wait object (and pollers of the FI_GETWAIT fd) now,
    // whoever might be waiting: fi_close uses it to send sleepers away. A no-op in a fork()
    // child that inherited the object (the eventfd is the parent's too).
    void interrupt() noexcept;

    // Adds a file descriptor to the epoll set (readable = wake up). Adding one that is
    // already there is fine. 0, or a negative fi errno (the fd cannot be watched).
    // In a fork() child that inherited the object the epoll set is its parent's too: both
    // refuse to change it (-FI_EOPBADSTATE; unwatch does nothing).
    int watch_fd(int fd) noexcept;
    void unwatch_fd(int fd) noexcept;
    // Opened by an ancestor process (this one is a fork() child holding copies of its fds).
    bool inherited() const noexcept;

    // Sleeps until notified, a watched fd is readable, or timeout_ms passes (-1: no limit).
    // Yield waits call sched_yield() once. Returns 0 (woken or yielded), -FI_ETIMEDOUT, or
    // -FI_EINTR when a signal interrupted the sleep.
    int sleep(int timeout_ms) noexcept;

  private:
    void notify_fenced() noexcept {
        if (watchers_.load(std::memory_order_relaxed) == 0) return;
        if (signaled_.load(std::memory_order_relaxed)) return;
        if (!signaled_.exchange(true, std::memory_order_seq_cst)) write_event();
    }
    void write_event() noexcept;

    Kind kind_ = Kind::None;
    bool serialized_ = false;
    int event_fd_ = -1;
    int epoll_fd_ = -1;
    std::atomic<bool> signaled_{false};
    std::atomic<int> watchers_{0};
    std::atomic<bool> exported_{false};
    unsigned generation_ = 0;  // base::fork::generation() at open
};

// fi_control(FI_GETWAIT / FI_GETWAITOBJ) on an object with this wait object:
// FI_GETWAIT: the fd (int *) for Fd, a struct fi_wait_pollfd for PollFd (-FI_ETOOSMALL with
// nfds set when the caller's array is empty), -FI_ENODATA for None and Yield (no object).
// FI_GETWAITOBJ: the enum fi_wait_obj. -FI_EINVAL for a NULL arg, -FI_ENOSYS for other
// commands. `what` names the caller in the WARN line ("fi_cq_open", ...).
int control(WaitObject &wait, int command, void *arg, log::Subsys subsys,
            const char *what) noexcept;

}  // namespace ufi::runtime::wait
