#include "runtime/cntr/cntr.h"

#include "runtime/domain/domain.h"
#include "base/log/log.h"
#include "runtime/wait/trywait.h"
#include "runtime/cntr/binding.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <mutex>
#include <new>

namespace ufi::runtime::cntr {

// fi_trywait finds this class's objects through the wait machinery's registry.
UFI_REGISTER_TRYWAIT(cntr, FI_CLASS_CNTR, (wait::trywait_check<Cntr, &cntr_of>));

namespace {

// Sources without an event fd: sleep in slices this long, never spin.
constexpr int kPollSliceMs = 1;

}  // namespace

Cntr::Cntr(Domain *domain, const Config &config)
    : domain_(domain),
      count_bytes_(config.count_bytes),
      lock_(domain->locking.completions) {}

int Cntr::open(Domain *domain, const Config &config, void *context, fi_ops *ops,
               fi_ops_cntr *cntr_ops, Cntr **out) noexcept {
    auto *c = new (std::nothrow) Cntr(domain, config);
    if (c == nullptr) return -FI_ENOMEM;
    const int rc = c->wait_.open(config.wait, !domain->locking.completions);
    if (rc != 0) {
        UFI_LOG_WARN(log::Subsys::Cntr, "fi_cntr_open: cannot create the {} wait object: {}",
                     wait::kind_name(config.wait), rc);
        delete c;
        return rc;
    }
    c->fid.fclass = FI_CLASS_CNTR;
    c->fid.context = context;
    c->fid.ops = ops;
    c->ops = cntr_ops;
    domain->add_child();
    *out = c;
    return 0;
}

Shut Cntr::shut() noexcept {
    size_t sources;
    {
        std::lock_guard<OptionalMutex> guard(lock_);
        sources = sources_.size();
    }
    const int mrs = mrs_.load(std::memory_order_relaxed);
    if (sources != 0 || mrs != 0) {
        UFI_LOG_WARN(log::Subsys::Cntr,
                     "fi_close(cntr): {} endpoints and {} MRs are still bound to it", sources, mrs);
        return Shut::kBusy;
    }
    domain_->remove_child();
    if (!sleepers_.shut(wait_)) {
        // Never reached in practice (woken sleepers leave at once); freeing under a thread
        // that has not left would be worse than this leak.
        UFI_LOG_WARN(log::Subsys::Cntr,
                     "fi_close(cntr): {} threads did not leave fi_cntr_wait; the counter is not "
                     "freed",
                     sleepers_.sleepers());
        return Shut::kKeep;
    }
    return Shut::kFree;
}

void Cntr::detach_mr() noexcept {
    if (mrs_.fetch_sub(1, std::memory_order_relaxed) <= 0) {
        mrs_.fetch_add(1, std::memory_order_relaxed);
        UFI_LOG_WARN(log::Subsys::Cntr, "cntr detach_mr: no MR is bound");
    }
}

void Cntr::progress() noexcept {
    std::lock_guard<OptionalMutex> guard(lock_);
    sources_.progress();
}

uint64_t Cntr::read() noexcept {
    progress();
    // The fd (FI_GETWAIT) is readable while the counter changed since it was last read.
    wait_.reset_if_signaled();
    return value_.load(std::memory_order_acquire);
}

uint64_t Cntr::readerr() noexcept {
    progress();
    wait_.reset_if_signaled();
    return errors_.load(std::memory_order_acquire);
}

void Cntr::add(uint64_t v) noexcept {
    value_.fetch_add(v, std::memory_order_release);
    wait_.notify();
}

void Cntr::adderr(uint64_t v) noexcept {
    errors_.fetch_add(v, std::memory_order_release);
    wait_.notify();
}

void Cntr::set(uint64_t v) noexcept {
    value_.store(v, std::memory_order_release);
    wait_.notify();
}

void Cntr::seterr(uint64_t v) noexcept {
    errors_.store(v, std::memory_order_release);
    wait_.notify();
}

int Cntr::wait(uint64_t threshold, int timeout) noexcept {
    if (!wait_.blocking()) return -FI_ENOSYS;  // FI_WAIT_NONE (the api layer's table refuses first)
    wait::Sleeper sleeper(sleepers_);  // leaves after the result is computed: the last access
    if (!sleeper.admitted()) return -FI_ECANCELED;
    return wait_admitted(threshold, timeout);
}

int Cntr::wait_admitted(uint64_t threshold, int timeout) noexcept {
    const uint64_t errors_before = errors_.load(std::memory_order_acquire);
    const wait::Deadline deadline(timeout);
    auto met = [&] { return value_.load(std::memory_order_acquire) >= threshold; };
    auto failed = [&] { return errors_.load(std::memory_order_acquire) != errors_before; };
    for (;;) {
        if (sleepers_.closing()) return -FI_ECANCELED;
        progress();
        if (met()) return 0;
        if (failed()) return -FI_EAVAIL;
        if (deadline.expired()) return -FI_ETIMEDOUT;
        if (wait_.kind() == wait::Kind::Yield) {
            wait_.sleep(0);
            continue;
        }
        bool needs_polling = false;
        wait_.begin_watch();
        int armed;
        {
            std::lock_guard<OptionalMutex> guard(lock_);
            armed = sources_.arm(wait_, &needs_polling);
        }
        if (armed != -FI_EAGAIN) {
            wait_.reset();
            if (!met() && !failed() && !deadline.expired() && !sleepers_.closing()) {
                int ms = deadline.remaining_ms();
                if (needs_polling) ms = ms < 0 ? kPollSliceMs : std::min(ms, kPollSliceMs);
                wait_.sleep(ms);  // an interrupted sleep just looks again
            }
        }
        wait_.end_watch();
    }
}

int Cntr::trywait() noexcept {
    if (!wait_.has_fd()) {
        UFI_LOG_WARN(log::Subsys::Cntr,
                     "fi_trywait: the counter's wait object is {}: nothing to wait on",
                     wait::kind_name(wait_.kind()));
        return -FI_EINVAL;
    }
    std::lock_guard<OptionalMutex> guard(lock_);
    if (sources_.progress() > 0) return -FI_EAGAIN;
    bool needs_polling = false;
    if (sources_.arm(wait_, &needs_polling) == -FI_EAGAIN) return -FI_EAGAIN;
    wait_.reset();
    return needs_polling ? -FI_EAGAIN : 0;
}

int Cntr::control(int command, void *arg) noexcept {
    if (command == FI_GETOPSFLAG || command == FI_SETOPSFLAG) {
        if (arg == nullptr) {
            UFI_LOG_WARN(log::Subsys::Cntr, "fi_control(cntr): arg is NULL");
            return -FI_EINVAL;
        }
        auto *flags = static_cast<uint64_t *>(arg);
        if (command == FI_GETOPSFLAG) {
            *flags = ops_flags_.load(std::memory_order_relaxed);
        } else {
            ops_flags_.store(*flags, std::memory_order_relaxed);
        }
        return 0;
    }
    return wait::control(wait_, command, arg, log::Subsys::Cntr, "cntr");
}

int Cntr::attach_source(const ProgressSource &source) noexcept {
    std::lock_guard<OptionalMutex> guard(lock_);
    return sources_.attach(source);
}

void Cntr::detach_source(const ProgressSource &source) noexcept {
    std::lock_guard<OptionalMutex> guard(lock_);
    if (!sources_.detach(source, &wait_)) {
        UFI_LOG_WARN(log::Subsys::Cntr, "cntr detach_source: the source was not attached");
    }
}

}  // namespace ufi::runtime::cntr
