#include "runtime/eq/eq.h"

#include "runtime/cq/err_data.h"
#include "runtime/fabric/fabric.h"
#include "base/log/log.h"
#include "runtime/wait/trywait.h"
#include "runtime/eq/binding.h"

#include <algorithm>
#include <rdma/fi_errno.h>

#include <cstddef>
#include <cstring>
#include <new>

namespace ufi::runtime::eq {

// fi_trywait finds this class's objects through the wait machinery's registry.
UFI_REGISTER_TRYWAIT(eq, FI_CLASS_EQ, (wait::trywait_check<Eq, &eq_of>));

namespace {

bool is_connection_event(uint32_t event) {
    return event == FI_CONNREQ || event == FI_CONNECTED || event == FI_SHUTDOWN;
}

}  // namespace

Eq::Eq(Fabric *fabric, const Config &config, size_t capacity)
    : fabric_(fabric),
      api_version_(fabric->api_version),
      writable_(config.writable),
      capacity_(capacity) {}

int Eq::open(Fabric *fabric, const Config &config, void *context, fi_ops *ops, fi_ops_eq *eq_ops,
             Eq **out) noexcept {
    if (config.size > kMaxSize) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_open: attr->size {} is above ufi's limit of {} events",
                     config.size, kMaxSize);
        return -FI_EINVAL;
    }
    auto *eq = new (std::nothrow) Eq(fabric, config, config.size == 0 ? kDefaultSize : config.size);
    if (eq == nullptr) return -FI_ENOMEM;
    const int rc = eq->wait_.open(config.wait);
    if (rc != 0) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_open: cannot create the {} wait object: {}",
                     wait::kind_name(config.wait), rc);
        delete eq;
        return rc;
    }
    eq->fid.fclass = FI_CLASS_EQ;
    eq->fid.context = context;
    eq->fid.ops = ops;
    eq->ops = eq_ops;
    fabric->open_children.fetch_add(1);
    *out = eq;
    return 0;
}

Shut Eq::shut() noexcept {
    const int n = attached();
    if (n != 0) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_close(eq): {} objects are still bound to it", n);
        return Shut::kBusy;
    }
    fabric_->open_children.fetch_sub(1);
    if (!sleepers_.shut(wait_)) {
        // Never reached in practice (woken sleepers leave at once); freeing under a thread
        // that has not left would be worse than this leak.
        UFI_LOG_WARN(log::Subsys::Eq,
                     "fi_close(eq): {} threads did not leave fi_eq_sread; the EQ is not freed",
                     sleepers_.sleepers());
        return Shut::kKeep;
    }
    return Shut::kFree;
}

void Eq::detach() noexcept {
    if (attached_.fetch_sub(1, std::memory_order_relaxed) <= 0) {
        attached_.fetch_add(1, std::memory_order_relaxed);
        UFI_LOG_WARN(log::Subsys::Eq, "eq detach: nothing is attached");
    }
}

int Eq::push(Event &&event, Origin origin) noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (origin == Origin::Application && queue_.size() >= capacity_) return -FI_EAGAIN;
        try {
            queue_.push_back(std::move(event));
        } catch (const std::bad_alloc &) {
            return -FI_ENOMEM;
        }
    }
    wait_.notify();
    return 0;
}

int Eq::post(uint32_t event, const void *buf, size_t len, Origin origin) noexcept {
    try {
        Event e;
        e.event = event;
        if (len > 0)
            e.bytes.assign(static_cast<const uint8_t *>(buf),
                           static_cast<const uint8_t *>(buf) + len);
        return push(std::move(e), origin);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
}

int Eq::post_error(const fi_eq_err_entry &err, Origin origin) noexcept {
    try {
        Event e;
        e.error = true;
        e.err = err;
        if (e.err.err < 0) e.err.err = -e.err.err;
        if (err.err_data != nullptr && err.err_data_size > 0) {
            const auto *p = static_cast<const uint8_t *>(err.err_data);
            e.err_data_bytes.assign(p, p + err.err_data_size);
        }
        e.err.err_data = nullptr;
        e.err.err_data_size = 0;
        return push(std::move(e), origin);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
}

void Eq::settle_fd_locked() noexcept {
    // The fd stays readable exactly while events are queued. Posts wait for mutex_, so one
    // that comes after the reset signals again.
    if (queue_.empty() && wait_.signaled()) wait_.reset();
}

ssize_t Eq::read_locked(uint32_t *event, void *buf, size_t len, uint64_t flags) noexcept {
    if (queue_.empty()) {
        settle_fd_locked();
        return -FI_EAGAIN;
    }
    Event &e = queue_.front();
    if (e.error) return -FI_EAVAIL;
    size_t n = e.bytes.size();
    if (len < n) {
        if (!is_connection_event(e.event) || len < sizeof(fi_eq_cm_entry)) {
            UFI_LOG_WARN(log::Subsys::Eq, "fi_eq_read: len {} cannot hold the {}-byte event", len,
                         n);
            return -FI_ETOOSMALL;
        }
        n = len;  // connection data beyond the caller's buffer is dropped
    }
    if (event != nullptr) *event = e.event;
    if (n > 0) memcpy(buf, e.bytes.data(), n);
    if (!(flags & FI_PEEK)) {
        queue_.pop_front();
        settle_fd_locked();
    }
    return static_cast<ssize_t>(n);
}

int Eq::add_progress(Progress p) noexcept {
    std::unique_lock<std::shared_mutex> lock(progress_mutex_);
    try {
        if (p.listener) {
            progress_.push_back(p);
        } else {
            auto first_listener = std::find_if(progress_.begin(), progress_.end(),
                                               [](const Progress &q) { return q.listener; });
            progress_.insert(first_listener, p);
        }
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    return 0;
}

void Eq::remove_progress(Progress p) noexcept {
    std::unique_lock<std::shared_mutex> lock(progress_mutex_);
    std::erase_if(progress_, [&](const Progress &q) { return q.fn == p.fn && q.arg == p.arg; });
}

void Eq::nudge() noexcept {
    wait_.notify();
}

int Eq::sleep_slice_ms(int remaining_ms) noexcept {
    // With connection objects bound, sleep in slices and run their progress after each: an
    // event UCX's async thread could not deliver while a UCT call of ours held the connection
    // manager's context waits in its "missed" queue, and only progress takes it from there
    // (nothing nudges the EQ for it).
    std::shared_lock<std::shared_mutex> lock(progress_mutex_);
    if (progress_.empty()) return remaining_ms;
    return remaining_ms < 0 || remaining_ms > kProgressSliceMs ? kProgressSliceMs : remaining_ms;
}

void Eq::run_progress() noexcept {
    std::shared_lock<std::shared_mutex> lock(progress_mutex_);
    for (const Progress &p : progress_) p.fn(p.arg);
}

ssize_t Eq::read(uint32_t *event, void *buf, size_t len, uint64_t flags) noexcept {
    run_progress();
    std::lock_guard<std::mutex> lock(mutex_);
    return read_locked(event, buf, len, flags);
}

ssize_t Eq::readerr(fi_eq_err_entry *buf, uint64_t flags) noexcept {
    run_progress();
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.empty() || !queue_.front().error) return -FI_EAGAIN;
    Event &e = queue_.front();
    const bool consume = !(flags & FI_PEEK);
    fi_eq_err_entry out = e.err;
    size_t copy = sizeof(fi_eq_err_entry);
    void *user_ptr = nullptr;
    size_t user_size = 0;
    if (api_version_ < errdata::kSizedVersion) {
        copy = offsetof(fi_eq_err_entry, err_data_size);  // the 1.0 entry
    } else {
        user_ptr = buf->err_data;
        user_size = buf->err_data_size;
    }
    const errdata::Delivered d =
        errdata::deliver(api_version_, user_ptr, user_size, e.err_data_bytes, err_hold_, consume);
    out.err_data = d.ptr;
    out.err_data_size = d.size;
    memcpy(buf, &out, copy);
    if (consume) {
        queue_.pop_front();
        settle_fd_locked();
    }
    return static_cast<ssize_t>(copy);
}

ssize_t Eq::sread(uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags) noexcept {
    if (!wait_.blocking()) return -FI_ENOSYS;  // FI_WAIT_NONE (the api layer's table refuses first)
    wait::Sleeper sleeper(sleepers_);  // leaves after the result is computed: the last access
    if (!sleeper.admitted()) return -FI_ECANCELED;
    return sread_admitted(event, buf, len, timeout, flags);
}

ssize_t Eq::sread_admitted(uint32_t *event, void *buf, size_t len, int timeout,
                           uint64_t flags) noexcept {
    const wait::Deadline deadline(timeout);
    for (;;) {
        if (sleepers_.closing()) return -FI_ECANCELED;
        run_progress();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!queue_.empty()) return read_locked(event, buf, len, flags);
        }
        if (deadline.expired()) return -FI_EAGAIN;
        if (wait_.kind() == wait::Kind::Yield) {
            wait_.sleep(0);
            continue;
        }
        wait_.begin_watch();
        wait_.reset();
        run_progress();  // (what nudged before the reset is not lost)
        bool ready;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ready = !queue_.empty() || sleepers_.closing();
            if (ready) wait_.notify();  // keep the fd readable for other waiters
        }
        const int rc = ready ? 0 : wait_.sleep(sleep_slice_ms(deadline.remaining_ms()));
        wait_.end_watch();
        if (rc == -FI_EINTR) {
            std::lock_guard<std::mutex> lock(mutex_);
            return read_locked(event, buf, len, flags);
        }
    }
}

int Eq::trywait() noexcept {
    if (!wait_.has_fd()) {
        UFI_LOG_WARN(log::Subsys::Eq, "fi_trywait: the EQ's wait object is {}: nothing to wait on",
                     wait::kind_name(wait_.kind()));
        return -FI_EINVAL;
    }
    wait_.reset();
    run_progress();  // (connection events due make the queue non-empty: -FI_EAGAIN)
    std::lock_guard<std::mutex> lock(mutex_);
    if (!queue_.empty()) {
        wait_.notify();  // (the fd stays readable while events wait)
        return -FI_EAGAIN;
    }
    return 0;
}

int Eq::control(int command, void *arg) noexcept {
    return wait::control(wait_, command, arg, log::Subsys::Eq, "eq");
}

}  // namespace ufi::runtime::eq
