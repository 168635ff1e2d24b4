#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "log_fixture.h"

namespace ufi::log::test {
namespace {

std::string read_file(const std::filesystem::path &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Output tests look at the real outputs, so they run without the capture.
class LogOutputTest : public ::testing::Test {
  protected:
    LogOutputTest() : previous_(set_sink_for_testing(nullptr)) {}
    ~LogOutputTest() override {
        configure(config::Registry::from_environment({}));
        set_sink_for_testing(previous_);
    }

    std::shared_ptr<spdlog::sinks::sink> previous_;
};

TEST_F(LogOutputTest, FileWithPid) {
    const auto dir = std::filesystem::temp_directory_path();
    const std::string spec = (dir / "ufi_log_test_%p.log").string();
    const auto path = dir / ("ufi_log_test_" + std::to_string(::getpid()) + ".log");
    std::filesystem::remove(path);
    const std::string setting = "UFI_LOG_FILE=" + spec;
    configure(config::Registry::from_environment(std::vector<const char *>{setting.c_str()}));
    UFI_LOG_WARN(Subsys::Domain, "to the file {}", 1);
    UFI_LOG_WARN(Subsys::Domain, "to the file {}", 2);
    configure(config::Registry::from_environment({}));  // closes it

    const std::string text = read_file(path);
    std::filesystem::remove(path);
    EXPECT_NE(text.find("::ufi:domain:TestBody():"), std::string::npos) << text;
    EXPECT_NE(text.find("<warn> to the file 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("<warn> to the file 2\n"), std::string::npos) << text;
}

TEST_F(LogOutputTest, UnopenableFileFallsBackToStderr) {
    // Under a file, so that not even root can create it (spdlog creates missing folders).
    testing::internal::CaptureStderr();
    configure(config::Registry::from_environment(
        std::vector<const char *>{"UFI_LOG_FILE=/dev/null/x.log"}));
    UFI_LOG_WARN(Subsys::Core, "still here");
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("cannot open UFI_LOG_FILE '/dev/null/x.log'"), std::string::npos) << err;
    EXPECT_NE(err.find("<warn> still here\n"), std::string::npos) << err;
}

// spdlog creates a file's missing parent folders; ufi does not: a mistyped UFI_LOG_FILE must
// not create folders. One warning on stderr, then the lines go to stderr.
TEST_F(LogOutputTest, MissingFolderIsNotCreated) {
    const auto top = std::filesystem::temp_directory_path() /
                     ("ufi_log_missing_" + std::to_string(::getpid()));
    std::filesystem::remove_all(top);
    const std::string path = (top / "sub" / "x.log").string();
    const std::string setting = "UFI_LOG_FILE=" + path;
    testing::internal::CaptureStderr();
    configure(config::Registry::from_environment(std::vector<const char *>{setting.c_str()}));
    UFI_LOG_WARN(Subsys::Core, "first line");
    UFI_LOG_WARN(Subsys::Core, "second line");
    const std::string err = testing::internal::GetCapturedStderr();
    const bool created = std::filesystem::exists(top);
    std::filesystem::remove_all(top);
    EXPECT_FALSE(created) << "a folder was created for UFI_LOG_FILE";
    const std::string warning = "cannot open UFI_LOG_FILE '" + path + "'";
    const size_t at = err.find(warning);
    EXPECT_NE(at, std::string::npos) << err;
    EXPECT_EQ(err.find(warning, at + 1), std::string::npos) << "warned once: " << err;
    EXPECT_NE(err.find("is not an existing folder"), std::string::npos) << err;
    EXPECT_NE(err.find("<warn> first line\n"), std::string::npos) << err;
    EXPECT_NE(err.find("<warn> second line\n"), std::string::npos) << err;
}

// A bare file name is opened in the current folder, which exists.
TEST_F(LogOutputTest, BareFileNameIsInTheCurrentFolder) {
    const auto old_cwd = std::filesystem::current_path();
    const auto dir = std::filesystem::temp_directory_path() /
                     ("ufi_log_cwd_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::filesystem::current_path(dir);
    configure(config::Registry::from_environment(
        std::vector<const char *>{"UFI_LOG_FILE=bare.log"}));
    UFI_LOG_WARN(Subsys::Core, "in the current folder");
    configure(config::Registry::from_environment({}));
    std::filesystem::current_path(old_cwd);
    const std::string text = read_file(dir / "bare.log");
    std::filesystem::remove_all(dir);
    EXPECT_NE(text.find("<warn> in the current folder\n"), std::string::npos) << text;
}

TEST_F(LogOutputTest, StderrByDefault) {
    configure(config::Registry::from_environment({}));
    testing::internal::CaptureStderr();
    UFI_LOG_ERROR(Subsys::Eq, "on stderr");
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("::ufi:eq:TestBody():"), std::string::npos) << err;
    EXPECT_NE(err.find("<error> on stderr\n"), std::string::npos) << err;
}

TEST_F(LogOutputTest, Stdout) {
    configure(config::Registry::from_environment(std::vector<const char *>{"UFI_LOG_FILE=stdout"}));
    testing::internal::CaptureStdout();
    UFI_LOG_ERROR(Subsys::Eq, "on stdout");
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("<error> on stdout\n"), std::string::npos) << out;
}

TEST(LogCapture, NestsAndRestores) {
    configure(config::Registry::from_environment({}));
    ScopedCapture outer;
    UFI_LOG_WARN(Subsys::Core, "one");
    {
        ScopedCapture inner;
        UFI_LOG_WARN(Subsys::Core, "two");
        EXPECT_EQ(inner.lines().size(), 1u);
        inner.clear();
        EXPECT_TRUE(inner.lines().empty());
    }
    UFI_LOG_WARN(Subsys::Core, "three");
    const auto out = outer.lines();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_NE(out[0].find("> one"), std::string::npos);
    EXPECT_NE(out[1].find("> three"), std::string::npos);
}

}  // namespace
}  // namespace ufi::log::test
