// runtime/ep/shared_rx.h.
#include "runtime/ep/shared_rx.h"

#include "base/log/log.h"
#include "runtime/domain/domain.h"
#include "runtime/ep/endpoint.h"
#include "runtime/fid_cast.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <new>

namespace ufi::runtime::ep {

using log::Subsys;

namespace {
// Receives that may wait in a context opened without a size.
constexpr size_t kDefaultWaiting = 4096;
}  // namespace

int SharedRx::open(Domain *domain, const fi_rx_attr *attr, void *context, const SharedRxOps &ops,
                   SharedRx **out) noexcept {
    auto *s = new (std::nothrow) SharedRx();
    if (s == nullptr) return -FI_ENOMEM;
    s->domain_ = domain;
    if (attr != nullptr) s->attr_ = *attr;
    if (s->attr_.size == 0) s->attr_.size = kDefaultWaiting;
    s->fid.fclass = FI_CLASS_SRX_CTX;
    s->fid.context = context;
    s->fid.ops = ops.fid;
    s->ops = ops.ep;
    s->msg = ops.msg;
    s->tagged = ops.tagged;
    s->rma = ops.rma;
    s->atomic = ops.atomic;
    s->cm = ops.cm;
    s->collective = nullptr;
    domain->add_child();
    UFI_LOG_DEBUG(Subsys::EpCtrl, "shared receive context opened on domain {}", domain->offer.name);
    *out = s;
    return 0;
}

SharedRx::~SharedRx() = default;

Shut SharedRx::shut() noexcept {
    if (bound_.load(std::memory_order_relaxed) != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_close: {} endpoint(s) are bound to this shared receive context; close "
                     "them first",
                     bound_.load(std::memory_order_relaxed));
        return Shut::kBusy;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!waiting_queue_.empty()) {
        UFI_LOG_INFO(Subsys::EpCtrl,
                     "fi_close: {} receive(s) posted to the shared receive context never met a "
                     "message; dropped",
                     waiting_queue_.size());
    }
    waiting_queue_.clear();
    domain_->remove_child();
    return Shut::kFree;
}

int SharedRx::join(Endpoint *ep, av::Av *av) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (av != nullptr) {
        if (av_ != nullptr && av_ != av) {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "fi_enable: connectionless endpoints sharing a receive context must "
                         "share their address vector; this endpoint's AV is another one");
            return -FI_EINVAL;
        }
        av_ = av;
    }
    try {
        // (Never looked at: its first progress gives the waiting receives a turn.)
        members_.push_back(Member{ep, ~uint64_t{0}, posted_});
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    return 0;
}

void SharedRx::leave(Endpoint *ep) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(members_, [ep](const Member &m) { return m.ep == ep; });
    if (std::none_of(members_.begin(), members_.end(),
                     [](const Member &m) { return m.ep->connected_type() == false; })) {
        av_ = nullptr;  // no connectionless member left: the next one brings its AV
    }
}

ssize_t SharedRx::place(const Waiting &w) noexcept {
    for (Member &m : members_) {
        std::lock_guard<OptionalMutex> ep_lock(m.ep->worker_lock());
        proto::DataPath *dp = m.ep->data_path();
        if (dp == nullptr) continue;
        if (!dp->has_unexpected_for(w.src, w.tagged, w.tag, w.ignore)) continue;
        const ssize_t rc = dp->recv(w.iov, w.src, w.context, w.flags, w.tag, w.ignore, w.tagged);
        if (rc == -FI_EAGAIN) continue;  // its receive queue is full: another may take it
        return rc == 0 ? 1 : rc;
    }
    return 0;
}

ssize_t SharedRx::post(const proto::IovList &iov, fi_addr_t src, void *context, uint64_t flags,
                       uint64_t tag, uint64_t ignore, bool tagged) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiting_queue_.size() >= attr_.size) return -FI_EAGAIN;
    // A directed source must be one the endpoints know (they share the AV: ask one).
    for (Member &m : members_) {
        std::lock_guard<OptionalMutex> ep_lock(m.ep->worker_lock());
        proto::DataPath *dp = m.ep->data_path();
        if (dp == nullptr) continue;
        if (const int rc = dp->check_source(src, tagged); rc != 0) return rc;
        break;
    }
    Waiting w;
    w.iov = iov;
    w.src = src;
    w.context = context;
    w.flags = flags;
    w.tag = tag;
    w.ignore = ignore;
    w.tagged = tagged;
    ++posted_;
    // Earlier receives that wait go first: one of them may want the message this one would.
    if (waiting_queue_.empty()) {
        const ssize_t rc = place(w);
        if (rc < 0) return rc;
        if (rc == 1) return 0;
    }
    try {
        waiting_queue_.push_back(w);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    waiting_.store(waiting_queue_.size(), std::memory_order_relaxed);
    if (waiting_queue_.size() > 1) dispatch_locked();
    return 0;
}

void SharedRx::dispatch_locked() noexcept {
    for (auto it = waiting_queue_.begin(); it != waiting_queue_.end();) {
        const ssize_t rc = place(*it);
        if (rc == 0) {
            ++it;
            continue;
        }
        if (rc < 0) {
            // The endpoint refused a receive it could take (a directed source it does not
            // know, its connection over): it stays here for another endpoint.
            UFI_LOG_INFO(Subsys::EpData, "shared receive context: an endpoint refused a receive: {}",
                         fi_strerror(static_cast<int>(-rc)));
            ++it;
            continue;
        }
        it = waiting_queue_.erase(it);
    }
    waiting_.store(waiting_queue_.size(), std::memory_order_relaxed);
}

void SharedRx::dispatch(Endpoint *ep, uint64_t unexpected_seen) noexcept {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;  // the holder places receives itself
    auto m = std::find_if(members_.begin(), members_.end(),
                          [ep](const Member &x) { return x.ep == ep; });
    if (m == members_.end()) return;
    // Nothing new on either side since this endpoint was last looked at: nothing can match.
    if (m->unexpected_seen == unexpected_seen && m->posted_seen == posted_) return;
    m->unexpected_seen = unexpected_seen;
    m->posted_seen = posted_;
    dispatch_locked();
}

ssize_t SharedRx::cancel(void *context) noexcept {
    if (context == nullptr) return 0;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = waiting_queue_.begin(); it != waiting_queue_.end(); ++it) {
        if (it->context != context) continue;
        const Waiting w = *it;
        waiting_queue_.erase(it);
        waiting_.store(waiting_queue_.size(), std::memory_order_relaxed);
        for (Member &m : members_) {
            std::lock_guard<OptionalMutex> ep_lock(m.ep->worker_lock());
            proto::DataPath *dp = m.ep->data_path();
            if (dp == nullptr) continue;
            dp->complete_canceled(w.context, w.tagged, w.tag);
            return 0;
        }
        UFI_LOG_INFO(Subsys::EpData,
                     "fi_cancel: the shared receive context has no enabled endpoint whose CQ "
                     "could report the canceled receive; it is dropped");
        return 0;
    }
    // Handed to an endpoint already: canceled there if it still waits.
    for (Member &m : members_) {
        std::lock_guard<OptionalMutex> ep_lock(m.ep->worker_lock());
        proto::DataPath *dp = m.ep->data_path();
        if (dp != nullptr) (void)dp->cancel(context);
    }
    return 0;
}

SharedRx *shared_rx_of(fid_t fid) noexcept {
    return object_of<SharedRx>(fid, FI_CLASS_SRX_CTX);
}

}  // namespace ufi::runtime::ep
