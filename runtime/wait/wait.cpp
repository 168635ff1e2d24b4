#include "runtime/wait/wait.h"

#include "runtime/c_enum.h"
#include "base/log/log.h"
#include "base/fork_generation.h"

#include <rdma/fi_errno.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace ufi::runtime::wait {

namespace {

int errno_to_fi(int err) {
    switch (err) {
        case EMFILE:
        case ENFILE:
            return -FI_EMFILE;
        case ENOMEM:
            return -FI_ENOMEM;
        default:
            return -FI_EOTHER;
    }
}

}  // namespace

int parse_kind(int wait_obj, Kind *out) noexcept {
    switch (wait_obj) {
        case FI_WAIT_NONE:
            *out = Kind::None;
            return 0;
        case FI_WAIT_UNSPEC:
        case FI_WAIT_FD:
            *out = Kind::Fd;
            return 0;
        case FI_WAIT_POLLFD:
            *out = Kind::PollFd;
            return 0;
        case FI_WAIT_YIELD:
            *out = Kind::Yield;
            return 0;
        case FI_WAIT_SET:
        case FI_WAIT_MUTEX_COND:
            return -FI_ENOSYS;
        default:
            return -FI_EINVAL;
    }
}

int reported_wait_obj(Kind kind) noexcept {
    switch (kind) {
        case Kind::Fd:
            return FI_WAIT_FD;
        case Kind::PollFd:
            return FI_WAIT_POLLFD;
        case Kind::Yield:
            return FI_WAIT_YIELD;
        case Kind::None:
            break;
    }
    return FI_WAIT_NONE;
}

const char *kind_name(Kind kind) noexcept {
    switch (kind) {
        case Kind::Fd:
            return "FI_WAIT_FD";
        case Kind::PollFd:
            return "FI_WAIT_POLLFD";
        case Kind::Yield:
            return "FI_WAIT_YIELD";
        case Kind::None:
            break;
    }
    return "FI_WAIT_NONE";
}

Deadline::Deadline(int timeout_ms) noexcept : infinite_(timeout_ms < 0) {
    end_ = std::chrono::steady_clock::now() +
           std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
}

bool Deadline::expired() const noexcept {
    return !infinite_ && std::chrono::steady_clock::now() >= end_;
}

int Deadline::remaining_ms() const noexcept {
    if (infinite_) return -1;
    const auto left = end_ - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return 0;
    // Round up: sleeping a little less than asked would wake early and spin once more.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

WaitObject::~WaitObject() {
    if (epoll_fd_ >= 0) close(epoll_fd_);
    if (event_fd_ >= 0) close(event_fd_);
}

int WaitObject::open(Kind kind, bool serialized) noexcept {
    kind_ = kind;
    serialized_ = serialized;
    generation_ = base::fork::generation();
    if (kind != Kind::Fd && kind != Kind::PollFd) return 0;
    event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (event_fd_ < 0) return errno_to_fi(errno);
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) {
        const int rc = errno_to_fi(errno);
        close(event_fd_);
        event_fd_ = -1;
        return rc;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = event_fd_;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, event_fd_, &ev) != 0) {
        const int rc = errno_to_fi(errno);
        close(epoll_fd_);
        close(event_fd_);
        epoll_fd_ = event_fd_ = -1;
        return rc;
    }
    return 0;
}

void WaitObject::export_fd() noexcept {
    if (!exported_.exchange(true)) begin_watch();
}

void WaitObject::write_event() noexcept {
    const uint64_t one = 1;
    // EAGAIN means the counter is saturated: it is readable already.
    while (write(event_fd_, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

void WaitObject::reset() noexcept {
    if (event_fd_ < 0) return;
    uint64_t value;
    while (read(event_fd_, &value, sizeof value) < 0 && errno == EINTR) {
    }
    signaled_.store(false, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool WaitObject::inherited() const noexcept {
    return base::fork::inherited(generation_);
}

void WaitObject::interrupt() noexcept {
    if (event_fd_ < 0 || inherited()) return;
    signaled_.store(true, std::memory_order_seq_cst);
    write_event();
}

int WaitObject::watch_fd(int fd) noexcept {
    if (epoll_fd_ < 0) return -FI_EINVAL;
    if (inherited()) return -FI_EOPBADSTATE;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0 || errno == EEXIST) return 0;
    return errno == EBADF || errno == EPERM ? -FI_EINVAL : errno_to_fi(errno);
}

void WaitObject::unwatch_fd(int fd) noexcept {
    // A child removing an fd from the epoll set it shares with its parent would remove it
    // for the parent.
    if (epoll_fd_ >= 0 && !inherited()) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

int WaitObject::sleep(int timeout_ms) noexcept {
    if (kind_ == Kind::Yield) {
        sched_yield();
        return 0;
    }
    if (epoll_fd_ < 0) return -FI_ENOSYS;
    epoll_event events[8];
    const int n = epoll_wait(epoll_fd_, events, 8, timeout_ms);
    if (n > 0) return 0;
    if (n == 0) return -FI_ETIMEDOUT;
    return errno == EINTR ? -FI_EINTR : errno_to_fi(errno);
}

int control(WaitObject &wait, int command, void *arg, log::Subsys subsys,
            const char *what) noexcept {
    if (command != FI_GETWAIT && command != FI_GETWAITOBJ) {
        UFI_LOG_INFO(subsys, "fi_control({}): command {} is not supported", what, command);
        return -FI_ENOSYS;
    }
    if (arg == nullptr) {
        UFI_LOG_WARN(subsys, "fi_control({}): arg is NULL", what);
        return -FI_EINVAL;
    }
    if (command == FI_GETWAITOBJ) {
        set_raw_enum(*static_cast<fi_wait_obj *>(arg), reported_wait_obj(wait.kind()));
        return 0;
    }
    switch (wait.kind()) {
        case Kind::Fd:
            wait.export_fd();
            *static_cast<int *>(arg) = wait.fd();
            return 0;
        case Kind::PollFd: {
            auto *pollfd = static_cast<fi_wait_pollfd *>(arg);
            // The set never changes: transport fds live inside the one epoll fd.
            pollfd->change_index = 1;
            if (pollfd->nfds < 1 || pollfd->fd == nullptr) {
                pollfd->nfds = 1;
                UFI_LOG_INFO(subsys,
                             "fi_control({}, FI_GETWAIT): struct fi_wait_pollfd needs 1 entry",
                             what);
                return -FI_ETOOSMALL;
            }
            wait.export_fd();
            pollfd->nfds = 1;
            pollfd->fd[0].fd = wait.fd();
            pollfd->fd[0].events = POLLIN;
            pollfd->fd[0].revents = 0;
            return 0;
        }
        case Kind::None:
        case Kind::Yield:
            break;
    }
    UFI_LOG_WARN(subsys,
                 "fi_control({}, FI_GETWAIT): the wait object is {}: there is none to return", what,
                 kind_name(wait.kind()));
    return -FI_ENODATA;
}

}  // namespace ufi::runtime::wait
