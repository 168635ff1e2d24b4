// The shape of UCT's shared-memory FIFOs (its mm transports: posix, sysv), which ufi sets and
// both ends of a FIFO must agree on.
//
// Why set it: a message travels inline in a FIFO element up to the element's size less its
// 28-byte header; a longer one goes through a separate receive descriptor, two more cache
// lines each way. UCX's 128-byte elements leave 100 bytes inline; ufi's 576 leave 548, and
// 128-512-byte messages then take 0.29-0.39 us one way instead of 0.43-0.47 and stream 30-40 %
// faster (docs/performance-history.md, "Shared-memory FIFO elements of 576 bytes"); 8-byte and 1 KiB
// figures are unchanged.
//
// Why agree: the sender writes into the receiver's FIFO laid out by its own configuration
// (element size and count, the receive descriptors' size); processes configured differently
// (UCX_POSIX_FIFO_ELEM_SIZE in one of them, or another ufi version) would write past each
// other's elements. So a 1-byte fingerprint of the geometry rides in the iface's address
// records (appended to UCT's iface address, which UCT reads at its own length), and a record
// whose fingerprint differs from the local iface's is not reachable over that transport: the
// peers use another one. (Records without it, from ufi before this, differ in length and are
// refused the same way. One byte, because names must fit FI_NAME_MAX: docs/addresses.md.)
#pragma once

#include "transports/ucx_fwd.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ufi::transports {

// The FIFO's shape as the configuration leaves it: what a sender needs to find the element
// a message went into (AmLane::demote).
struct FifoShape {
    uint32_t elem_size = 0;   // bytes per element (0: no FIFO)
    uint32_t elem_count = 0;  // elements (a power of two)
};

// For an iface configuration with a FIFO (UCT's FIFO_ELEM_SIZE is among its settings): sets
// the element size UFI_SHM_FIFO_ELEM_SIZE asks for (0: UCX's own), then returns the
// fingerprint of the geometry (element size, element count, receive descriptor size) as the
// byte to append to the iface's address, and the shape in *shape when given. Empty (and a
// zero shape) for a transport without a FIFO. A size outside 128-65535 bytes, or one UCT
// refuses, is logged once and left at UCX's.
std::vector<uint8_t> tune_shm_fifo(uct_iface_config_t *config, const std::string &tl,
                                   FifoShape *shape = nullptr);

// For an iface configuration with a FIFO: the receive descriptors its pool allocates at a
// time (UFI_SHM_RX_BUFS_GROW; 0 leaves UCX's). UCX's 512 descriptors of 8 KiB are written
// into a fresh shared-memory segment when the iface opens: 4 MiB, 1-1.5 ms of every
// endpoint's fi_enable per transport, for a FIFO of 64 elements. Local only: peers need not
// agree (the fingerprint leaves it out).
void tune_shm_rx_pool(uct_iface_config_t *config, const std::string &tl);

}  // namespace ufi::transports
