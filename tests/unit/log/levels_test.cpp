#include <gtest/gtest.h>

#include "log_fixture.h"

namespace ufi::log::test {
namespace {

TEST(LogNames, LevelsAndSubsystems) {
    EXPECT_EQ(level_name(Level::Off), "off");
    EXPECT_EQ(level_name(Level::Error), "error");
    EXPECT_EQ(level_name(Level::Warn), "warn");
    EXPECT_EQ(level_name(Level::Info), "info");
    EXPECT_EQ(level_name(Level::Debug), "debug");
    EXPECT_EQ(level_name(Level::Trace), "trace");
    EXPECT_EQ(level_name(static_cast<Level>(17)), "unknown");
    const char *names[] = {"core", "fabric", "domain", "ep_ctrl", "ep_data",
                           "av",   "cq",     "eq",     "mr",      "cntr"};
    for (int s = 0; s < subsys_count; ++s) EXPECT_EQ(subsys_name(static_cast<Subsys>(s)), names[s]);
    EXPECT_EQ(subsys_name(static_cast<Subsys>(subsys_count)), "unknown");
    EXPECT_EQ(subsys_name(static_cast<Subsys>(-1)), "unknown");
}

TEST(LogNames, SubsystemNumbersMatchLibfabric) {
    // enum fi_log_subsys: FI_LOG_CORE = 0 ... FI_LOG_CNTR = 9.
    EXPECT_EQ(static_cast<int>(Subsys::Core), 0);
    EXPECT_EQ(static_cast<int>(Subsys::Fabric), 1);
    EXPECT_EQ(static_cast<int>(Subsys::Domain), 2);
    EXPECT_EQ(static_cast<int>(Subsys::EpCtrl), 3);
    EXPECT_EQ(static_cast<int>(Subsys::EpData), 4);
    EXPECT_EQ(static_cast<int>(Subsys::Av), 5);
    EXPECT_EQ(static_cast<int>(Subsys::Cq), 6);
    EXPECT_EQ(static_cast<int>(Subsys::Eq), 7);
    EXPECT_EQ(static_cast<int>(Subsys::Mr), 8);
    EXPECT_EQ(static_cast<int>(Subsys::Cntr), 9);
}

TEST(LogNames, ParseLevelAndLibfabricLevels) {
    EXPECT_EQ(parse_level("TRACE"), Level::Trace);
    EXPECT_EQ(parse_level(" off "), Level::Off);
    EXPECT_FALSE(parse_level("loud").has_value());
    EXPECT_FALSE(parse_level("").has_value());
    // enum fi_log_level: FI_LOG_WARN 0, FI_LOG_TRACE 1, FI_LOG_INFO 2, FI_LOG_DEBUG 3.
    EXPECT_EQ(from_fi_log_level(0), Level::Warn);
    EXPECT_EQ(from_fi_log_level(1), Level::Trace);
    EXPECT_EQ(from_fi_log_level(2), Level::Info);
    EXPECT_EQ(from_fi_log_level(3), Level::Debug);
    EXPECT_EQ(from_fi_log_level(42), Level::Warn);
}

using LogLevelTest = LogTest;

TEST_F(LogLevelTest, DefaultIsWarn) {
    apply({});
    EXPECT_EQ(level(), Level::Warn);
}

TEST_F(LogLevelTest, UfiLogLevel) {
    apply({"UFI_LOG_LEVEL=debug"});
    EXPECT_EQ(level(), Level::Debug);
    apply({"UFI_LOG_LEVEL=OFF"});
    EXPECT_EQ(level(), Level::Off);
}

TEST_F(LogLevelTest, FiLogLevelMapsBySameName) {
    for (auto [value, expected] :
         {std::pair{"FI_LOG_LEVEL=warn", Level::Warn}, std::pair{"FI_LOG_LEVEL=info", Level::Info},
          std::pair{"FI_LOG_LEVEL=debug", Level::Debug},
          std::pair{"FI_LOG_LEVEL=trace", Level::Trace}}) {
        apply({value});
        EXPECT_EQ(level(), expected) << value;
    }
}

TEST_F(LogLevelTest, UfiLogLevelWinsOverFiLogLevel) {
    apply({"FI_LOG_LEVEL=debug", "UFI_LOG_LEVEL=error"});
    EXPECT_EQ(level(), Level::Error);
}

TEST_F(LogLevelTest, BadValuesFallThrough) {
    apply({"UFI_LOG_LEVEL=loud", "FI_LOG_LEVEL=info"});
    EXPECT_EQ(level(), Level::Info);
    apply({"UFI_LOG_LEVEL=loud", "FI_LOG_LEVEL=error"});  // not a libfabric level
    EXPECT_EQ(level(), Level::Warn);
}

TEST_F(LogLevelTest, EnabledFollowsTheLevel) {
    apply({"UFI_LOG_LEVEL=info"});
    EXPECT_TRUE(enabled(Level::Error, Subsys::Core));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Cq));
    EXPECT_TRUE(enabled(Level::Info, Subsys::Cntr));
    EXPECT_FALSE(enabled(Level::Debug, Subsys::Core));
    EXPECT_FALSE(enabled(Level::Trace, Subsys::EpData));
    EXPECT_FALSE(enabled(Level::Off, Subsys::Core));  // not a message level
    EXPECT_FALSE(enabled(Level::Warn, static_cast<Subsys>(subsys_count)));
    EXPECT_FALSE(enabled(static_cast<Level>(level_count), Subsys::Core));

    apply({"UFI_LOG_LEVEL=off"});
    for (int l = 0; l < level_count; ++l) {
        EXPECT_FALSE(enabled(static_cast<Level>(l), Subsys::Core)) << l;
    }
    apply({"UFI_LOG_LEVEL=trace"});
    for (int s = 0; s < subsys_count; ++s) {
        for (int l = 1; l < level_count; ++l) {
            EXPECT_TRUE(enabled(static_cast<Level>(l), static_cast<Subsys>(s))) << s << l;
        }
    }
}

TEST_F(LogLevelTest, SetLevel) {
    apply({"FI_LOG_SUBSYS=cq"});
    set_level(Level::Debug);
    EXPECT_EQ(level(), Level::Debug);
    EXPECT_TRUE(enabled(Level::Debug, Subsys::Cq));
    EXPECT_FALSE(enabled(Level::Debug, Subsys::Core));  // the filter stays
    EXPECT_FALSE(enabled(Level::Trace, Subsys::Cq));
    set_level(Level::Error);
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Cq));
    EXPECT_TRUE(enabled(Level::Error, Subsys::Cq));
}

TEST_F(LogLevelTest, SubsystemFilter) {
    apply({"UFI_LOG_LEVEL=info", "FI_LOG_SUBSYS=cq, AV"});
    EXPECT_TRUE(enabled(Level::Info, Subsys::Cq));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Av));
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Core));
    EXPECT_FALSE(enabled(Level::Error, Subsys::Mr));

    apply({"FI_LOG_SUBSYS=^cq,ep_data"});
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Cq));
    EXPECT_FALSE(enabled(Level::Warn, Subsys::EpData));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::EpCtrl));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Core));
    EXPECT_TRUE(lines().empty());
}

TEST_F(LogLevelTest, UnknownSubsystemIsReported) {
    apply({"FI_LOG_SUBSYS=cq,cqs"});
    const auto out = lines();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_NE(out[0].find("<warn> FI_LOG_SUBSYS: unknown subsystem 'cqs'"), std::string::npos)
        << out[0];
}

TEST_F(LogLevelTest, ProviderFilter) {
    apply({"FI_LOG_PROV=verbs"});  // only verbs: ufi is silent
    EXPECT_FALSE(enabled(Level::Error, Subsys::Core));
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Core, "ufi"));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Core, "verbs"));
    EXPECT_FALSE(enabled(Level::Info, Subsys::Core, "verbs"));  // the level still applies

    apply({"FI_LOG_PROV=^ufi"});
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Core));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Core, "tcp"));

    apply({"FI_LOG_PROV=UFI"});
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Core));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Core, "ufi"));
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Core, "tcp"));

    apply({"FI_LOG_PROV=^tcp", "FI_LOG_SUBSYS=mr"});
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Mr));
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Core, "shm"));
    EXPECT_TRUE(enabled(Level::Warn, Subsys::Mr, "shm"));
    EXPECT_FALSE(enabled(Level::Warn, Subsys::Mr, "tcp"));
}

}  // namespace
}  // namespace ufi::log::test
