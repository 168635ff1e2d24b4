#include "transports/memory/memory_monitor.h"

#include <ucm/api/ucm.h>

namespace ufi::transports {

namespace {

constexpr int kEvents = UCM_EVENT_VM_UNMAPPED | UCM_EVENT_MEM_TYPE_FREE;
// Late among ucm's handlers (UCX's own caches use small numbers); order does not matter here.
constexpr int kPriority = 1000;

void on_event(ucm_event_type_t type, ucm_event_t *event, void *arg) {
    auto *self = static_cast<MemoryMonitor *>(arg);
    if (type == UCM_EVENT_VM_UNMAPPED) {
        self->notify(reinterpret_cast<std::uintptr_t>(event->vm_unmapped.address),
                     event->vm_unmapped.size);
    } else if (type == UCM_EVENT_MEM_TYPE_FREE) {
        self->notify(reinterpret_cast<std::uintptr_t>(event->mem_type.address),
                     event->mem_type.size);
    }
}

}  // namespace

bool MemoryMonitor::start() {
    if (running_) return true;
    running_ = ucm_set_event_handler(kEvents, kPriority, on_event, this) == UCS_OK;
    return running_;
}

void MemoryMonitor::stop() noexcept {
    if (!running_) return;
    ucm_unset_event_handler(kEvents, on_event, this);
    running_ = false;
}

void MemoryMonitor::notify(std::uintptr_t start, std::size_t length) noexcept {
    if (length == 0) return;
    const std::uintptr_t end = start + length < start ? UINTPTR_MAX : start + length;
    std::lock_guard<std::mutex> lock(mutex_);
    ++events_;
    // Set before the event's munmap returns: a registration made after it sees the flag.
    pending_.store(true, std::memory_order_release);
    if (overflow_) return;
    // Merge with the last range when they touch (munmap of a large area comes in pieces).
    if (count_ > 0) {
        AddressRange &last = queue_[count_ - 1];
        if (start <= last.end && end >= last.start) {
            last.start = start < last.start ? start : last.start;
            last.end = end > last.end ? end : last.end;
            return;
        }
    }
    if (count_ == queue_.size()) {
        overflow_ = true;
        count_ = 0;
        return;
    }
    queue_[count_++] = AddressRange{start, end};
}

std::size_t MemoryMonitor::drain(std::span<AddressRange> out, bool &everything) {
    std::lock_guard<std::mutex> lock(mutex_);
    everything = overflow_;
    overflow_ = false;
    if (everything) {
        count_ = 0;
        pending_.store(false, std::memory_order_release);
        return 0;
    }
    const std::size_t n = count_ < out.size() ? count_ : out.size();
    for (std::size_t i = 0; i < n; ++i) out[i] = queue_[i];
    for (std::size_t i = n; i < count_; ++i) queue_[i - n] = queue_[i];
    count_ -= n;
    pending_.store(count_ > 0, std::memory_order_release);
    return n;
}

std::uint64_t MemoryMonitor::events() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
}

}  // namespace ufi::transports
