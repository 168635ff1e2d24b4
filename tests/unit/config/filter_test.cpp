#include <gtest/gtest.h>

#include "base/config/filter.h"
#include "base/config/parse.h"

namespace ufi::config {
namespace {

TEST(ConfigFilter, EmptyAllowsEverything) {
    const NameFilter filter = parse_filter("");
    EXPECT_FALSE(filter.exclude);
    EXPECT_TRUE(filter.names.empty());
    EXPECT_TRUE(filter.allows("ufi"));
    EXPECT_TRUE(filter.allows(""));
}

TEST(ConfigFilter, IncludeList) {
    const NameFilter filter = parse_filter("tcp, verbs");
    EXPECT_FALSE(filter.exclude);
    EXPECT_EQ(filter.names, (std::vector<std::string>{"tcp", "verbs"}));
    EXPECT_TRUE(filter.allows("tcp"));
    EXPECT_TRUE(filter.allows("VERBS"));
    EXPECT_FALSE(filter.allows("ufi"));
}

TEST(ConfigFilter, CaretExcludes) {
    const NameFilter filter = parse_filter("^tcp,verbs");
    EXPECT_TRUE(filter.exclude);
    EXPECT_EQ(filter.names, (std::vector<std::string>{"tcp", "verbs"}));
    EXPECT_FALSE(filter.allows("tcp"));
    EXPECT_FALSE(filter.allows("verbs"));
    EXPECT_TRUE(filter.allows("ufi"));
}

TEST(ConfigFilter, LoneCaretAndBlanks) {
    NameFilter filter = parse_filter("^ , tcp");
    EXPECT_TRUE(filter.exclude);
    EXPECT_EQ(filter.names, std::vector<std::string>{"tcp"});
    filter = parse_filter(" ^ ufi ");
    EXPECT_TRUE(filter.exclude);
    EXPECT_EQ(filter.names, std::vector<std::string>{"ufi"});
    filter = parse_filter("^");
    EXPECT_TRUE(filter.exclude);
    EXPECT_TRUE(filter.names.empty());
    EXPECT_TRUE(filter.allows("anything"));
}

TEST(ConfigFilter, CaretOnlyCountsOnTheFirstItem) {
    const NameFilter filter = parse_filter("tcp,^ib");
    EXPECT_FALSE(filter.exclude);
    EXPECT_EQ(filter.names, (std::vector<std::string>{"tcp", "^ib"}));
    EXPECT_FALSE(filter.allows("ib"));
}

}  // namespace
}  // namespace ufi::config
