// A log configured from a synthetic environment, its output captured.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "base/config/config.h"
#include "base/log/log.h"
#include "base/log/testing.h"

namespace ufi::log::test {

class LogTest : public ::testing::Test {
  protected:
    ~LogTest() override { configure(config::Registry::from_environment({})); }

    // Configures the log as if the environment were `env`.
    void apply(std::vector<const char *> env) {
        configure(config::Registry::from_environment(env));
    }

    std::vector<std::string> lines() const { return capture_.lines(); }

    ScopedCapture capture_;
};

}  // namespace ufi::log::test
