// ufi_perf --procs N: N processes of one host, started by ufi_perf itself (fork), each with its
// own endpoint, measure together: 8-byte one-way latency of every pair in turn, the 8-byte
// message rate with one peer each (pairs at once) and with every peer (all at once), and the
// bandwidth of pairs at once. Names and results travel over a socket pair between the launcher
// and each process, never over the fabric.
// Started by mpirun (or another PMIx launcher: `mpirun -np N ufi_perf`), the same group runs
// with the launcher's processes, hosts and all, names and results going through PMIx
// (group_pmix.cpp); rank 0 prints.
#pragma once

#include "options.h"

namespace ufi::perf {

// Runs the group and prints its results; the process's exit status.
int run_group(const Options &o);
// Where a PMIx launcher started this process (PMIx_Init reaches its server), runs the group of
// the processes it started and returns true, with the exit status in `status`; false where
// none did (PMIx_Init finds no server: about 20 ms), and the caller goes on as a pair.
bool run_pmix_group_if_launched(const Options &o, int &status);

}  // namespace ufi::perf
