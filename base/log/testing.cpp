#include "base/log/testing.h"

#include <mutex>

#include <spdlog/sinks/base_sink.h>

#include "base/log/state.h"

namespace ufi::log {

namespace {
// The sink set_sink_for_testing() installed, to return it when replaced.
std::shared_ptr<spdlog::sinks::sink> test_sink;
}  // namespace

std::shared_ptr<spdlog::sinks::sink> set_sink_for_testing(
    std::shared_ptr<spdlog::sinks::sink> sink) noexcept {
    init();
    detail::State &st = detail::state();
    std::shared_ptr<spdlog::logger> logger;
    try {
        if (sink) logger = detail::make_logger(sink);
    } catch (...) {
        return nullptr;
    }
    std::lock_guard lock(st.mutex);
    st.test_logger = std::move(logger);
    std::swap(test_sink, sink);
    return sink;
}

class ScopedCapture::Sink final : public spdlog::sinks::base_sink<std::mutex> {
  public:
    std::vector<std::string> lines() {
        std::lock_guard lock(mutex_);
        return lines_;
    }
    void clear() {
        std::lock_guard lock(mutex_);
        lines_.clear();
    }

  protected:
    void sink_it_(const spdlog::details::log_msg &msg) override {
        lines_.emplace_back(msg.payload.data(), msg.payload.size());
    }
    void flush_() override {}

  private:
    std::vector<std::string> lines_;
};

ScopedCapture::ScopedCapture()
    : sink_(std::make_shared<Sink>()), previous_(set_sink_for_testing(sink_)) {}

ScopedCapture::~ScopedCapture() {
    set_sink_for_testing(previous_);
}

std::vector<std::string> ScopedCapture::lines() const {
    return sink_->lines();
}

void ScopedCapture::clear() {
    sink_->clear();
}

}  // namespace ufi::log
