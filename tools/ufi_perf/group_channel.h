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

// What one process of a group measures with: ufi's endpoint (group.cpp) or UCP
// (group_ucp.cpp). run_schedule() calls these in the same order in every process.
class GroupMeasures {
  public:
    virtual ~GroupMeasures() = default;
    // Opens what it measures with; its name goes to the others through ch.exchange_names.
    virtual bool open(GroupChannel &ch, std::string &error) = 0;
    // Progresses it while the channel waits; false (with `error`) on a failure.
    virtual bool progress(std::string &error) = 0;
    // 8-byte one-way latency with `peer` (`first`: this side sends first); `pair` numbers the
    // pair (1, 2, ...: its messages are told apart by it).
    virtual bool pingpong(int peer, bool first, uint64_t pair, double &lat_us, std::string &error) = 0;
    // `count` messages of `size` bytes one way, then an acknowledgement back; the sender's
    // rate (8 bytes: messages per second; larger: MB/s), 0 at the receiver.
    virtual bool stream(int peer, bool sender, size_t size, uint64_t count, double &rate,
                        std::string &error) = 0;
    // `per_peer` 8-byte messages to every other process while receiving as many from each;
    // the rate of what this process received.
    virtual bool all_to_all(uint64_t per_peer, double &rate, std::string &error) = 0;
};

// The group's measurements, in order, between barriers of `ch`: every pair's latency in
// turn, then message rate with one peer (pairs (0,1), (2,3), ... at once), with every peer,
// and the bandwidth of pairs at the largest -s size (1 MiB when -s is 8); one report per
// figure. `who` names the measured side in error lines. 0, or 1 with the reason on stderr.
int run_schedule(GroupChannel &ch, const Options &o, GroupMeasures &m, const char *who,
                 std::vector<std::vector<double>> &reports);

// Runs one member of the group over `ch` (the measurements of group.h); where the channel
// hands this process every figure (PMIx: rank 0), it prints the results, naming `launcher`.
// The process's exit status.
int run_member(GroupChannel &ch, const Options &o, const char *launcher);

}  // namespace ufi::perf
