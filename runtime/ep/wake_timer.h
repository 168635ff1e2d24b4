// A one-shot timer fd an endpoint adds to the fds its waiters sleep on: while operations wait
// on peers, a sleeper in fi_cq_sread / fi_cntr_wait wakes at the peer-check interval, so the
// data path checks that shared-memory peers are alive (a dead one is otherwise silent) and a
// blocked wait returns with the error instead of hanging. Never spins: between checks the
// sleeper sleeps.
#pragma once

namespace ufi::runtime::ep {

class WakeTimer {
  public:
    WakeTimer() = default;
    ~WakeTimer();
    WakeTimer(const WakeTimer &) = delete;
    WakeTimer &operator=(const WakeTimer &) = delete;

    // Creates the fd; false (logged) when the system refuses.
    bool open() noexcept;
    int fd() const noexcept { return fd_; }
    // Clears an expiry (the fd stops being readable) and fires once `ms` from now, or never
    // when ms <= 0.
    void rearm(int ms) noexcept;

  private:
    int fd_ = -1;
};

}  // namespace ufi::runtime::ep
