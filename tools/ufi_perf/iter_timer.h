// Per-iteration timing, as ucx_perftest keeps it: ucx_perf_update reads the clock (the TSC) on
// every iteration, on both sides, and keeps the last intervals for its "typical" (median)
// latency. ufi_perf does the same work per iteration, so the two tools' loops match, and
// reports the same median beside the average.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace ufi::perf {

class IterTimer {
  public:
    void start() noexcept {
        head_ = 0;
        count_ = 0;
        wall_start_ = std::chrono::steady_clock::now();
        start_ = prev_ = now();
    }
    // One iteration done.
    void tick() noexcept {
        const uint64_t t = now();
        ring_[head_] = t - prev_;
        head_ = (head_ + 1) % kKept;
        ++count_;
        prev_ = t;
    }
    // The median of the kept intervals, in seconds (the clock's ticks scaled by the run's
    // wall time); 0 before any tick.
    double median_seconds() const {
        const size_t n = std::min<uint64_t>(count_, kKept);
        if (n == 0 || prev_ == start_) return 0;
        std::vector<uint64_t> v(ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(n));
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
        const double seconds_per_tick = wall / static_cast<double>(now() - start_);
        return static_cast<double>(v[n / 2]) * seconds_per_tick;
    }

  private:
    static constexpr size_t kKept = 2048;  // ucx_perftest's TIMING_QUEUE_SIZE
    static uint64_t now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        return __rdtsc();
#else
        return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
    }

    std::array<uint64_t, kKept> ring_{};
    size_t head_ = 0;
    uint64_t count_ = 0;
    uint64_t start_ = 0, prev_ = 0;
    std::chrono::steady_clock::time_point wall_start_{};
};

}  // namespace ufi::perf
