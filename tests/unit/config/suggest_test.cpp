#include <gtest/gtest.h>

#include <array>

#include "base/config/suggest.h"

namespace ufi::config {
namespace {

TEST(ConfigSuggest, EditDistance) {
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("abc", ""), 3u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
    EXPECT_EQ(edit_distance("UFI_TLS", "UFI_TLS"), 0u);
    EXPECT_EQ(edit_distance("ufi_tls", "UFI_TLS"), 0u);  // case is ignored
    EXPECT_EQ(edit_distance("UFI_TSL", "UFI_TLS"), 1u);  // one transposition
    EXPECT_EQ(edit_distance("UFI_TL", "UFI_TLS"), 1u);
    EXPECT_EQ(edit_distance("UFI_TLX", "UFI_TLS"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(ConfigSuggest, ClosestName) {
    constexpr std::array<std::string_view, 3> names = {"UFI_TLS", "UFI_NET_DEVICES",
                                                       "UFI_LOG_LEVEL"};
    EXPECT_EQ(closest_name("UFI_TSL", names), "UFI_TLS");
    EXPECT_EQ(closest_name("UFI_NET_DEVICE", names), "UFI_NET_DEVICES");
    EXPECT_EQ(closest_name("UFI_NET_DEVS", names), "UFI_NET_DEVICES");
    EXPECT_EQ(closest_name("UFI_LOGLEVEL", names), "UFI_LOG_LEVEL");
    EXPECT_EQ(closest_name("UFI_COMPLETELY_DIFFERENT", names), "");
    EXPECT_EQ(closest_name("UFI_X", names), "");
    EXPECT_EQ(closest_name("UFI_TLS", {}), "");
}

}  // namespace
}  // namespace ufi::config
