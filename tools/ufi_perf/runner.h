// The measurements: ping-pong latency (one-way = half the round trip) and windowed streaming
// bandwidth, client and server sides, for one message size; RMA's in rma_runner.cpp.
#pragma once

#include "endpoint.h"
#include "iter_timer.h"
#include "options.h"
#include "oob.h"

#include <cstddef>
#include <string>

namespace ufi::perf {

struct Result {
    size_t size = 0;
    uint64_t iters = 0;
    double seconds = 0;
    double lat_us = 0;    // latency tests: one-way, microseconds (the average)
    double typical_lat_us = 0;  // latency tests: the median iteration's, one-way
    double bw_MBps = 0;   // MiB per second (as ucx_perftest reports MB/s)
    double msg_rate = 0;  // messages per second
};

// The peer's RMA window (RMA tests).
struct RemoteWindow {
    uint64_t key = 0;
    uint64_t addr = 0;  // what names its first byte
};

// Runs one size; the client returns the result (the server's is empty).
bool run_size(Endpoint &ep, Oob &oob, const Options &o, size_t size, bool client,
              const RemoteWindow &remote, Result &out, std::string &error);

// The RMA tests' measured loops (rma_runner.cpp): `seconds` for `count` iterations.
bool run_rma(Endpoint &ep, Oob &oob, const Options &o, size_t size, uint64_t count, bool client,
             const RemoteWindow &remote, std::string &error, double &seconds, IterTimer &timer);

}  // namespace ufi::perf
