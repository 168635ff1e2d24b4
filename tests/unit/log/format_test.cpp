#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <ctime>
#include <regex>
#include <stdexcept>
#include <thread>

#include "log_fixture.h"

namespace {

int format_calls = 0;

// Counts how often fmt formats it.
struct Counted {};

// Its formatter throws.
struct Throws {};

}  // namespace

template <>
struct fmt::formatter<Counted> : fmt::formatter<std::string_view> {
    template <typename Context>
    auto format(const Counted &, Context &ctx) const -> decltype(ctx.out()) {
        ++format_calls;
        return fmt::formatter<std::string_view>::format("counted", ctx);
    }
};

template <>
struct fmt::formatter<Throws> : fmt::formatter<std::string_view> {
    template <typename Context>
    auto format(const Throws &, Context &) const -> typename Context::iterator {
        throw std::runtime_error("boom");
    }
};

namespace ufi::log::test {
namespace {

using LogFormatTest = LogTest;

TEST_F(LogFormatTest, LineLooksLikeLibfabrics) {
    apply({});
    const long before = static_cast<long>(::time(nullptr));
    UFI_LOG_WARN(Subsys::Cq, "overrun: {} entries, {}", 3, "lost");
    const int line = __LINE__ - 1;
    const long after = static_cast<long>(::time(nullptr));

    const auto out = lines();
    ASSERT_EQ(out.size(), 1u);
    const std::regex shape(R"(^libfabric:(\d+):(\d+)::ufi:cq:TestBody\(\):(\d+)<warn> (.*)$)");
    std::smatch m;
    ASSERT_TRUE(std::regex_match(out[0], m, shape)) << out[0];
    EXPECT_EQ(std::stol(m[1]), ::getpid());
    EXPECT_GE(std::stol(m[2]), before);
    EXPECT_LE(std::stol(m[2]), after);
    EXPECT_EQ(std::stoi(m[3]), line);
    EXPECT_EQ(m[4], "overrun: 3 entries, lost");
}

TEST_F(LogFormatTest, EveryMacroAndItsLevelName) {
    apply({"UFI_LOG_LEVEL=trace"});
    UFI_LOG_ERROR(Subsys::Core, "e");
    UFI_LOG_WARN(Subsys::Fabric, "w");
    UFI_LOG_INFO(Subsys::Domain, "i");
    UFI_LOG_DEBUG(Subsys::EpCtrl, "d");
    UFI_LOG_TRACE(Subsys::Cntr, "t {}", 1);
    const auto out = lines();
    ASSERT_EQ(out.size(), 5u);
    const std::regex tail(R"(^libfabric:\d+:\d+::ufi:(\w+):TestBody\(\):\d+<(\w+)> (.*)$)");
    const char *expected[][3] = {{"core", "error", "e"},
                                 {"fabric", "warn", "w"},
                                 {"domain", "info", "i"},
                                 {"ep_ctrl", "debug", "d"},
                                 {"cntr", "trace", "t 1"}};
    for (size_t i = 0; i < out.size(); ++i) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(out[i], m, tail)) << out[i];
        EXPECT_EQ(m[1], expected[i][0]);
        EXPECT_EQ(m[2], expected[i][1]);
        EXPECT_EQ(m[3], expected[i][2]);
    }
}

TEST_F(LogFormatTest, WriteForAnotherProvider) {
    apply({});
    // As fi_log() passes it: another provider, a message ending in a newline.
    write(from_fi_log_level(2), Subsys::Av, "tcp", "tcp_av_insert", 77, "bad address\n");
    write(Level::Warn, Subsys::Mr, "ufi", nullptr, 0, "two\nlines\n\n");
    const auto out = lines();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(std::regex_match(
        out[0],
        std::regex(R"(^libfabric:\d+:\d+::tcp:av:tcp_av_insert\(\):77<info> bad address$)")))
        << out[0];
    // Only one trailing newline is dropped; the sink adds its own.
    EXPECT_TRUE(std::regex_match(out[1], std::regex(R"(^libfabric:\d+:\d+::ufi:mr:\(\):0<warn> two
lines
$)"))) << out[1];
}

TEST_F(LogFormatTest, DisabledLevelEvaluatesNothing) {
    apply({"UFI_LOG_LEVEL=warn"});
    int evaluated = 0;
    auto side_effect = [&] { return ++evaluated; };
    format_calls = 0;
    UFI_LOG_DEBUG(Subsys::Core, "{} {}", side_effect(), Counted{});
    UFI_LOG_TRACE(Subsys::EpData, "{}", Counted{});
    UFI_LOG_INFO(Subsys::Cq, "{}", Throws{});
    EXPECT_EQ(evaluated, 0);
    EXPECT_EQ(format_calls, 0);
    EXPECT_TRUE(lines().empty());

    UFI_LOG_WARN(Subsys::Core, "{} {}", side_effect(), Counted{});
    EXPECT_EQ(evaluated, 1);
    EXPECT_EQ(format_calls, 1);
    ASSERT_EQ(lines().size(), 1u);
    EXPECT_NE(lines()[0].find("<warn> 1 counted"), std::string::npos);
}

TEST_F(LogFormatTest, FilteredSubsystemEvaluatesNothing) {
    apply({"UFI_LOG_LEVEL=trace", "FI_LOG_SUBSYS=^cq"});
    format_calls = 0;
    UFI_LOG_ERROR(Subsys::Cq, "{}", Counted{});
    EXPECT_EQ(format_calls, 0);
    EXPECT_TRUE(lines().empty());
}

TEST_F(LogFormatTest, ThrowingFormatterDoesNotEscape) {
    apply({});
    UFI_LOG_WARN(Subsys::Core, "value {}", Throws{});
    const auto out = lines();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_NE(out[0].find("<warn> log message lost, formatting failed: boom"), std::string::npos)
        << out[0];
}

TEST_F(LogFormatTest, ConcurrentWritersKeepLinesWhole) {
    apply({"UFI_LOG_LEVEL=info"});
    constexpr int threads = 4, per_thread = 250;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([t] {
            for (int i = 0; i < per_thread; ++i) UFI_LOG_INFO(Subsys::EpData, "t{} i{}", t, i);
        });
    }
    for (auto &worker : workers) worker.join();
    const auto out = lines();
    ASSERT_EQ(out.size(), static_cast<size_t>(threads * per_thread));
    const std::regex shape(R"(^libfabric:\d+:\d+::ufi:ep_data:.*<info> t\d i\d+$)");
    for (const auto &line : out) ASSERT_TRUE(std::regex_match(line, shape)) << line;
}

}  // namespace
}  // namespace ufi::log::test
