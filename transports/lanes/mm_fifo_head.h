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
// The receiver's read of the head is the other half of that cost: it follows the discovery
// of the message, so it is a second cross-core round trip on the receiver's critical path,
// after the one that fetched the message. A sender that has answered a message and stopped
// sending (AmLane::demote) therefore moves the head's line out to the shared cache with
// CLDEMOTE, where the receiver's read finds it sooner: Open MPI's 8-byte ping-pong fell from
// 1.11x Open MPI's own shared memory to 0.97x (docs/performance-history.md).
//
// UCT does not expose the head. mm_fifo() reads it from the endpoint's first words,
// which UCX 1.13 to 1.18 lay out alike (uct_mm_ep_t: the base endpoint, the peer's FIFO
// control block, its first element), and accepts them only where they fingerprint: the base
// endpoint names the iface, the control block is cache-line aligned and the elements start
// exactly one control block after it. What it returns is never written: the head is
// prefetched, demoted, and read once per answer (to find the element the answer went into),
// the elements are only demoted. Both are hints that cannot fault; the read is the one
// access that relies on the fingerprint, and the lanes test checks it against this UCX.
#pragma once

#include "transports/ucx_fwd.h"

#include <cstddef>
#include <cstdint>

namespace ufi::transports {

// The peer FIFO `ep` (an endpoint of a UCT mm transport on `iface`) writes into: its head,
// which every send advances, and its first element.
struct MmFifo {
    const volatile uint64_t *head = nullptr;  // nullptr: the layout did not fingerprint
    const volatile uint8_t *elems = nullptr;
};
// Both, or nothing where `ep`'s layout does not fingerprint (logged at debug).
MmFifo mm_fifo(uct_ep_h ep, uct_iface_h iface) noexcept;

// For tests: claims the next element of the FIFO `ep` writes into and never writes it, as a
// writer killed in the middle of a send leaves it (transports/iface/mm_fifo_hole.h). False
// where the layout did not fingerprint or another writer claimed first.
bool claim_fifo_element_for_testing(uct_ep_h ep, uct_iface_h iface) noexcept;

// UCT keeps an "event armed" flag in the head's top bit; the rest counts the messages sent
// into the FIFO (the next one goes into element count % elements).
inline constexpr uint64_t kMmHeadCountMask = ~(uint64_t{1} << 63);
// UCT's FIFO element header: a message sent short starts this far into its element.
inline constexpr size_t kMmElemHeader = 28;

// Whether this CPU prefetches for writing (x86: PREFETCHW, CPUID 0x80000001 ECX bit 8).
bool cpu_prefetches_for_write() noexcept;

// Whether this CPU demotes cache lines (x86: CLDEMOTE, CPUID leaf 7 ECX bit 25). Checked
// before demote_line() is ever used: CPUs without it run the instruction as a no-op, but a
// CPU emulator (valgrind) may not know it.
bool cpu_demotes_lines() noexcept;

// Whether lanes connected now demote lines: the CPU has CLDEMOTE, or a test asked for the
// logic to run anyway (below).
bool lanes_demote_lines() noexcept;

// For tests: lanes connected from now on demote as if the CPU had CLDEMOTE. The instruction
// is a hint from x86's reserved-NOP space that CPUs without it run as a no-op (elsewhere
// demote_line() is empty), so what decides which lines to demote, and when, runs and is
// checked on every CPU, not only on the few that have the instruction.
void force_line_demotion_for_testing(bool on) noexcept;

// Moves the cache line holding `p` out of this core's caches to the shared one (L3): the
// next core to read it finds it there instead of snooping it from this core. A hint: it
// never faults, blocks or changes memory. (Nothing where the architecture has no such hint.)
inline void demote_line(const volatile void *p) noexcept {
#if defined(__x86_64__)
    __asm__ volatile("cldemote %0" ::"m"(*static_cast<const volatile char *>(p)));
#else
    (void)p;
#endif
}

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
