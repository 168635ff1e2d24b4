#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "base/config/parse.h"

namespace ufi::config {
namespace {

TEST(ConfigParse, BoolSpellings) {
    for (const char *yes : {"y", "Y", "yes", "YES", "1", "true", "True", "on", "ON", " on\t"}) {
        EXPECT_EQ(parse_bool(yes), true) << yes;
    }
    for (const char *no : {"n", "N", "no", "No", "0", "false", "FALSE", "off", "Off", " 0 "}) {
        EXPECT_EQ(parse_bool(no), false) << no;
    }
    for (const char *bad : {"", " ", "2", "yess", "enable", "t", "-1", "o"}) {
        EXPECT_FALSE(parse_bool(bad).has_value()) << bad;
    }
}

TEST(ConfigParse, Int) {
    EXPECT_EQ(parse_int("0"), 0);
    EXPECT_EQ(parse_int("42"), 42);
    EXPECT_EQ(parse_int(" -17 "), -17);
    EXPECT_EQ(parse_int("+5"), 5);
    EXPECT_EQ(parse_int("0x10"), 16);
    EXPECT_EQ(parse_int("0XfF"), 255);
    EXPECT_EQ(parse_int("-0x10"), -16);
    EXPECT_EQ(parse_int("010"), 10);  // decimal, not octal
    EXPECT_EQ(parse_int("9223372036854775807"), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(parse_int("-9223372036854775808"), std::numeric_limits<int64_t>::min());
    for (const char *bad : {"", "-", "+", "0x", "12a", "1.5", "abc", "9223372036854775808",
                            "-9223372036854775809", "--1", "1 2", "0x-1"}) {
        EXPECT_FALSE(parse_int(bad).has_value()) << bad;
    }
}

TEST(ConfigParse, SizeSuffixes) {
    EXPECT_EQ(parse_size("0"), 0u);
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("8b"), 8u);
    EXPECT_EQ(parse_size("4K"), 4096u);
    EXPECT_EQ(parse_size("4k"), 4096u);
    EXPECT_EQ(parse_size("4KB"), 4096u);
    EXPECT_EQ(parse_size("4kb"), 4096u);
    EXPECT_EQ(parse_size("2M"), 2u << 20);
    EXPECT_EQ(parse_size("2mB"), 2u << 20);
    EXPECT_EQ(parse_size("3G"), size_t{3} << 30);
    EXPECT_EQ(parse_size("3gb"), size_t{3} << 30);
    EXPECT_EQ(parse_size("5T"), size_t{5} << 40);
    EXPECT_EQ(parse_size("5TB"), size_t{5} << 40);
    EXPECT_EQ(parse_size(" 16 K "), 16u << 10);
}

TEST(ConfigParse, SizeInfinity) {
    constexpr size_t max = std::numeric_limits<size_t>::max();
    EXPECT_EQ(parse_size("inf"), max);
    EXPECT_EQ(parse_size("INF"), max);
    EXPECT_EQ(parse_size("unlimited"), max);
    EXPECT_EQ(parse_size("Unlimited"), max);
    EXPECT_EQ(parse_size("18446744073709551615"), max);
}

TEST(ConfigParse, SizeBadValues) {
    for (const char *bad : {"", "K", "-1", "1.5M", "4X", "4KiB", "4 K B", "infinity", "0x10",
                            "18446744073709551616", "16777216T", "4KK"}) {
        EXPECT_FALSE(parse_size(bad).has_value()) << bad;
    }
    // The largest that fits and the first that overflows a suffix.
    EXPECT_EQ(parse_size("16777215T"), size_t{16777215} << 40);
}

TEST(ConfigParse, Double) {
    EXPECT_DOUBLE_EQ(*parse_double("1.5"), 1.5);
    EXPECT_DOUBLE_EQ(*parse_double("-2"), -2.0);
    EXPECT_DOUBLE_EQ(*parse_double("+0.25"), 0.25);
    EXPECT_DOUBLE_EQ(*parse_double("1e3"), 1000.0);
    EXPECT_DOUBLE_EQ(*parse_double(" 3 "), 3.0);
    for (const char *bad : {"", "abc", "1.5x", "inf", "nan", "1e999", "1,5", "++1"}) {
        EXPECT_FALSE(parse_double(bad).has_value()) << bad;
    }
}

TEST(ConfigParse, ListSplitsTrimsAndDropsEmptyItems) {
    using List = std::vector<std::string>;
    EXPECT_EQ(parse_list("all"), List{"all"});
    EXPECT_EQ(parse_list("tcp,ib"), (List{"tcp", "ib"}));
    EXPECT_EQ(parse_list(" tcp , ib\t,  "), (List{"tcp", "ib"}));
    EXPECT_EQ(parse_list(",,tcp,,ib,"), (List{"tcp", "ib"}));
    EXPECT_EQ(parse_list(""), List{});
    EXPECT_EQ(parse_list(" , "), List{});
    EXPECT_EQ(parse_list("mlx5_0:1,eth0"), (List{"mlx5_0:1", "eth0"}));
}

TEST(ConfigParse, ListKeepsCaretOnFirstItem) {
    using List = std::vector<std::string>;
    EXPECT_EQ(parse_list("^tcp,ib"), (List{"^tcp", "ib"}));
    EXPECT_EQ(parse_list(" ^ tcp"), (List{"^ tcp"}));
}

TEST(ConfigParse, EnumReturnsCanonicalChoice) {
    constexpr std::string_view choices = "off,error,warn";
    EXPECT_EQ(parse_enum("warn", choices), "warn");
    EXPECT_EQ(parse_enum(" WaRn ", choices), "warn");
    EXPECT_EQ(parse_enum("off", choices), "off");
    EXPECT_FALSE(parse_enum("loud", choices).has_value());
    EXPECT_FALSE(parse_enum("", choices).has_value());
    EXPECT_FALSE(parse_enum("war", choices).has_value());
    EXPECT_FALSE(parse_enum("off,error", choices).has_value());
}

}  // namespace
}  // namespace ufi::config
