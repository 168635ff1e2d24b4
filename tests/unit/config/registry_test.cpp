#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <set>
#include <thread>
#include <vector>

#include "base/config/config.h"
#include "base/config/variables.h"

namespace ufi::config {
namespace {

using List = std::vector<std::string>;

Registry make(std::vector<const char *> env) {
    return Registry::from_environment(env);
}

// One variable of each type, to exercise parsing through the registry.
constexpr VarDef test_table[] = {
    {"UFI_T_BOOL", VarType::Bool, "y", "a bool"},
    {"UFI_T_INT", VarType::Int, "-3", "an int"},
    {"UFI_T_SIZE", VarType::Size, "8K", "a size"},
    {"UFI_T_DOUBLE", VarType::Double, "0.5", "a double"},
    {"UFI_T_STRING", VarType::String, "hello", "a string"},
    {"UFI_T_LIST", VarType::List, "a,b", "a list"},
    {"UFI_T_ENUM", VarType::Enum, "two", "an enum", "one,two,three"},
    {"UFI_T_OPT", VarType::Enum, "", "an enum unset by default", "x,y"},
};

Registry make_test(std::vector<const char *> env) {
    return Registry::from_environment(env, test_table);
}

bool has_diagnostic(const Registry &registry, std::string_view needle) {
    return std::any_of(registry.diagnostics().begin(), registry.diagnostics().end(),
                       [&](const std::string &d) { return d.find(needle) != d.npos; });
}

TEST(ConfigRegistry, TestTableDefaults) {
    const Registry r = make_test({});
    EXPECT_TRUE(r.diagnostics().empty());
    EXPECT_TRUE(r.get_bool("UFI_T_BOOL"));
    EXPECT_EQ(r.get_int("UFI_T_INT"), -3);
    EXPECT_EQ(r.get_size("UFI_T_SIZE"), 8192u);
    EXPECT_DOUBLE_EQ(r.get_double("UFI_T_DOUBLE"), 0.5);
    EXPECT_EQ(r.get_string("UFI_T_STRING"), "hello");
    EXPECT_EQ(r.get_list("UFI_T_LIST"), (List{"a", "b"}));
    EXPECT_EQ(r.get_string("UFI_T_ENUM"), "two");
    EXPECT_EQ(r.get_string("UFI_T_OPT"), "");
    for (const auto &def : test_table) {
        EXPECT_FALSE(r.is_set(def.name)) << def.name;
        EXPECT_FALSE(r.raw_value(def.name).has_value()) << def.name;
        EXPECT_TRUE(r.is_defined(def.name)) << def.name;
    }
}

TEST(ConfigRegistry, GoodValuesOfEveryType) {
    const Registry r = make_test({"UFI_T_BOOL=off", "UFI_T_INT=0x20", "UFI_T_SIZE=2m",
                                  "UFI_T_DOUBLE=-1.25", "UFI_T_STRING= spaced out ",
                                  "UFI_T_LIST=^x, y,,z", "UFI_T_ENUM=THREE", "UFI_T_OPT=y"});
    EXPECT_TRUE(r.diagnostics().empty()) << r.diagnostics().front();
    EXPECT_FALSE(r.get_bool("UFI_T_BOOL"));
    EXPECT_EQ(r.get_int("UFI_T_INT"), 32);
    EXPECT_EQ(r.get_size("UFI_T_SIZE"), 2u << 20);
    EXPECT_DOUBLE_EQ(r.get_double("UFI_T_DOUBLE"), -1.25);
    EXPECT_EQ(r.get_string("UFI_T_STRING"), " spaced out ");  // strings are taken as is
    EXPECT_EQ(r.get_list("UFI_T_LIST"), (List{"^x", "y", "z"}));
    EXPECT_EQ(r.get_string("UFI_T_ENUM"), "three");  // the canonical spelling
    EXPECT_EQ(r.get_string("UFI_T_OPT"), "y");
    EXPECT_TRUE(r.is_set("UFI_T_ENUM"));
    EXPECT_EQ(r.raw_value("UFI_T_ENUM"), "THREE");
}

TEST(ConfigRegistry, SizeInfinity) {
    const Registry r = make_test({"UFI_T_SIZE=inf"});
    EXPECT_EQ(r.get_size("UFI_T_SIZE"), std::numeric_limits<size_t>::max());
}

TEST(ConfigRegistry, BadValuesWarnAndUseTheDefault) {
    const Registry r = make_test({"UFI_T_BOOL=maybe", "UFI_T_INT=12abc", "UFI_T_SIZE=4X",
                                  "UFI_T_DOUBLE=fast", "UFI_T_ENUM=four", "UFI_T_OPT=z"});
    ASSERT_EQ(r.diagnostics().size(), 6u);
    EXPECT_TRUE(r.get_bool("UFI_T_BOOL"));
    EXPECT_EQ(r.get_int("UFI_T_INT"), -3);
    EXPECT_EQ(r.get_size("UFI_T_SIZE"), 8192u);
    EXPECT_DOUBLE_EQ(r.get_double("UFI_T_DOUBLE"), 0.5);
    EXPECT_EQ(r.get_string("UFI_T_ENUM"), "two");
    EXPECT_EQ(r.get_string("UFI_T_OPT"), "");
    EXPECT_EQ(r.diagnostics()[0],
              "invalid value 'maybe' for UFI_T_BOOL: expected y|n (also yes|no, 1|0, true|false, "
              "on|off); using the default 'y'");
    EXPECT_TRUE(has_diagnostic(r, "invalid value '12abc' for UFI_T_INT: expected integer"));
    EXPECT_TRUE(has_diagnostic(r, "invalid value '4X' for UFI_T_SIZE: expected bytes"));
    EXPECT_TRUE(has_diagnostic(r, "invalid value 'fast' for UFI_T_DOUBLE: expected number"));
    EXPECT_TRUE(has_diagnostic(r,
                               "invalid value 'four' for UFI_T_ENUM: expected one of "
                               "one|two|three; using the default 'two'"));
    EXPECT_TRUE(has_diagnostic(r,
                               "invalid value 'z' for UFI_T_OPT: expected one of x|y; "
                               "using the default (unset)"));
    // Still "set", and the raw value is the user's.
    EXPECT_TRUE(r.is_set("UFI_T_INT"));
    EXPECT_EQ(r.raw_value("UFI_T_INT"), "12abc");
}

TEST(ConfigRegistry, EmptyValues) {
    // Empty is "unset" for an enum whose default is unset, a bad value for other scalars,
    // and an empty list or string.
    const Registry r = make_test({"UFI_T_OPT=", "UFI_T_INT=", "UFI_T_LIST=", "UFI_T_STRING="});
    ASSERT_EQ(r.diagnostics().size(), 1u);
    EXPECT_TRUE(has_diagnostic(r, "UFI_T_INT"));
    EXPECT_EQ(r.get_string("UFI_T_OPT"), "");
    EXPECT_TRUE(r.is_set("UFI_T_OPT"));
    EXPECT_EQ(r.get_list("UFI_T_LIST"), List{});
    EXPECT_EQ(r.get_string("UFI_T_STRING"), "");
}

TEST(ConfigRegistry, RealTableHasUniqueNamesAndValidDefaults) {
    const Registry r = make({});
    EXPECT_TRUE(r.diagnostics().empty());
    std::set<std::string_view> names;
    for (const VarDef &def : variables()) {
        EXPECT_TRUE(names.insert(def.name).second) << "duplicate " << def.name;
        EXPECT_FALSE(def.doc.empty()) << def.name;
        EXPECT_EQ(def.doc.find('\n'), std::string_view::npos) << def.name;
        EXPECT_EQ(def.type == VarType::Enum, !def.choices.empty()) << def.name;
        EXPECT_TRUE(def.name.starts_with("UFI_") || def.name.starts_with("FI_")) << def.name;
    }
    for (const char *name :
         {"UFI_TLS", "UFI_NET_DEVICES", "UFI_LOG_LEVEL", "UFI_LOG_FILE", "FI_LOG_LEVEL",
          "FI_LOG_PROV", "FI_LOG_SUBSYS", "FI_PROVIDER", "FI_PROVIDER_EXCLUDE"}) {
        EXPECT_TRUE(names.contains(name)) << name;
    }
}

TEST(ConfigRegistry, RealTableDefaults) {
    const Registry r = make({});
    EXPECT_EQ(r.get_list("UFI_TLS"), List{"all"});
    EXPECT_EQ(r.get_list("UFI_NET_DEVICES"), List{"all"});
    EXPECT_EQ(r.get_string("UFI_LOG_LEVEL"), "");
    EXPECT_EQ(r.get_string("UFI_LOG_FILE"), "");
    EXPECT_EQ(r.get_string("FI_LOG_LEVEL"), "");
    EXPECT_EQ(r.get_string("FI_LOG_PROV"), "");
    EXPECT_EQ(r.get_string("FI_LOG_SUBSYS"), "");
    EXPECT_EQ(r.get_list("FI_PROVIDER"), List{});
    EXPECT_EQ(r.get_list("FI_PROVIDER_EXCLUDE"), List{});
}

TEST(ConfigRegistry, TransportListIsStoredNotExpanded) {
    const Registry r = make({"UFI_TLS=^shm, ,tcp ", "UFI_NET_DEVICES=mlx5_0:1,eth0"});
    EXPECT_TRUE(r.diagnostics().empty());
    EXPECT_EQ(r.get_list("UFI_TLS"), (List{"^shm", "tcp"}));
    EXPECT_EQ(r.get_list("UFI_NET_DEVICES"), (List{"mlx5_0:1", "eth0"}));
}

TEST(ConfigRegistry, LogLevels) {
    Registry r = make({"UFI_LOG_LEVEL=DEBUG", "FI_LOG_LEVEL=Trace"});
    EXPECT_TRUE(r.diagnostics().empty());
    EXPECT_EQ(r.get_string("UFI_LOG_LEVEL"), "debug");
    EXPECT_EQ(r.get_string("FI_LOG_LEVEL"), "trace");

    r = make({"UFI_LOG_LEVEL=loud"});
    ASSERT_EQ(r.diagnostics().size(), 1u);
    EXPECT_EQ(r.diagnostics()[0],
              "invalid value 'loud' for UFI_LOG_LEVEL: expected one of "
              "off|error|warn|info|debug|trace; using the default (unset)");
    EXPECT_EQ(r.get_string("UFI_LOG_LEVEL"), "");

    // libfabric knows warn, trace, info and debug only.
    r = make({"FI_LOG_LEVEL=error"});
    ASSERT_EQ(r.diagnostics().size(), 1u);
    EXPECT_TRUE(has_diagnostic(r, "FI_LOG_LEVEL: expected one of warn|trace|info|debug"));
    EXPECT_EQ(r.get_string("FI_LOG_LEVEL"), "");
}

TEST(ConfigRegistry, UnknownUfiVariableSuggestsTheClosest) {
    const Registry r = make({"UFI_TSL=tcp", "UFI_NET_DEVICE=eth0", "UFI_LOGLEVEL=info"});
    ASSERT_EQ(r.diagnostics().size(), 3u);
    EXPECT_EQ(r.diagnostics()[0],
              "unknown environment variable UFI_TSL=tcp; did you mean UFI_TLS?");
    EXPECT_EQ(r.diagnostics()[1],
              "unknown environment variable UFI_NET_DEVICE=eth0; did you mean UFI_NET_DEVICES?");
    EXPECT_EQ(r.diagnostics()[2],
              "unknown environment variable UFI_LOGLEVEL=info; did you mean UFI_LOG_LEVEL?");
    // The typo does not set the real variable.
    EXPECT_FALSE(r.is_set("UFI_TLS"));
    EXPECT_FALSE(r.is_defined("UFI_TSL"));
}

TEST(ConfigRegistry, UnknownUfiVariableFarFromAnyKnown) {
    const Registry r = make({"UFI_ENABLE_TURBO_MODE=1"});
    ASSERT_EQ(r.diagnostics().size(), 1u);
    EXPECT_EQ(r.diagnostics()[0],
              "unknown environment variable UFI_ENABLE_TURBO_MODE=1 (no similar variable)");
}

TEST(ConfigRegistry, OtherVariablesAreIgnored) {
    const Registry r = make({"FI_TCP_IFACE=eth0", "FI_LOG_LEVLE=warn", "FI_UFI_FOO=1", "UCX_TLS=rc",
                             "UFITLS=tcp", "MY_UFI_TLS=tcp", "PATH=/bin"});
    EXPECT_TRUE(r.diagnostics().empty()) << r.diagnostics().front();
}

TEST(ConfigRegistry, MalformedEntriesAndFirstOccurrenceWins) {
    const Registry r =
        make({"NOEQUALS", "=value", "UFI_TLS=tcp", "UFI_TLS=ib", nullptr, "UFI_LOG_LEVEL=debug"});
    EXPECT_TRUE(r.diagnostics().empty());
    EXPECT_EQ(r.get_list("UFI_TLS"), List{"tcp"});
    EXPECT_FALSE(r.is_set("UFI_LOG_LEVEL"));  // after the terminating nullptr
}

TEST(ConfigRegistry, FromEnviron) {
    const char *const envp[] = {"UFI_TLS=shm", "UFI_TSL=x", nullptr};
    const Registry r = Registry::from_environ(envp);
    EXPECT_EQ(r.get_list("UFI_TLS"), List{"shm"});
    EXPECT_EQ(r.diagnostics().size(), 1u);
    EXPECT_TRUE(Registry::from_environ(nullptr).diagnostics().empty());
}

TEST(ConfigRegistry, ListShowsEveryVariable) {
    Registry r = make({"UFI_TLS=tcp", "UFI_LOG_LEVEL=loud", "FI_UFI_DYN=7"});
    ASSERT_EQ(r.define_dynamic("FI_UFI_DYN", VarType::Int, "a dynamic one"), 0);
    const std::vector<VarInfo> all = r.list();
    ASSERT_EQ(all.size(), variables().size() + 1);
    for (size_t i = 0; i < variables().size(); ++i) {
        EXPECT_EQ(all[i].name, variables()[i].name);  // table order
        EXPECT_EQ(all[i].doc, variables()[i].doc);
        EXPECT_FALSE(all[i].is_dynamic);
    }
    const auto find = [&](std::string_view name) {
        return *std::find_if(all.begin(), all.end(), [&](auto &v) { return v.name == name; });
    };
    const VarInfo tls = find("UFI_TLS");
    EXPECT_EQ(tls.type_name, "list");
    EXPECT_EQ(tls.type, VarType::List);
    EXPECT_EQ(tls.default_value, "all");
    EXPECT_EQ(tls.value, "tcp");
    EXPECT_TRUE(tls.is_set);
    EXPECT_EQ(tls.syntax, "comma-separated list");

    const VarInfo level = find("UFI_LOG_LEVEL");
    EXPECT_EQ(level.type_name, "enum");
    EXPECT_EQ(level.value, "");  // the bad value is not in effect
    EXPECT_TRUE(level.is_set);
    EXPECT_EQ(level.syntax, "one of off|error|warn|info|debug|trace");

    const VarInfo file = find("UFI_LOG_FILE");
    EXPECT_FALSE(file.is_set);
    EXPECT_EQ(file.type_name, "string");

    const VarInfo dyn = all.back();
    EXPECT_EQ(dyn.name, "FI_UFI_DYN");
    EXPECT_TRUE(dyn.is_dynamic);
    EXPECT_TRUE(dyn.is_set);
    EXPECT_EQ(dyn.value, "7");
    EXPECT_EQ(dyn.default_value, "");
    EXPECT_EQ(dyn.type_name, "int");
    EXPECT_EQ(dyn.doc, "a dynamic one");
}

TEST(ConfigRegistry, DynamicDefinitions) {
    Registry r = make({"FI_UFI_COUNT=12", "FI_UFI_FLAG=yes", "FI_UFI_BYTES=1K", "FI_UFI_NAME=x y",
                       "FI_UFI_BAD=abc"});
    EXPECT_FALSE(r.is_defined("FI_UFI_COUNT"));
    EXPECT_FALSE(r.raw_value("FI_UFI_COUNT").has_value());  // not defined yet

    EXPECT_EQ(r.define_dynamic("FI_UFI_COUNT", VarType::Int, "a count"), 0);
    EXPECT_EQ(r.define_dynamic("FI_UFI_FLAG", VarType::Bool, "a flag"), 0);
    EXPECT_EQ(r.define_dynamic("FI_UFI_BYTES", VarType::Size, "bytes"), 0);
    EXPECT_EQ(r.define_dynamic("FI_UFI_NAME", VarType::String, "a name"), 0);
    EXPECT_EQ(r.define_dynamic("FI_UFI_BAD", VarType::Int, "badly set"), 0);
    EXPECT_EQ(r.define_dynamic("FI_UFI_UNSET", VarType::Double, "not set"), 0);

    EXPECT_TRUE(r.is_defined("FI_UFI_COUNT"));
    EXPECT_EQ(r.type_of("FI_UFI_COUNT"), VarType::Int);
    EXPECT_EQ(r.type_of("FI_UFI_NAME"), VarType::String);
    EXPECT_EQ(r.type_of("UFI_TLS"), VarType::List);
    EXPECT_EQ(r.type_of("UFI_LOG_LEVEL"), VarType::Enum);
    EXPECT_FALSE(r.type_of("FI_UFI_NOPE").has_value());
    EXPECT_EQ(r.get_int("FI_UFI_COUNT"), 12);
    EXPECT_EQ(r.raw_value("FI_UFI_COUNT"), "12");
    EXPECT_TRUE(r.get_bool("FI_UFI_FLAG"));
    EXPECT_EQ(r.get_size("FI_UFI_BYTES"), 1024u);
    EXPECT_EQ(r.get_string("FI_UFI_NAME"), "x y");
    // A bad value: the zero value, the raw value for fi_param_get to judge, no diagnostic.
    EXPECT_EQ(r.get_int("FI_UFI_BAD"), 0);
    EXPECT_EQ(r.raw_value("FI_UFI_BAD"), "abc");
    EXPECT_TRUE(r.is_set("FI_UFI_BAD"));
    EXPECT_TRUE(r.diagnostics().empty());
    // Unset.
    EXPECT_FALSE(r.is_set("FI_UFI_UNSET"));
    EXPECT_FALSE(r.raw_value("FI_UFI_UNSET").has_value());
    EXPECT_DOUBLE_EQ(r.get_double("FI_UFI_UNSET"), 0.0);
}

TEST(ConfigRegistry, DuplicateDynamicDefinitions) {
    Registry r = make({});
    EXPECT_EQ(r.define_dynamic("FI_UFI_X", VarType::Int, "x"), 0);
    EXPECT_EQ(r.define_dynamic("FI_UFI_X", VarType::Int, "another doc"), 0);  // same type
    EXPECT_EQ(r.define_dynamic("FI_UFI_X", VarType::String, "x"), -EEXIST);
    EXPECT_EQ(r.define_dynamic("FI_UFI_X", VarType::Bool, "x"), -EEXIST);
    // Against the table.
    EXPECT_EQ(r.define_dynamic("UFI_TLS", VarType::List, "as in the table"), 0);
    EXPECT_EQ(r.define_dynamic("UFI_TLS", VarType::String, "another type"), -EEXIST);
    EXPECT_EQ(r.define_dynamic("FI_LOG_LEVEL", VarType::String, "libfabric's type"), -EEXIST);
    // Invalid.
    EXPECT_EQ(r.define_dynamic("", VarType::Int, "no name"), -EINVAL);
    EXPECT_EQ(r.define_dynamic("A=B", VarType::Int, "bad name"), -EINVAL);
    EXPECT_EQ(r.define_dynamic("FI_UFI_E", VarType::Enum, "no choices"), -EINVAL);
    // One entry each in list().
    const auto all = r.list();
    EXPECT_EQ(all.size(), variables().size() + 1);
    EXPECT_EQ(all.back().doc, "x");
}

TEST(ConfigRegistry, UnknownNamesAreNotSet) {
    const Registry r = make({"FI_UFI_FOO=1"});
    EXPECT_FALSE(r.is_defined("FI_UFI_FOO"));
    EXPECT_FALSE(r.is_set("FI_UFI_FOO"));
    EXPECT_FALSE(r.raw_value("FI_UFI_FOO").has_value());
    EXPECT_FALSE(r.raw_value("NOPE").has_value());
}

TEST(ConfigRegistryDeathTest, UnknownNameOrWrongTypeIsAProgrammingError) {
    const Registry r = make({});
    EXPECT_DEBUG_DEATH(r.get_int("UFI_NOPE"), "unknown configuration variable");
    EXPECT_DEBUG_DEATH(r.get_bool("UFI_TLS"), "another type");
    EXPECT_DEBUG_DEATH(r.get_list("UFI_LOG_LEVEL"), "another type");
#ifdef NDEBUG
    EXPECT_EQ(r.get_int("UFI_NOPE"), 0);
    EXPECT_FALSE(r.get_bool("UFI_TLS"));
    EXPECT_TRUE(r.get_list("UFI_LOG_LEVEL").empty());
    EXPECT_EQ(r.get_string("UFI_TLS"), "");
    EXPECT_EQ(r.get_size("UFI_TLS"), 0u);
    EXPECT_EQ(r.get_double("UFI_TLS"), 0.0);
#endif
}

TEST(ConfigRegistry, MoveKeepsEverything) {
    Registry a = make({"UFI_TLS=tcp", "UFI_TSL=x"});
    ASSERT_EQ(a.define_dynamic("FI_UFI_Y", VarType::Bool, "y"), 0);
    const std::string *list_item = &a.get_list("UFI_TLS").front();
    Registry b = std::move(a);
    EXPECT_EQ(&b.get_list("UFI_TLS").front(), list_item);  // references stay valid
    EXPECT_EQ(b.diagnostics().size(), 1u);
    EXPECT_TRUE(b.is_defined("FI_UFI_Y"));
}

TEST(ConfigRegistry, ConcurrentDefinitionsAndReads) {
    Registry r = make({"FI_UFI_V0=1", "UFI_TLS=tcp"});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&r, t] {
            for (int i = 0; i < 200; ++i) {
                const std::string name = "FI_UFI_V" + std::to_string(i);
                EXPECT_EQ(r.define_dynamic(name, VarType::Int, "v"), 0);
                EXPECT_EQ(r.get_list("UFI_TLS").size(), 1u);
                if (t == 0 && i % 50 == 0) {
                    EXPECT_GE(r.list().size(), variables().size());
                }
                EXPECT_TRUE(r.is_defined(name));
            }
        });
    }
    for (auto &thread : threads) thread.join();
    EXPECT_EQ(r.list().size(), variables().size() + 200);
    EXPECT_EQ(r.get_int("FI_UFI_V0"), 1);
}

TEST(ConfigRegistry, TypeNames) {
    EXPECT_EQ(type_name(VarType::Bool), "bool");
    EXPECT_EQ(type_name(VarType::Int), "int");
    EXPECT_EQ(type_name(VarType::Size), "size");
    EXPECT_EQ(type_name(VarType::Double), "double");
    EXPECT_EQ(type_name(VarType::String), "string");
    EXPECT_EQ(type_name(VarType::List), "list");
    EXPECT_EQ(type_name(VarType::Enum), "enum");
}

}  // namespace
}  // namespace ufi::config
