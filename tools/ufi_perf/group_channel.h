// What ties the processes of a group run (group.h) together, off the fabric: ufi_perf's own
// launcher (a socket between it and each process it forked) or the launcher that started the
// processes, through PMIx (mpirun: group_pmix.cpp). Every process calls the same operations
// in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "options.h"

namespace ufi::perf {

class GroupChannel {
  public:
    virtual ~GroupChannel() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Gives this process's endpoint name and takes every process's, in rank order.
    virtual bool exchange_names(const std::vector<uint8_t> &mine,
                                std::vector<std::vector<uint8_t>> &all, std::string &error) = 0;
    // Returns once every process has reached it, calling `progress` meanwhile (an endpoint
    // under manual progress may hold a message a peer waits for); false when `progress`
    // fails, a process left, or nobody came within the bound.
    virtual bool barrier(const std::function<bool()> &progress, std::string &error) = 0;
    // Hands one figure of this process to whoever prints (every process reports at the same
    // points: also a barrier). `all` gets every process's, in rank order, where this process
    // prints (PMIx: rank 0); elsewhere it is left empty.
    virtual bool report(double value, const std::function<bool()> &progress,
                        std::vector<double> &all, std::string &error) = 0;
};

// Runs one member of the group over `ch` (the measurements of group.h); where the channel
// hands this process every figure (PMIx: rank 0), it prints the results, naming `launcher`.
// The process's exit status.
int run_member(GroupChannel &ch, const Options &o, const char *launcher);

}  // namespace ufi::perf
