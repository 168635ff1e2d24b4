// The process-wide log and registry: each test runs in a fresh process (a "threadsafe" death
// test re-executes this binary), so that it sees the first initialisation.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/config/config.h"
#include "base/log/log.h"

namespace ufi::log::test {
namespace {

int formatted = 0;
struct Counted {};

}  // namespace
}  // namespace ufi::log::test

template <>
struct fmt::formatter<ufi::log::test::Counted> : fmt::formatter<std::string_view> {
    template <typename Context>
    auto format(const ufi::log::test::Counted &, Context &ctx) const -> decltype(ctx.out()) {
        ++ufi::log::test::formatted;
        return fmt::formatter<std::string_view>::format("counted", ctx);
    }
};

namespace ufi::log::test {
namespace {

TEST(LogInitDeathTest, FirstMessageInitialises) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const bool before = ready();
            UFI_LOG_TRACE(Subsys::Core, "{}", Counted{});
            const bool after = ready();
            // Formatted only if the level from the environment lets trace through.
            const bool consistent = (formatted == 1) == (level() == Level::Trace);
            std::exit(!before && after && consistent ? 0 : 1);
        },
        testing::ExitedWithCode(0), "");
}

TEST(LogInitDeathTest, FirstEnabledCheckInitialises) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const bool before = ready();
            const bool trace = enabled(Level::Trace, Subsys::Core);  // exact, even now
            const bool after = ready();
            std::exit(!before && after && trace == (level() == Level::Trace) ? 0 : 1);
        },
        testing::ExitedWithCode(0), "");
}

TEST(LogInitDeathTest, RegistryInitialisesTheLog) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const bool before = ready();
            const bool known = config::registry().is_defined("UFI_TLS");
            std::exit(!before && ready() && known ? 0 : 1);
        },
        testing::ExitedWithCode(0), "");
}

TEST(LogInitDeathTest, RegistryDiagnosticsAreLoggedOnce) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    config::registry();  // here, the snapshot is taken before the setenv calls below
    // The child, a fresh process running this body again, inherits these; it must keep the
    // parent's file name.
    const auto parent_path = std::filesystem::temp_directory_path() /
                             ("ufi_init_test_" + std::to_string(::getpid()) + ".log");
    ::setenv("UFI_LOG_FILE", parent_path.c_str(), /*overwrite=*/0);
    const std::filesystem::path path = ::getenv("UFI_LOG_FILE");
    ::setenv("UFI_TSL", "tcp", 1);
    ::setenv("UFI_LOG_LEVEL", "warn", 1);
    EXPECT_EXIT(
        {
            config::registry();
            config::registry();
            UFI_LOG_WARN(Subsys::Core, "done");
            std::exit(0);
        },
        testing::ExitedWithCode(0), "");
    ::unsetenv("UFI_TSL");
    ::unsetenv("UFI_LOG_FILE");

    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string log = text.str();
    std::filesystem::remove(path);
    const std::string diagnostic =
        "<warn> unknown environment variable UFI_TSL=tcp; did you mean UFI_TLS?\n";
    const size_t first = log.find(diagnostic);
    ASSERT_NE(first, std::string::npos) << log;
    EXPECT_EQ(log.find(diagnostic, first + 1), std::string::npos) << log;
    EXPECT_LT(first, log.find("<warn> done\n")) << log;
}

}  // namespace
}  // namespace ufi::log::test
