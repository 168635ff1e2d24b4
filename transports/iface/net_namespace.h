// The network namespace's mark on shared-memory FIFO addresses.
//
// Why: UCT's FIFO transports (posix, sysv) wake a sleeping receiver through an abstract unix
// socket, and abstract sockets belong to one network namespace. Two processes of one host in
// different network namespaces (containers that share /dev/shm or IPC but not the network;
// `ip netns`) reach each other's FIFOs, but a sender cannot wake the receiver: a thread asleep
// in fi_cntr_wait, fi_cq_sread or FI_PROGRESS_AUTO's progress thread never sees that peer's
// traffic (issue 30, item 5). So such peers must not talk over a FIFO. A name has no byte to
// spare for it (docs/addresses.md: names fit FI_NAME_MAX), so the namespace goes into the
// FIFO transport's device address instead: ufi XORs a 64-bit mark of its namespace into its
// first 8 bytes (UCT's host id there) and takes its own mark off a peer's before UCT reads it.
// A peer of the same namespace reads as UCT wrote it; one of another namespace reads as
// another host, unreachable over shared memory, and the peers use the network (tcp) instead.
// (UCX itself folds the IPC namespace into the same address; the network one it leaves out.)
#pragma once

#include <cstdint>
#include <span>

namespace ufi::transports {

// A mark of the calling thread's network namespace (a hash of /proc/thread-self/ns/net's
// device and inode), never 0; 0 when the namespace cannot be read (no /proc): then addresses
// go unmarked, and only peers that cannot read theirs either take this one's FIFOs.
uint64_t network_namespace_mark() noexcept;

// XORs `mark` (little-endian) into the first 8 bytes of `addr` (fewer when it is shorter).
// Applying the same mark twice gives the bytes back.
void apply_namespace_mark(std::span<uint8_t> addr, uint64_t mark) noexcept;

}  // namespace ufi::transports
