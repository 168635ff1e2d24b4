// UFI_TLS / UFI_NET_DEVICES parsing: aliases, '^', 'all', unknown names, empty.
#include "transports/selection_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ufi::transports {
namespace {

using Strings = std::vector<std::string>;

bool any_contains(const Strings &v, const std::string &needle) {
    return std::any_of(v.begin(), v.end(),
                       [&](const std::string &s) { return s.find(needle) != std::string::npos; });
}

struct TlsCase {
    const char *what;
    Strings input;
    FilterMode mode;
    Strings names;
    std::string text;
    std::string diagnostic;  // "" = no diagnostic expected
};

class TlsParse : public ::testing::TestWithParam<TlsCase> {};

TEST_P(TlsParse, Table) {
    const TlsCase &c = GetParam();
    Strings diags;
    TransportFilter f = parse_transport_filter(c.input, diags);
    EXPECT_EQ(f.mode, c.mode) << c.what;
    EXPECT_EQ(f.names, c.names) << c.what;
    EXPECT_EQ(f.text, c.text) << c.what;
    if (c.diagnostic.empty()) {
        EXPECT_TRUE(diags.empty()) << c.what << ": " << (diags.empty() ? "" : diags.front());
    } else {
        EXPECT_TRUE(any_contains(diags, c.diagnostic)) << c.what;
    }
}

const Strings kShm = {"posix", "sysv", "cma", "self", "knem", "xpmem"};
const Strings kIb = {"rc_verbs", "rc_mlx5", "dc_mlx5", "ud_verbs", "ud_mlx5"};

INSTANTIATE_TEST_SUITE_P(
    Cases, TlsParse,
    ::testing::Values(
        TlsCase{"unset", {}, FilterMode::All, {}, "all", ""},
        TlsCase{"empty string", {""}, FilterMode::All, {}, "all", ""},
        TlsCase{"all", {"all"}, FilterMode::All, {}, "all", ""},
        TlsCase{"ALL any case", {"ALL"}, FilterMode::All, {}, "all", ""},
        TlsCase{"tcp", {"tcp"}, FilterMode::Include, {"tcp"}, "tcp", ""},
        TlsCase{"shm alias", {"shm"}, FilterMode::Include, kShm, "shm", ""},
        TlsCase{"sm alias", {"sm"}, FilterMode::Include, kShm, "sm", ""},
        TlsCase{"mm alias", {"mm"}, FilterMode::Include, {"posix", "sysv", "xpmem"}, "mm", ""},
        TlsCase{"ib alias", {"ib"}, FilterMode::Include, kIb, "ib", ""},
        TlsCase{"rc alias", {"rc"}, FilterMode::Include, {"rc_verbs", "rc_mlx5"}, "rc", ""},
        TlsCase{"ud alias", {"ud"}, FilterMode::Include, {"ud_verbs", "ud_mlx5"}, "ud", ""},
        TlsCase{"dc alias", {"dc"}, FilterMode::Include, {"dc_mlx5"}, "dc", ""},
        TlsCase{"rc_x alias", {"rc_x"}, FilterMode::Include, {"rc_mlx5"}, "rc_x", ""},
        TlsCase{"cuda alias",
                {"cuda"},
                FilterMode::Include,
                {"cuda_copy", "cuda_ipc", "gdr_copy"},
                "cuda",
                ""},
        TlsCase{"rocm alias", {"rocm"}, FilterMode::Include, {"rocm_copy", "rocm_ipc"}, "rocm", ""},
        TlsCase{"exclusion", {"^tcp"}, FilterMode::Exclude, {"tcp"}, "^tcp", ""},
        TlsCase{"exclusion, registry items",
                {"^tcp", "ib"},
                FilterMode::Exclude,
                {"tcp", "rc_verbs", "rc_mlx5", "dc_mlx5", "ud_verbs", "ud_mlx5"},
                "^tcp,ib",
                ""},
        TlsCase{"exclusion, one raw string",
                {"^tcp,ib"},
                FilterMode::Exclude,
                {"tcp", "rc_verbs", "rc_mlx5", "dc_mlx5", "ud_verbs", "ud_mlx5"},
                "^tcp,ib",
                ""},
        TlsCase{"list with alias",
                {"shm,tcp"},
                FilterMode::Include,
                {"posix", "sysv", "cma", "self", "knem", "xpmem", "tcp"},
                "shm,tcp",
                ""},
        TlsCase{"whitespace and case",
                {" TCP , Posix "},
                FilterMode::Include,
                {"tcp", "posix"},
                "tcp,posix",
                ""},
        TlsCase{
            "duplicates collapse", {"posix,shm,posix"}, FilterMode::Include, kShm, "posix,shm", ""},
        TlsCase{"unknown name kept, reported",
                {"foo,tcp"},
                FilterMode::Include,
                {"foo", "tcp"},
                "foo,tcp",
                "unknown transport 'foo'"},
        TlsCase{"late caret",
                {"tcp,^posix"},
                FilterMode::Include,
                {"tcp", "posix"},
                "tcp,posix",
                "'^' only applies at the start"},
        TlsCase{"all with others", {"all,tcp"}, FilterMode::All, {}, "all", "redundant"},
        TlsCase{"^all selects nothing",
                {"^all"},
                FilterMode::Include,
                {},
                "^all",
                "excludes everything"},
        TlsCase{"lone caret", {"^"}, FilterMode::All, {}, "all", "'^' with no names"}));

TEST(TlsFilter, SelectsByMode) {
    Strings d;
    TransportFilter all = parse_transport_filter({"all"}, d);
    EXPECT_TRUE(all.selects("tcp"));
    EXPECT_TRUE(all.selects("anything"));

    TransportFilter shm = parse_transport_filter({"shm"}, d);
    EXPECT_TRUE(shm.selects("posix"));
    EXPECT_TRUE(shm.selects("self"));
    EXPECT_TRUE(shm.selects("CMA"));
    EXPECT_FALSE(shm.selects("tcp"));

    TransportFilter no_tcp = parse_transport_filter({"^tcp"}, d);
    EXPECT_FALSE(no_tcp.selects("tcp"));
    EXPECT_TRUE(no_tcp.selects("posix"));
    EXPECT_TRUE(no_tcp.selects("rc_mlx5"));

    TransportFilter nothing = parse_transport_filter({"^all"}, d);
    EXPECT_FALSE(nothing.selects("self"));
    EXPECT_FALSE(nothing.selects("tcp"));
}

struct DevCase {
    const char *what;
    std::string input;
    FilterMode mode;
    Strings names;
    std::string text;
    Strings selected;
    Strings rejected;
};

class NetDevicesParse : public ::testing::TestWithParam<DevCase> {};

TEST_P(NetDevicesParse, Table) {
    const DevCase &c = GetParam();
    Strings diags;
    DeviceFilter f = parse_device_filter({c.input}, diags);
    EXPECT_EQ(f.mode, c.mode) << c.what;
    EXPECT_EQ(f.names, c.names) << c.what;
    EXPECT_EQ(f.text, c.text) << c.what;
    for (const std::string &dev : c.selected) {
        EXPECT_TRUE(f.selects(dev)) << c.what << ": " << dev;
    }
    for (const std::string &dev : c.rejected) {
        EXPECT_FALSE(f.selects(dev)) << c.what << ": " << dev;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NetDevicesParse,
    ::testing::Values(
        DevCase{"empty", "", FilterMode::All, {}, "all", {"eth0", "mlx5_0:1", "lo"}, {}},
        DevCase{"all", "all", FilterMode::All, {}, "all", {"eth0", "mlx5_3:2"}, {}},
        DevCase{"exact port",
                "mlx5_0:1",
                FilterMode::Include,
                {"mlx5_0:1"},
                "mlx5_0:1",
                {"mlx5_0:1"},
                {"mlx5_0:2", "mlx5_1:1", "eth0", "lo"}},
        DevCase{"device means all its ports",
                "mlx5_0",
                FilterMode::Include,
                {"mlx5_0"},
                "mlx5_0",
                {"mlx5_0:1", "mlx5_0:2"},
                {"mlx5_01:1", "mlx5_1:1", "mlx5_0:x"}},
        DevCase{"netdev list",
                "eth0, mlx5_1:1",
                FilterMode::Include,
                {"eth0", "mlx5_1:1"},
                "eth0,mlx5_1:1",
                {"eth0", "mlx5_1:1"},
                {"eth1", "mlx5_0:1", "lo"}},
        DevCase{"exclusion",
                "^eth0",
                FilterMode::Exclude,
                {"eth0"},
                "^eth0",
                {"lo", "mlx5_0:1", "eth1"},
                {"eth0"}},
        DevCase{"exclude a whole device",
                "^mlx5_2",
                FilterMode::Exclude,
                {"mlx5_2"},
                "^mlx5_2",
                {"mlx5_0:1", "mlx5_3:1"},
                {"mlx5_2:1", "mlx5_2:2"}},
        DevCase{"names are case-sensitive",
                "ETH0",
                FilterMode::Include,
                {"ETH0"},
                "ETH0",
                {},
                {"eth0"}}));

TEST(SelectionConfig, FromListsAndStrings) {
    SelectionConfig a = parse_selection_config(Strings{"^tcp"}, Strings{"mlx5_0:1"});
    SelectionConfig b = parse_selection_config("^tcp", "mlx5_0:1");
    EXPECT_EQ(a.tls.names, b.tls.names);
    EXPECT_EQ(a.tls.mode, FilterMode::Exclude);
    EXPECT_EQ(a.net_devices.names, b.net_devices.names);
    EXPECT_TRUE(a.diagnostics.empty());

    SelectionConfig c = parse_selection_config("bogus,tcp", "^");
    EXPECT_EQ(c.diagnostics.size(), 2U);
}

TEST(SelectionConfig, DefaultIsAll) {
    SelectionConfig cfg;
    EXPECT_EQ(cfg.tls.mode, FilterMode::All);
    EXPECT_EQ(cfg.net_devices.mode, FilterMode::All);
    EXPECT_TRUE(cfg.tls.selects("tcp"));
    EXPECT_TRUE(cfg.net_devices.selects("eth0"));
}

TEST(SelectionConfig, FromRegistryDefaults) {
    // The test environment does not set UFI_TLS / UFI_NET_DEVICES (defaults "all").
    SelectionConfig cfg = selection_config_from_registry();
    if (cfg.tls.mode == FilterMode::All && cfg.net_devices.mode == FilterMode::All) {
        EXPECT_EQ(cfg.tls.text, "all");
        EXPECT_EQ(cfg.net_devices.text, "all");
    }
}

TEST(TransportAliases, ExpandAndKnown) {
    EXPECT_EQ(expand_transport_alias("tcp"), Strings{"tcp"});
    EXPECT_EQ(expand_transport_alias("SHM"), kShm);
    EXPECT_TRUE(is_known_transport_name("rc_mlx5"));
    EXPECT_TRUE(is_known_transport_name("cuda"));
    EXPECT_FALSE(is_known_transport_name("infiniband"));
}

}  // namespace
}  // namespace ufi::transports
