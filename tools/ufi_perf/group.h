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
// True when a PMIx launcher started this process (it sets PMIX_RANK for each process).
bool launched_by_pmix();
// The group of the processes the PMIx launcher started; the process's exit status.
int run_pmix_group(const Options &o);

}  // namespace ufi::perf
