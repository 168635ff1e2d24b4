// Synthetic resource lists for selection tests: this machine's shape (self, posix,
// sysv, cma, tcp on lo and eth0) and an InfiniBand node (4 mlx5 ports with rc/dc/ud,
// tcp on ib0..ib3, eth0 and lo), with UCT-like flags and estimates.
#pragma once

#include "transports/resource.h"

#include <string>
#include <vector>

namespace ufi::transports::testing {

Resource self_resource();
Resource shm_resource(const std::string &tl);  // posix, sysv, cma, knem, xpmem
Resource tcp_resource(const std::string &dev, bool loopback, double bandwidth_shared = 12.5e6);
Resource ib_resource(const std::string &tl,
                     const std::string &dev);  // rc_mlx5, dc_mlx5, ud_mlx5, rc_verbs, ud_verbs
Resource cuda_copy_resource();

// self, tcp/lo, tcp/eth0, sysv, posix, cma (UCT's discovery order here).
std::vector<Resource> this_machine_resources();

// self, posix, sysv, cma, {rc,dc,ud}_mlx5 on mlx5_0:1..mlx5_3:1, tcp on ib0..ib3
// (12.5 GB/s), eth0 (3.1 GB/s) and lo.
std::vector<Resource> ib_node_resources();

// "tl/dev" of each index.
std::vector<std::string> labels(const std::vector<Resource> &res,
                                const std::vector<std::size_t> &idx);

}  // namespace ufi::transports::testing
