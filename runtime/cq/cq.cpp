#include "runtime/cq/cq.h"

#include "base/config/config.h"

#include "runtime/cq/err_data.h"
#include "runtime/domain/domain.h"
#include "base/log/log.h"
#include "runtime/wait/trywait.h"
#include "runtime/cq/binding.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

#include <sched.h>

namespace ufi::runtime::cq {

// fi_trywait finds this class's objects through the wait machinery's registry.
UFI_REGISTER_TRYWAIT(cq, FI_CLASS_CQ, (wait::trywait_check<Cq, &cq_of>));

namespace {

// Every format is a prefix of fi_cq_tagged_entry: reading copies the first entry_size bytes.
static_assert(offsetof(fi_cq_tagged_entry, op_context) == offsetof(fi_cq_entry, op_context));
static_assert(offsetof(fi_cq_tagged_entry, len) == offsetof(fi_cq_msg_entry, len));
static_assert(offsetof(fi_cq_tagged_entry, data) == offsetof(fi_cq_data_entry, data));
static_assert(sizeof(fi_cq_entry) == 8 && sizeof(fi_cq_msg_entry) == 24 &&
              sizeof(fi_cq_data_entry) == 40 && sizeof(fi_cq_tagged_entry) == 48);

// Sources without an event fd: sleep in slices this long, never spin.
constexpr int kPollSliceMs = 1;

size_t round_up_pow2(size_t n) {
    size_t c = 1;
    while (c < n) c <<= 1;
    return c;
}

}  // namespace

size_t entry_size(int format) noexcept {
    switch (format) {
        case FI_CQ_FORMAT_MSG:
            return sizeof(fi_cq_msg_entry);
        case FI_CQ_FORMAT_DATA:
            return sizeof(fi_cq_data_entry);
        case FI_CQ_FORMAT_TAGGED:
            return sizeof(fi_cq_tagged_entry);
        default:
            return sizeof(fi_cq_entry);
    }
}

Cq::Cq(Domain *domain, const Config &config, size_t capacity)
    : domain_(domain),
      api_version_(domain->api_version),
      format_(config.format),
      entry_size_(cq::entry_size(config.format)),
      threshold_cond_(config.threshold_cond),
      capacity_(capacity),
      mask_(capacity - 1),
      write_lock_(domain->locking.completions),
      read_lock_(domain->locking.completions),
      poll_yield_(poll_yield_setting()) {}

unsigned poll_yield_setting() noexcept {
    static const unsigned spins = static_cast<unsigned>(
        std::clamp<int64_t>(config::registry().get_int("UFI_POLL_YIELD"), 0, 1 << 30));
    return spins;
}

int Cq::open(Domain *domain, const Config &config, void *context, fi_ops *ops, fi_ops_cq *cq_ops,
             Cq **out) noexcept {
    if (config.size > kMaxSize) {
        UFI_LOG_WARN(log::Subsys::Cq,
                     "fi_cq_open: attr->size {} is above ufi's limit of {} entries", config.size,
                     kMaxSize);
        return -FI_EINVAL;
    }
    const size_t capacity = round_up_pow2(config.size == 0 ? kDefaultSize : config.size);
    auto *cq = new (std::nothrow) Cq(domain, config, capacity);
    if (cq == nullptr) return -FI_ENOMEM;
    cq->slots_.reset(new (std::nothrow) Slot[capacity]);
    if (!cq->slots_) {
        delete cq;
        return -FI_ENOMEM;
    }
    const int rc = cq->wait_.open(config.wait, !domain->locking.completions);
    if (rc != 0) {
        UFI_LOG_WARN(log::Subsys::Cq, "fi_cq_open: cannot create the {} wait object: {}",
                     wait::kind_name(config.wait), rc);
        delete cq;
        return rc;
    }
    cq->fid.fclass = FI_CLASS_CQ;
    cq->fid.context = context;
    cq->fid.ops = ops;
    cq->ops = cq_ops;
    domain->add_child();
    UFI_LOG_DEBUG(log::Subsys::Cq, "CQ opened: format {}, {} entries, {}", config.format, capacity,
                  wait::kind_name(config.wait));
    *out = cq;
    return 0;
}

Shut Cq::shut() noexcept {
    {
        std::lock_guard<OptionalMutex> guard(read_lock_);
        if (!sources_.empty()) {
            UFI_LOG_WARN(log::Subsys::Cq, "fi_close(cq): {} endpoints are still bound to it",
                         sources_.size());
            return Shut::kBusy;
        }
    }
    domain_->remove_child();
    if (!sleepers_.shut(wait_)) {
        // Never reached in practice (woken sleepers leave at once); freeing under a thread
        // that has not left would be worse than this leak.
        UFI_LOG_WARN(log::Subsys::Cq,
                     "fi_close(cq): {} threads did not leave fi_cq_sread; the CQ is not freed",
                     sleepers_.sleepers());
        return Shut::kKeep;
    }
    return Shut::kFree;
}

int Cq::write_error(const fi_cq_err_entry &err) noexcept {
    std::lock_guard<OptionalMutex> guard(write_lock_);
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) >= capacity_) return -FI_EAGAIN;
    try {
        ErrorRecord rec;
        rec.entry = err;
        if (rec.entry.err < 0) rec.entry.err = -rec.entry.err;
        if (err.err_data != nullptr && err.err_data_size > 0) {
            const auto *p = static_cast<const uint8_t *>(err.err_data);
            rec.data.assign(p, p + err.err_data_size);
        }
        rec.entry.err_data = nullptr;
        rec.entry.err_data_size = 0;
        std::lock_guard<std::mutex> lock(errors_mutex_);
        errors_.push_back(std::move(rec));
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    Slot &s = slots_[tail & mask_];
    s.entry = fi_cq_tagged_entry{err.op_context, err.flags, err.len, err.buf, err.data, err.tag};
    s.src = err.src_addr;
    s.error = 1;
    tail_.store(tail + 1, std::memory_order_release);
    wait_.notify();
    return 0;
}

ssize_t Cq::read(void *buf, size_t count, fi_addr_t *src) noexcept {
    std::lock_guard<OptionalMutex> guard(read_lock_);
    sources_.progress();
    // An empty CQ, the usual answer while an application polls, without the call below.
    if (head_.load(std::memory_order_relaxed) == tail_.load(std::memory_order_acquire) &&
        !wait_.signaled()) {
        // More processes than cores (MPI ranks, fabtests' multinode) all polling: one that
        // finds nothing for a while lets the one it waits for run, instead of spinning out
        // its time slice (3 ranks on 2 cores went 80x faster with this).
        if (poll_yield_ != 0 && ++empty_reads_ >= poll_yield_) [[unlikely]] {
            empty_reads_ = 0;
            sched_yield();
        }
        return -FI_EAGAIN;
    }
    empty_reads_ = 0;
    return read_locked(buf, count, src);
}

bool Cq::head_is_error_locked() const noexcept {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return false;
    return slots_[head & mask_].error != 0;
}

ssize_t Cq::read_locked(void *buf, size_t count, fi_addr_t *src) noexcept {
    uint64_t head = head_.load(std::memory_order_relaxed);
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    if (head == tail) {
        settle_fd();
        return -FI_EAGAIN;
    }
    auto *out = static_cast<char *>(buf);
    size_t n = 0;
    while (n < count && head != tail) {
        const Slot &s = slots_[head & mask_];
        if (s.error != 0) break;
        // Fixed sizes, so the copy stays inline (a variable-size memcpy is a libc call).
        switch (entry_size_) {
            case sizeof(fi_cq_entry): memcpy(out, &s.entry, sizeof(fi_cq_entry)); break;
            case sizeof(fi_cq_msg_entry): memcpy(out, &s.entry, sizeof(fi_cq_msg_entry)); break;
            case sizeof(fi_cq_data_entry): memcpy(out, &s.entry, sizeof(fi_cq_data_entry)); break;
            default: memcpy(out, &s.entry, sizeof(fi_cq_tagged_entry)); break;
        }
        out += entry_size_;
        if (src != nullptr) src[n] = s.src;
        ++n;
        ++head;
    }
    head_.store(head, std::memory_order_release);
    if (n > 0) {
        settle_fd();
        return static_cast<ssize_t>(n);
    }
    return count == 0 ? 0 : -FI_EAVAIL;
}

void Cq::settle_fd() noexcept {
    if (!wait_.signaled()) return;
    if (head_.load(std::memory_order_relaxed) != tail_.load(std::memory_order_acquire)) return;
    wait_.reset();
    // A completion written while we reset must leave the fd readable.
    if (head_.load(std::memory_order_relaxed) != tail_.load(std::memory_order_seq_cst))
        wait_.notify();
}

ssize_t Cq::readerr(fi_cq_err_entry *buf) noexcept {
    std::lock_guard<OptionalMutex> guard(read_lock_);
    if (!head_is_error_locked()) return -FI_EAGAIN;
    ErrorRecord rec;
    {
        std::lock_guard<std::mutex> lock(errors_mutex_);
        rec = std::move(errors_.front());
        errors_.pop_front();
    }
    head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);

    // What the caller's version of the struct holds: 1.0 ends before err_data_size, 1.5
    // before src_addr; 1.20 has it all.
    fi_cq_err_entry out = rec.entry;
    size_t copy = sizeof(fi_cq_err_entry);
    void *user_ptr = nullptr;
    size_t user_size = 0;
    if (api_version_ < errdata::kSizedVersion) {
        copy = offsetof(fi_cq_err_entry, err_data_size);
    } else {
        user_ptr = buf->err_data;
        user_size = buf->err_data_size;
        if (api_version_ < FI_VERSION(1, 20)) copy = offsetof(fi_cq_err_entry, src_addr);
    }
    const errdata::Delivered d =
        errdata::deliver(api_version_, user_ptr, user_size, rec.data, err_hold_, true);
    out.err_data = d.ptr;
    out.err_data_size = d.size;
    memcpy(buf, &out, copy);
    settle_fd();
    return 1;
}

int Cq::wait_once(const wait::Deadline &deadline, size_t threshold) noexcept {
    if (wait_.kind() == wait::Kind::Yield) return wait_.sleep(0);
    bool needs_polling = false;
    wait_.begin_watch();
    {
        std::lock_guard<OptionalMutex> guard(read_lock_);
        if (sources_.arm(wait_, &needs_polling) == -FI_EAGAIN) {
            wait_.end_watch();
            return 0;
        }
        wait_.reset();
        // Anything that arrived before the reset is seen here; anything after it signals.
        if (size() >= threshold || head_is_error_locked() || signal_pending_.load() ||
            deadline.expired() || sleepers_.closing()) {
            wait_.end_watch();
            return 0;
        }
    }
    int timeout = deadline.remaining_ms();
    if (needs_polling) timeout = timeout < 0 ? kPollSliceMs : std::min(timeout, kPollSliceMs);
    const int rc = wait_.sleep(timeout);
    wait_.end_watch();
    return rc == -FI_ETIMEDOUT ? 0 : rc;
}

ssize_t Cq::sread(void *buf, size_t count, fi_addr_t *src, size_t threshold, int timeout) noexcept {
    if (!wait_.blocking()) return -FI_ENOSYS;  // FI_WAIT_NONE (the api layer's table refuses first)
    wait::Sleeper sleeper(sleepers_);  // leaves after the result is computed: the last access
    if (!sleeper.admitted()) return -FI_ECANCELED;
    return sread_admitted(buf, count, src, threshold, timeout);
}

ssize_t Cq::sread_admitted(void *buf, size_t count, fi_addr_t *src, size_t threshold,
                           int timeout) noexcept {
    threshold = std::clamp<size_t>(threshold, 1, std::max<size_t>(1, std::min(count, capacity_)));
    const wait::Deadline deadline(timeout);
    for (;;) {
        if (sleepers_.closing()) return -FI_ECANCELED;
        const bool expired = deadline.expired();  // one answer per round: read before giving up
        {
            std::lock_guard<OptionalMutex> guard(read_lock_);
            sources_.progress();
            const size_t available = size();
            const bool signaled = signal_pending_.load();
            if (available >= threshold || head_is_error_locked() ||
                (available > 0 && (signaled || expired))) {
                if (signaled) signal_pending_.store(false);
                return read_locked(buf, count, src);
            }
        }
        if (signal_pending_.exchange(false)) return -FI_EAGAIN;
        if (expired) return -FI_EAGAIN;
        if (wait_once(deadline, threshold) == -FI_EINTR) {
            // Interrupted by a signal: return to the caller, as libfabric does.
            std::lock_guard<OptionalMutex> guard(read_lock_);
            return read_locked(buf, count, src);
        }
    }
}

int Cq::signal() noexcept {
    signal_pending_.store(true, std::memory_order_seq_cst);
    wait_.notify_from_any_thread();
    return 0;
}

int Cq::trywait() noexcept {
    if (!wait_.has_fd()) {
        UFI_LOG_WARN(log::Subsys::Cq, "fi_trywait: the CQ's wait object is {}: nothing to wait on",
                     wait::kind_name(wait_.kind()));
        return -FI_EINVAL;
    }
    std::lock_guard<OptionalMutex> guard(read_lock_);
    sources_.progress();
    if (size() > 0) return -FI_EAGAIN;
    bool needs_polling = false;
    if (sources_.arm(wait_, &needs_polling) == -FI_EAGAIN) return -FI_EAGAIN;
    wait_.reset();
    if (size() > 0) {
        wait_.notify();
        return -FI_EAGAIN;
    }
    // A source without an fd would never wake the application: it must poll instead.
    return needs_polling ? -FI_EAGAIN : 0;
}

int Cq::control(int command, void *arg) noexcept {
    return wait::control(wait_, command, arg, log::Subsys::Cq, "cq");
}

int Cq::attach_source(const ProgressSource &source) noexcept {
    std::lock_guard<OptionalMutex> guard(read_lock_);
    return sources_.attach(source);
}

void Cq::detach_source(const ProgressSource &source) noexcept {
    std::lock_guard<OptionalMutex> guard(read_lock_);
    if (!sources_.detach(source, &wait_)) {
        UFI_LOG_WARN(log::Subsys::Cq, "cq detach_source: the source was not attached");
    }
}

size_t Cq::attached_sources() noexcept {
    std::lock_guard<OptionalMutex> guard(read_lock_);
    return sources_.size();
}

}  // namespace ufi::runtime::cq
