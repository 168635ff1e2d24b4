#include "transports/lanes/mm_fifo_head.h"

#include "base/log/log.h"

#include <uct/api/uct.h>
#include <atomic>

#include <sys/socket.h>
#include <sys/un.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ufi::transports {

namespace {

constexpr size_t kCacheLine = 64;
constexpr size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// uct_mm_fifo_ctl_t (UCX 1.13-1.18): the head with the signal socket's address, padded to
// whole cache lines, then the tail and the owner's pid on a line of their own; the FIFO's
// elements follow, one such block after it (UCT_MM_FIFO_CTL_SIZE).
constexpr size_t kFifoCtlSize =
    align_up(sizeof(uint64_t) + sizeof(socklen_t) + sizeof(sockaddr_un), kCacheLine) + kCacheLine;

// The first words of uct_mm_ep_t (UCX built without statistics, as Debian's is).
struct MmEpPrefix {
    uct_iface_h iface;    // uct_base_ep_t: uct_ep_t
    void *fifo_ctl;       // the peer's uct_mm_fifo_ctl_t, its head first
    void *fifo_elems;     // the peer's first FIFO element
};

}  // namespace

MmFifo mm_fifo(uct_ep_h ep, uct_iface_h iface) noexcept {
    if (ep == nullptr) return {};
    const auto *words = reinterpret_cast<const MmEpPrefix *>(ep);
    const auto ctl = reinterpret_cast<uintptr_t>(words->fifo_ctl);
    const auto elems = reinterpret_cast<uintptr_t>(words->fifo_elems);
    if (words->iface != iface || ctl == 0 || ctl % kCacheLine != 0 || elems != ctl + kFifoCtlSize) {
        UFI_LOG_DEBUG(ufi::log::Subsys::EpCtrl,
                      "this UCX's shared-memory endpoint layout is not the one known: its FIFO "
                      "head is kept warm by loading it, not by prefetching it for writing");
        return {};
    }
    return {static_cast<const volatile uint64_t *>(words->fifo_ctl),
            static_cast<const volatile uint8_t *>(words->fifo_elems)};
}

bool cpu_prefetches_for_write() noexcept {
#if defined(__x86_64__)
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid(0x80000001u, &a, &b, &c, &d) != 0 && (c & (1u << 8)) != 0;
    }();
    return has;
#else
    return true;  // __builtin_prefetch(p, 1) is the architecture's write prefetch
#endif
}

bool cpu_demotes_lines() noexcept {
#if defined(__x86_64__)
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (c & (1u << 25)) != 0;
    }();
    return has;
#else
    return false;
#endif
}

namespace {
std::atomic<bool> g_force_demotion{false};
}  // namespace

bool lanes_demote_lines() noexcept {
    return cpu_demotes_lines() || g_force_demotion.load(std::memory_order_relaxed);
}

void force_line_demotion_for_testing(bool on) noexcept {
    g_force_demotion.store(on, std::memory_order_relaxed);
}

bool claim_fifo_element_for_testing(uct_ep_h ep, uct_iface_h iface) noexcept {
    const MmFifo f = mm_fifo(ep, iface);
    if (f.head == nullptr) return false;
    auto *head = const_cast<volatile uint64_t *>(f.head);
    uint64_t seen = *head;
    return __atomic_compare_exchange_n(head, &seen, seen + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

}  // namespace ufi::transports
