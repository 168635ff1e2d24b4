// Internal to base/log: the log's shared state (settings and output), created once and
// never destroyed, so that code running during exit can still log.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <spdlog/sinks/sink.h>

#include "base/config/filter.h"
#include "base/log/log.h"

namespace ufi::log::detail {

struct State {
    std::mutex mutex;                             // guards every field
    std::shared_ptr<spdlog::logger> logger;       // the configured output
    std::shared_ptr<spdlog::logger> test_logger;  // set_sink_for_testing(), wins if set
    Level level = Level::Warn;
    uint32_t subsys_allowed = (1u << subsys_count) - 1;  // FI_LOG_SUBSYS, bit per subsystem
    config::NameFilter prov_filter;                      // FI_LOG_PROV
};

State &state() noexcept;

// The output to use now (the test one if set); may be null if configuration failed.
std::shared_ptr<spdlog::logger> current_logger() noexcept;

// A logger writing whole lines (pattern "%v") to `sink`, flushing each.
std::shared_ptr<spdlog::logger> make_logger(std::shared_ptr<spdlog::sinks::sink> sink);

// The sink for UFI_LOG_FILE: "" or "stderr", "stdout", or a path with %p -> pid (appended
// to). A file that cannot be opened adds a warning and gives stderr.
std::shared_ptr<spdlog::sinks::sink> make_sink(const std::string &spec,
                                               std::vector<std::string> &warnings);

}  // namespace ufi::log::detail
