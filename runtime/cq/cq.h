// The completion queue: a ring of completions the data path writes into (one store per
// completion, FI_THREAD_SAFE adds a lock) and the application reads in one of libfabric's
// entry formats. Error completions hold their place in the ring (fi_cq_read returns
// -FI_EAVAIL when one reaches the head) and their details in a side queue.
//
// Capacity: the ring holds at least fi_cq_attr.size entries (0: kDefaultSize), rounded up to
// a power of two; successes and errors count alike. A full CQ is never overrun: write() and
// write_error() return -FI_EAGAIN and keep nothing, and the data path retries after the
// application has read (FI_RM_ENABLED).
#pragma once

#include "runtime/object_close.h"
#include "runtime/cq/binding.h"
#include "runtime/wait/sleepers.h"
#include "runtime/wait/source_set.h"
#include "runtime/wait/wait.h"
#include "runtime/lock.h"

#include <rdma/fi_eq.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace ufi::runtime {
struct Domain;
}

namespace ufi::runtime::cq {

inline constexpr size_t kDefaultSize = 1024;
inline constexpr size_t kMaxSize = size_t{1} << 22;
// Format chosen for FI_CQ_FORMAT_UNSPEC: the smallest, so any buffer an application sized
// for some format holds it (libfabric's util providers choose the same).
inline constexpr int kUnspecFormat = FI_CQ_FORMAT_CONTEXT;

// fi_cq_attr after the api layer validated it.
struct Config {
    int format = FI_CQ_FORMAT_CONTEXT;  // CONTEXT, MSG, DATA or TAGGED
    size_t size = 0;                    // 0: kDefaultSize
    wait::Kind wait = wait::Kind::None;
    bool threshold_cond = false;  // FI_CQ_COND_THRESHOLD: sread's cond is a size_t count
};

// The size in bytes of one entry of `format`.
size_t entry_size(int format) noexcept;

// UFI_POLL_YIELD: empty reads in a row after which a reader yields its core (0: never).
unsigned poll_yield_setting() noexcept;

class Cq : public fid_cq {
  public:
    using CStruct = fid_cq;

    // Opens a CQ on `domain` (domain->add_child()). 0, -FI_EINVAL (size above kMaxSize),
    // -FI_ENOMEM, or the wait object's error (-FI_EMFILE).
    static int open(Domain *domain, const Config &config, void *context, fi_ops *ops,
                    fi_ops_cq *cq_ops, Cq **out) noexcept;
    // fi_close, through close_object(): kBusy while progress sources (endpoints) are
    // attached; else wakes the threads blocked in sread (they return -FI_ECANCELED) and waits
    // until they have left (kFree; kKeep if one did not).
    Shut shut() noexcept;

    // --- The data path's writer API -------------------------------------------------------
    // A success completion. src is the source fi_addr_t for fi_cq_readfrom (FI_ADDR_NOTAVAIL
    // when unknown). 0, or -FI_EAGAIN when the CQ is full (nothing is written).
    [[gnu::always_inline]] int write(void *op_context, uint64_t flags, size_t len, void *buf,
                                     uint64_t data, uint64_t tag,
                                     fi_addr_t src = FI_ADDR_NOTAVAIL) noexcept {
        std::lock_guard<OptionalMutex> guard(write_lock_);
        const uint64_t tail = tail_.load(std::memory_order_relaxed);
        if (tail - head_.load(std::memory_order_acquire) >= capacity_) return -FI_EAGAIN;
        Slot &s = slots_[tail & mask_];
        s.entry.op_context = op_context;
        s.entry.flags = flags;
        s.entry.len = len;
        s.entry.buf = buf;
        s.entry.data = data;
        s.entry.tag = tag;
        s.src = src;
        s.error = 0;
        tail_.store(tail + 1, std::memory_order_release);
        wait_.notify();
        return 0;
    }
    // An error completion: `err` as fi_cq_readerr will report it (err positive; err_data
    // and err_data_size name bytes the CQ copies). 0, -FI_EAGAIN when full, -FI_ENOMEM.
    int write_error(const fi_cq_err_entry &err) noexcept;

    // --- The application's calls (api/cq.cpp) --------------------------------------------
    // fi_cq_read / fi_cq_readfrom (src may be NULL): progresses the attached sources, then
    // copies up to `count` entries. -FI_EAGAIN when empty, -FI_EAVAIL when an error
    // completion is at the head.
    ssize_t read(void *buf, size_t count, fi_addr_t *src) noexcept;
    // fi_cq_readerr, with the err_data rules of the domain's API version. 1, or -FI_EAGAIN
    // when no error completion is at the head.
    ssize_t readerr(fi_cq_err_entry *buf) noexcept;
    // fi_cq_sread / fi_cq_sreadfrom: waits until `threshold` entries (capped to count and
    // capacity), an error completion, fi_cq_signal or the timeout (ms, < 0 infinite), then
    // reads what is there. -FI_EAGAIN when it returns with nothing to read; -FI_ECANCELED
    // when fi_close closes the CQ meanwhile (nothing is read).
    ssize_t sread(void *buf, size_t count, fi_addr_t *src, size_t threshold, int timeout) noexcept;
    // fi_cq_signal: wakes one sread (or makes the next one return at once).
    int signal() noexcept;
    // fi_trywait for this CQ: 0 when the wait object may be slept on now (nothing to read,
    // transports armed); -FI_EAGAIN when the application should read first.
    int trywait() noexcept;
    // fi_control (FI_GETWAIT, FI_GETWAITOBJ).
    int control(int command, void *arg) noexcept;

    // --- Bindings (endpoints) -------------------------------------------------------------
    int attach_source(const ProgressSource &source) noexcept;
    void detach_source(const ProgressSource &source) noexcept;
    size_t attached_sources() noexcept;

    size_t capacity() const noexcept { return capacity_; }
    // Entries queued now (successes and errors).
    size_t size() const noexcept {
        return tail_.load(std::memory_order_acquire) - head_.load(std::memory_order_acquire);
    }
    int format() const noexcept { return format_; }
    size_t entry_size() const noexcept { return entry_size_; }
    wait::Kind wait_kind() const noexcept { return wait_.kind(); }
    bool threshold_cond() const noexcept { return threshold_cond_; }
    uint32_t api_version() const noexcept { return api_version_; }
    Domain *domain() const noexcept { return domain_; }

  private:
    static constexpr uint32_t kMagic = 0x75666963;  // "ufic"

    struct Slot {
        fi_cq_tagged_entry entry;  // every format is a prefix of this layout
        fi_addr_t src;
        uint64_t error;  // an error completion: details in errors_
    };
    struct ErrorRecord {
        fi_cq_err_entry entry;
        std::vector<uint8_t> data;
    };

    Cq(Domain *domain, const Config &config, size_t capacity);
    ~Cq() = default;  // (freed by close_object() only)
    friend int close_object<Cq>(Cq *) noexcept;

    ssize_t read_locked(void *buf, size_t count, fi_addr_t *src) noexcept;
    bool head_is_error_locked() const noexcept;
    // After a read: the fd stays readable exactly while entries are queued.
    void settle_fd() noexcept;
    // Sleeps once (sread): 0 to look again, -FI_EINTR.
    int wait_once(const wait::Deadline &deadline, size_t threshold) noexcept;
    ssize_t sread_admitted(void *buf, size_t count, fi_addr_t *src, size_t threshold,
                           int timeout) noexcept;

    Domain *domain_;
    uint32_t api_version_;
    int format_;
    size_t entry_size_;
    bool threshold_cond_;
    size_t capacity_;
    uint64_t mask_;
    std::unique_ptr<Slot[]> slots_;

    alignas(64) std::atomic<uint64_t> tail_{0};  // producer index
    OptionalMutex write_lock_;
    alignas(64) std::atomic<uint64_t> head_{0};  // consumer index
    OptionalMutex read_lock_;                    // also guards sources_
    // Empty reads in a row (under read_lock_), and after how many the reader yields its core.
    unsigned empty_reads_ = 0;
    const unsigned poll_yield_;
    wait::SourceSet sources_;
    std::atomic<bool> signal_pending_{false};

    std::mutex errors_mutex_;  // errors are rare: always locked
    std::deque<ErrorRecord> errors_;
    std::vector<uint8_t> err_hold_;  // err_data handed out by the last readerr

    wait::WaitObject wait_;
    wait::SleeperGate sleepers_;  // threads in sread, for close
};

}  // namespace ufi::runtime::cq
