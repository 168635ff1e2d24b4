// ufi_perf --procs N: N processes of one host, started by ufi_perf itself (fork), each with its
// own endpoint, measure together: 8-byte one-way latency of every pair in turn, the 8-byte
// message rate with one peer each (pairs at once) and with every peer (all at once), and the
// bandwidth of pairs at once. Names and results travel over a socket pair between the launcher
// and each process, never over the fabric.
#pragma once

#include "options.h"

namespace ufi::perf {

// Runs the group and prints its results; the process's exit status.
int run_group(const Options &o);

}  // namespace ufi::perf
