// FI_PROGRESS_AUTO: a thread that drives one enabled endpoint while the application does not.
// It progresses the endpoint (its progress source takes the worker lock) and, when nothing is
// left to do, sleeps on the endpoint's event fds (and its peer-check timer) until traffic
// arrives or it is stopped: it never spins on an idle endpoint. The application's own calls
// still progress too; the domain turns on the data-path locks (Domain::locking, runtime/threading.h).
#pragma once

#include "runtime/progress.h"

#include <atomic>
#include <memory>
#include <thread>

namespace ufi::runtime::ep {

class ProgressThread {
  public:
    ProgressThread() = default;
    ~ProgressThread() { stop(); }
    ProgressThread(const ProgressThread &) = delete;
    ProgressThread &operator=(const ProgressThread &) = delete;

    // 0, or a negative fi errno when the thread or its stop fd cannot be made.
    int start(const ProgressSource &source) noexcept;
    // Stops and joins the thread (not under the worker lock: the thread takes it). In a fork
    // child, where the thread does not exist, only forgets it.
    void stop() noexcept;
    bool running() const noexcept { return thread_ != nullptr; }

  private:
    void run() noexcept;

    ProgressSource source_;
    int stop_fd_ = -1;
    std::atomic<bool> stopping_{false};
    std::unique_ptr<std::thread> thread_;
    unsigned generation_ = 0;  // fork generation it was started in
};

}  // namespace ufi::runtime::ep
