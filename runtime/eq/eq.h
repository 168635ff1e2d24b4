// The event queue: control-path events (asynchronous AV inserts, MR registrations,
// connection management, application events from fi_eq_write), one variable-sized event per
// read, errors in order with the rest (fi_eq_read returns -FI_EAVAIL when one is at the
// head). Posting is thread-safe whatever the threading model: events come from any thread.
//
// Capacity: fi_eq_attr.size events (0: kDefaultSize) bound what the application writes: a
// full EQ refuses fi_eq_write with -FI_EAGAIN and keeps nothing. Events ufi itself posts (AV
// insert results, MR completions, connection events) are never dropped: the EQ grows past
// its size for them, as libfabric's own EQs do, because the application could not ask for a
// lost FI_AV_COMPLETE again (an FI_EVENT insert of 1,100 bad addresses into a 1,024-event EQ
// used to lose it, and its waiter never finished).
#pragma once

#include "runtime/object_close.h"
#include "runtime/wait/sleepers.h"
#include "runtime/wait/wait.h"
#include "runtime/eq/binding.h"

#include <rdma/fi_eq.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace ufi::runtime {
struct Fabric;
}

namespace ufi::runtime::eq {

inline constexpr size_t kDefaultSize = 1024;
inline constexpr size_t kMaxSize = size_t{1} << 20;
// The largest event fi_eq_write accepts (an fi_eq_cm_entry with connection data is far less).
inline constexpr size_t kMaxEventSize = size_t{1} << 16;

// fi_eq_attr after the api layer validated it.
struct Config {
    size_t size = 0;  // 0: kDefaultSize
    wait::Kind wait = wait::Kind::None;
    bool writable = false;  // FI_WRITE: the application may call fi_eq_write
};

class Eq : public fid_eq {
  public:
    using CStruct = fid_eq;

    // Opens an EQ on `fabric` (counted in fabric->open_children). 0, -FI_EINVAL (size above
    // kMaxSize), -FI_ENOMEM, or the wait object's error.
    static int open(Fabric *fabric, const Config &config, void *context, fi_ops *ops,
                    fi_ops_eq *eq_ops, Eq **out) noexcept;
    // fi_close, through close_object(): kBusy while objects are bound (attach()); else wakes
    // the threads blocked in sread (they return -FI_ECANCELED) and waits until they have left
    // (kFree; kKeep if one did not).
    Shut shut() noexcept;

    // --- Producers (any thread) -----------------------------------------------------------
    // Who posts: the application (fi_eq_write, bounded by the size) or ufi (unbounded).
    enum class Origin { Application, Provider };
    // An event of `len` bytes (struct fi_eq_entry, fi_eq_cm_entry + data, ...): 0, -FI_EAGAIN
    // when an application event finds the EQ full, -FI_ENOMEM.
    int post(uint32_t event, const void *buf, size_t len, Origin origin) noexcept;
    // An error event; err.err_data/err_data_size name bytes the EQ copies. 0, -FI_EAGAIN (an
    // application event, EQ full), -FI_ENOMEM.
    int post_error(const fi_eq_err_entry &err, Origin origin) noexcept;

    // --- The application's calls (api/eq.cpp) --------------------------------------------
    // fi_eq_read (FI_PEEK in flags leaves the event queued): the event's size in bytes.
    // -FI_EAGAIN when empty, -FI_EAVAIL when an error is at the head, -FI_ETOOSMALL when
    // `len` cannot hold the event (a connection event may be cut to `len` if its
    // fi_eq_cm_entry fits: the rest is connection data).
    ssize_t read(uint32_t *event, void *buf, size_t len, uint64_t flags) noexcept;
    // fi_eq_readerr (FI_PEEK honoured), with the err_data rules of the fabric's API version:
    // the bytes written (the caller's struct size). -FI_EAGAIN when no error is at the head.
    ssize_t readerr(fi_eq_err_entry *buf, uint64_t flags) noexcept;
    // fi_eq_sread: waits for an event up to `timeout` ms (< 0 infinite), then reads as
    // read(). -FI_EAGAIN on timeout or when a signal interrupts the wait; -FI_ECANCELED when
    // fi_close closes the EQ meanwhile (nothing is read).
    ssize_t sread(uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags) noexcept;
    int trywait() noexcept;
    int control(int command, void *arg) noexcept;

    // --- Connection objects bound to it (passive and connected endpoints) -----------------
    // Their connection managers' callbacks run on UCX's async thread and only nudge(); the
    // EQ calls each one's progress (which posts the events) when the application reads or
    // waits: fi_eq_read, fi_eq_readerr, fi_eq_sread (after every wake-up).
    // Listeners' progress runs after every connection's, so that what happened on a
    // connection (the peer's confirmation, its disconnect) is reported before a request that
    // came after it: a client that closes and connects again gets FI_CONNECTED and
    // FI_SHUTDOWN of the first connection before FI_CONNREQ of the second at the server.
    struct Progress {
        void (*fn)(void *arg) = nullptr;
        void *arg = nullptr;
        bool listener = false;
    };
    int add_progress(Progress p) noexcept;     // 0 or -FI_ENOMEM
    void remove_progress(Progress p) noexcept;  // no call of it runs once this returns
    // Wakes the threads in sread (any thread; no event needed).
    void nudge() noexcept;

    // Bindings (domains, AVs, endpoints).
    void attach() noexcept { attached_.fetch_add(1, std::memory_order_relaxed); }
    void detach() noexcept;
    int attached() const noexcept { return attached_.load(std::memory_order_relaxed); }

    bool writable() const noexcept { return writable_; }
    size_t capacity() const noexcept { return capacity_; }
    uint32_t api_version() const noexcept { return api_version_; }

  private:
    static constexpr uint32_t kMagic = 0x75666965;  // "ufie"

    struct Event {
        uint32_t event = 0;
        bool error = false;
        std::vector<uint8_t> bytes;  // the event as read() returns it
        fi_eq_err_entry err{};       // an error event (err_data in err_data_bytes)
        std::vector<uint8_t> err_data_bytes;
    };

    Eq(Fabric *fabric, const Config &config, size_t capacity);
    ~Eq() = default;  // (freed by close_object() only)
    friend int close_object<Eq>(Eq *) noexcept;

    int push(Event &&event, Origin origin) noexcept;
    ssize_t read_locked(uint32_t *event, void *buf, size_t len, uint64_t flags) noexcept;
    ssize_t sread_admitted(uint32_t *event, void *buf, size_t len, int timeout,
                           uint64_t flags) noexcept;
    void settle_fd_locked() noexcept;
    void run_progress() noexcept;
    // How long sread sleeps at once: `remaining_ms` (-1: no bound), or at most
    // kProgressSliceMs while connection objects are bound.
    int sleep_slice_ms(int remaining_ms) noexcept;
    static constexpr int kProgressSliceMs = 10;

    Fabric *fabric_;
    uint32_t api_version_;
    bool writable_;
    size_t capacity_;
    std::atomic<int> attached_{0};

    std::mutex mutex_;
    std::deque<Event> queue_;
    std::vector<uint8_t> err_hold_;  // err_data handed out by the last readerr

    std::shared_mutex progress_mutex_;  // shared while calling them, exclusive to change
    std::vector<Progress> progress_;

    wait::WaitObject wait_;
    wait::SleeperGate sleepers_;  // threads in sread, for close
};

}  // namespace ufi::runtime::eq
