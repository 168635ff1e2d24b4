#include "runtime/ep/wake_timer.h"

#include "base/log/log.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace ufi::runtime::ep {

WakeTimer::~WakeTimer() {
    if (fd_ >= 0) ::close(fd_);
}

bool WakeTimer::open() noexcept {
    fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd_ < 0) {
        UFI_LOG_WARN(log::Subsys::EpCtrl,
                     "timerfd_create: {}: a waiter sleeping on this endpoint is not woken to "
                     "check its peers",
                     std::strerror(errno));
        return false;
    }
    return true;
}

void WakeTimer::rearm(int ms) noexcept {
    if (fd_ < 0) return;
    uint64_t expirations = 0;
    while (::read(fd_, &expirations, sizeof expirations) > 0) {
    }
    itimerspec spec{};
    if (ms > 0) {
        spec.it_value.tv_sec = ms / 1000;
        spec.it_value.tv_nsec = static_cast<long>(ms % 1000) * 1000000L;
    }
    (void)timerfd_settime(fd_, 0, &spec, nullptr);
}

}  // namespace ufi::runtime::ep
