// The FIFO head of a UCT shared-memory FIFO endpoint (posix, sysv), located so that
// AmLane::prime() can ask for its cache line in exclusive state before the next send.
//
// Why: every send on such a lane starts with an atomic compare-and-swap on the head of the
// peer's receive FIFO, and UCX built with assertions (Debian's) reads that head on the
// receiving side for every message. The read leaves the line shared; the sender's next atomic
// then has to take it back from the receiver's core and stalls for a cross-core round trip
// (about 60 ns here, 12% of a ping-pong's time). A PREFETCHW when the peer's answer arrives
// takes it back off the critical path. Loading it (a uct_ep_flush, AmLane::warm()'s fallback)
// only makes it shared, which does not spare the atomic its ownership request.
//
// UCT does not expose the head. mm_fifo_head() reads it from the endpoint's first words,
// which UCX 1.13 to 1.18 lay out alike (uct_mm_ep_t: the base endpoint, the peer's FIFO
// control block, its first element), and accepts them only where they fingerprint: the base
// endpoint names the iface, the control block is cache-line aligned and the elements start
// exactly one control block after it. Whatever it returns is only ever prefetched, never
// written or read, so a layout it did not know could at worst waste a hint.
#pragma once

#include <uct/api/uct.h>

#include <cstdint>

namespace ufi::transports {

// The address of the peer FIFO head `ep` (an endpoint of a UCT mm transport on `iface`)
// writes on every send, or nullptr where its layout does not fingerprint (logged at debug).
const volatile uint64_t *mm_fifo_head(uct_ep_h ep, uct_iface_h iface) noexcept;

// Whether this CPU prefetches for writing (x86: PREFETCHW, CPUID 0x80000001 ECX bit 8).
bool cpu_prefetches_for_write() noexcept;

// Asks for the cache line holding `p` in exclusive state. A hint: it never faults, blocks or
// changes memory.
inline void prefetch_for_write(const volatile void *p) noexcept {
#if defined(__x86_64__)
    __asm__ volatile("prefetchw %0" ::"m"(*static_cast<const volatile char *>(p)));
#else
    __builtin_prefetch(const_cast<const void *>(p), 1, 3);
#endif
}

}  // namespace ufi::transports
