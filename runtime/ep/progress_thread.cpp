#include "runtime/ep/progress_thread.h"

#include "base/log/log.h"
#include "base/fork_generation.h"

#include <rdma/fi_errno.h>

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>

namespace ufi::runtime::ep {

namespace {
constexpr int kMaxFds = 16;
constexpr int kNoFdSliceMs = 1;  // sources without fds: wake this often to progress
}  // namespace

int ProgressThread::start(const ProgressSource &source) noexcept {
    if (thread_ != nullptr) return 0;
    source_ = source;
    stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (stop_fd_ < 0) {
        UFI_LOG_WARN(log::Subsys::EpCtrl, "FI_PROGRESS_AUTO: eventfd: {}", std::strerror(errno));
        return -FI_EOTHER;
    }
    stopping_.store(false);
    generation_ = base::fork::generation();
    try {
        thread_ = std::make_unique<std::thread>([this] { run(); });
    } catch (const std::system_error &e) {
        UFI_LOG_WARN(log::Subsys::EpCtrl, "FI_PROGRESS_AUTO: cannot start the progress thread: {}",
                     e.what());
        ::close(stop_fd_);
        stop_fd_ = -1;
        return -FI_EOTHER;
    } catch (const std::bad_alloc &) {
        ::close(stop_fd_);
        stop_fd_ = -1;
        return -FI_ENOMEM;
    }
    return 0;
}

void ProgressThread::stop() noexcept {
    if (thread_ == nullptr) return;
    if (base::fork::inherited(generation_)) {
        // A fork child: the thread stayed in the parent; joining would wait forever.
        (void)thread_.release();  // NOLINT: intentionally not destroyed (it would terminate)
        ::close(stop_fd_);
        stop_fd_ = -1;
        return;
    }
    stopping_.store(true);
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
    thread_->join();
    thread_.reset();
    ::close(stop_fd_);
    stop_fd_ = -1;
}

void ProgressThread::run() noexcept {
    while (!stopping_.load(std::memory_order_acquire)) {
        if (source_.progress(source_.arg) > 0) continue;
        if (source_.arm(source_.arg) != 0) {
            sched_yield();  // work queued that needs progress, not an event
            continue;
        }
        pollfd p[kMaxFds + 1];
        p[0] = {stop_fd_, POLLIN, 0};
        int fds[kMaxFds];
        const int n = source_.wait_fds(source_.arg, fds, kMaxFds);
        for (int i = 0; i < n; ++i) p[i + 1] = {fds[i], POLLIN, 0};
        (void)::poll(p, static_cast<nfds_t>(n + 1), n > 0 ? -1 : kNoFdSliceMs);
    }
}

}  // namespace ufi::runtime::ep
