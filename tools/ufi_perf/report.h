// ufi_perf's output: a table (default), CSV, or one JSON object per result per line with the
// keys test, size, iters, lat_us, bw_MBps, msg_rate (and transport details).
#pragma once

#include "options.h"
#include "runner.h"

#include <string>

namespace ufi::perf {

void print_header(const Options &o, const std::string &domain);
void print_result(const Options &o, const std::string &domain, const Result &r);

}  // namespace ufi::perf
