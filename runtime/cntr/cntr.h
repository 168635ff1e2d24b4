// The completion counter: two 64-bit values (successes, or bytes with FI_CNTR_EVENTS_BYTES,
// and errors) that the data path bumps with one atomic add, and fi_cntr_wait, which sleeps on
// the counter's wait object and the event fds of the bound endpoints until a threshold.
// Values wrap modulo 2^64: max_cntr_value = max_err_cntr_value = UINT64_MAX.
#pragma once

#include "runtime/object_close.h"
#include "runtime/cntr/binding.h"
#include "runtime/wait/sleepers.h"
#include "runtime/wait/source_set.h"
#include "runtime/wait/wait.h"
#include "runtime/lock.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <atomic>
#include <cstdint>

namespace ufi::runtime {
struct Domain;
}

namespace ufi::runtime::cntr {

inline constexpr uint64_t kMaxValue = UINT64_MAX;
inline constexpr uint64_t kMaxErrValue = UINT64_MAX;

// fi_cntr_attr after the api layer validated it.
struct Config {
    bool count_bytes = false;  // FI_CNTR_EVENTS_BYTES
    wait::Kind wait = wait::Kind::None;
};

class Cntr : public fid_cntr {
  public:
    using CStruct = fid_cntr;

    // Opens a counter on `domain` (domain->add_child()). 0, -FI_ENOMEM, or the wait object's
    // error.
    static int open(Domain *domain, const Config &config, void *context, fi_ops *ops,
                    fi_ops_cntr *cntr_ops, Cntr **out) noexcept;
    // fi_close, through close_object(): kBusy while endpoints or MRs are bound; else wakes the
    // threads blocked in wait (they return -FI_ECANCELED) and waits until they have left
    // (kFree; kKeep if one did not).
    Shut shut() noexcept;

    Domain *domain() const noexcept { return domain_; }

    // --- The data path --------------------------------------------------------------------
    // One completion of `bytes` user bytes: adds 1 (FI_CNTR_EVENTS_COMP) or `bytes`.
    void on_completion(uint64_t bytes) noexcept {
        value_.fetch_add(count_bytes_ ? bytes : 1, std::memory_order_release);
        wait_.notify();
    }
    // One failed operation: the error value grows by 1 (also when counting bytes).
    void on_error() noexcept {
        errors_.fetch_add(1, std::memory_order_release);
        wait_.notify();
    }

    // --- The application's calls (api/cntr.cpp) -------------------------------------------
    // fi_cntr_read / fi_cntr_readerr: progress the bound endpoints first.
    uint64_t read() noexcept;
    uint64_t readerr() noexcept;
    void add(uint64_t v) noexcept;
    void adderr(uint64_t v) noexcept;
    void set(uint64_t v) noexcept;
    void seterr(uint64_t v) noexcept;
    // fi_cntr_wait: 0 once the value is >= threshold; -FI_EAVAIL when the error value changes
    // while waiting; -FI_ETIMEDOUT after `timeout` ms (< 0: no limit); -FI_ECANCELED when
    // fi_close closes the counter meanwhile.
    int wait(uint64_t threshold, int timeout) noexcept;
    int trywait() noexcept;
    // fi_control: FI_GETWAIT, FI_GETWAITOBJ, FI_GETOPSFLAG, FI_SETOPSFLAG.
    int control(int command, void *arg) noexcept;

    // --- Bindings -------------------------------------------------------------------------
    int attach_source(const ProgressSource &source) noexcept;
    void detach_source(const ProgressSource &source) noexcept;
    void attach_mr() noexcept { mrs_.fetch_add(1, std::memory_order_relaxed); }
    void detach_mr() noexcept;

    bool counts_bytes() const noexcept { return count_bytes_; }
    wait::Kind wait_kind() const noexcept { return wait_.kind(); }

  private:
    static constexpr uint32_t kMagic = 0x75666974;  // "ufit"

    Cntr(Domain *domain, const Config &config);
    ~Cntr() = default;  // (freed by close_object() only)
    friend int close_object<Cntr>(Cntr *) noexcept;

    void progress() noexcept;
    int wait_admitted(uint64_t threshold, int timeout) noexcept;

    Domain *domain_;
    bool count_bytes_;
    alignas(64) std::atomic<uint64_t> value_{0};
    std::atomic<uint64_t> errors_{0};
    alignas(64) OptionalMutex lock_;  // guards sources_
    wait::SourceSet sources_;
    std::atomic<int> mrs_{0};
    std::atomic<uint64_t> ops_flags_{0};
    wait::WaitObject wait_;
    wait::SleeperGate sleepers_;  // threads in wait, for close
};

}  // namespace ufi::runtime::cntr
