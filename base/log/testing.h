// Test hooks for the log: capture the lines ufi writes instead of printing them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/sink.h>

namespace ufi::log {

// Sends every line to `sink` (which receives whole lines, pattern "%v") instead of the
// configured output, until called again; nullptr restores the configured output. Returns the
// sink it replaces (nullptr if none).
std::shared_ptr<spdlog::sinks::sink> set_sink_for_testing(
    std::shared_ptr<spdlog::sinks::sink> sink) noexcept;

// Captures the lines written while it lives; restores the previous test sink on destruction.
class ScopedCapture {
  public:
    ScopedCapture();
    ~ScopedCapture();
    ScopedCapture(const ScopedCapture &) = delete;
    ScopedCapture &operator=(const ScopedCapture &) = delete;

    std::vector<std::string> lines() const;  // without the end of line
    void clear();

    class Sink;

  private:
    std::shared_ptr<Sink> sink_;
    std::shared_ptr<spdlog::sinks::sink> previous_;
};

}  // namespace ufi::log
