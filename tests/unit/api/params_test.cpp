// fi_param_define / fi_param_get at their edges: out-of-range types (read as int, never as the
// enum), names no environment variable can have, NULL arguments, and the FI_* variables
// libfabric itself defines, whose values fi_param_get must write with libfabric's type: a
// libfabric program reads FI_MR_CACHE_MAX_COUNT into a size_t, so ufi must write 8 bytes, not 4.
// meson sets every variable below (tests/unit/api/meson.build, test 'api_params').
#include "api/provider_abi.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

extern "C" {
int fi_param_define(const struct fi_provider *provider, const char *param_name,
                    enum fi_param_type type, const char *help_string_fmt, ...);
int fi_param_get(struct fi_provider *provider, const char *param_name, void *value);
}

namespace {

// fi_param_define as a C caller sees it: the type is an int.
using DefineAsC = int (*)(const fi_provider *, const char *, int, const char *, ...);
DefineAsC define_as_c() { return reinterpret_cast<DefineAsC>(&fi_param_define); }

TEST(Params, OutOfRangeTypesAreRefused) {
    fi_provider prov{};
    prov.name = "ufitest";
    for (int type : {-1, 4, 5, 1000, INT32_MIN, INT32_MAX}) {
        EXPECT_EQ(define_as_c()(&prov, "typed", type, "a type %d", type), -FI_EINVAL) << type;
    }
    int value = 0;
    EXPECT_EQ(fi_param_get(&prov, "typed", &value), -FI_ENOENT) << "nothing was defined";
    EXPECT_EQ(define_as_c()(&prov, "typed", FI_PARAM_SIZE_T, "a size"), 0) << "in range";
}

TEST(Params, NamesAreLettersDigitsAndUnderscores) {
    fi_provider prov{};
    prov.name = "ufitest";
    for (const char *bad : {"", "with space", "a/b", "../up", "x=1", "tab\there", "dash-ed",
                            "dot.ted", "semi;colon", "new\nline"}) {
        EXPECT_EQ(fi_param_define(&prov, bad, FI_PARAM_STRING, "bad name"), -FI_EINVAL)
            << "'" << bad << "'";
    }
    EXPECT_EQ(fi_param_define(&prov, "Good_name_2", FI_PARAM_STRING, "fine"), 0);
    EXPECT_EQ(fi_param_define(nullptr, "core_param_9", FI_PARAM_INT, "fine"), 0);
}

TEST(Params, NullArguments) {
    fi_provider prov{};
    prov.name = "ufitest";
    EXPECT_EQ(fi_param_define(&prov, nullptr, FI_PARAM_INT, "no name"), -FI_EINVAL);
    EXPECT_EQ(fi_param_define(&prov, "nohelp", FI_PARAM_INT, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_param_define(&prov, "emptyhelp", FI_PARAM_INT, ""), -FI_EINVAL)
        << "as libfabric";
    int value = 0;
    EXPECT_EQ(fi_param_get(&prov, nullptr, &value), -FI_EINVAL);
    EXPECT_EQ(fi_param_get(&prov, "num", nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_param_get(nullptr, nullptr, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_param_get(&prov, "never_defined_anywhere", &value), -FI_ENOENT);
    EXPECT_EQ(fi_param_get(nullptr, "never_defined_anywhere", &value), -FI_ENOENT);
    EXPECT_EQ(fi_param_get(&prov, "with space", &value), -FI_ENOENT);
    EXPECT_EQ(value, 0) << "nothing written";
}

// Every FI_* variable of ufi's registry that libfabric also defines, with libfabric's
// FI_PARAM_* type (src/fabric.c, src/log.c, prov/util/src/util_mem_monitor.c).
struct LibfabricVar {
    const char *param;    // as fi_param_get takes it (provider NULL: the core)
    const char *env;      // the variable meson sets
    fi_param_type type;
    const char *expect;   // the value, as a string
};
constexpr LibfabricVar kLibfabricVars[] = {
    {"log_level", "FI_LOG_LEVEL", FI_PARAM_STRING, "warn"},
    {"log_prov", "FI_LOG_PROV", FI_PARAM_STRING, "ufi"},
    {"log_subsys", "FI_LOG_SUBSYS", FI_PARAM_STRING, "core"},
    {"provider", "FI_PROVIDER", FI_PARAM_STRING, "ufi"},
    {"mr_cache_max_size", "FI_MR_CACHE_MAX_SIZE", FI_PARAM_SIZE_T, "1048576"},
    {"mr_cache_max_count", "FI_MR_CACHE_MAX_COUNT", FI_PARAM_SIZE_T, "77"},
    {"mr_cache_monitor", "FI_MR_CACHE_MONITOR", FI_PARAM_STRING, "memhooks"},
};

size_t size_of(fi_param_type type) {
    switch (type) {
        case FI_PARAM_SIZE_T: return sizeof(size_t);
        case FI_PARAM_INT:
        case FI_PARAM_BOOL: return sizeof(int);
        case FI_PARAM_STRING: break;
    }
    return sizeof(char *);
}

TEST(Params, LibfabricVariablesHaveLibfabricsTypes) {
    for (const LibfabricVar &v : kLibfabricVars) {
        SCOPED_TRACE(v.env);
        // Guard bytes around the value: fi_param_get writes exactly the type's size.
        constexpr size_t kGuard = 16;
        unsigned char buf[kGuard + 16 + kGuard];
        std::memset(buf, 0xEE, sizeof buf);
        unsigned char *value = buf + kGuard;
        ASSERT_EQ(fi_param_get(nullptr, v.param, value), 0);
        const size_t n = size_of(v.type);
        for (size_t i = 0; i < sizeof buf; ++i) {
            const bool inside = i >= kGuard && i < kGuard + n;
            if (!inside) {
                EXPECT_EQ(buf[i], 0xEE) << "byte " << static_cast<long>(i) - long{kGuard};
            }
        }
        std::string got;
        if (v.type == FI_PARAM_SIZE_T) {
            size_t s;
            std::memcpy(&s, value, sizeof s);
            got = std::to_string(s);
        } else if (v.type == FI_PARAM_STRING) {
            const char *p;
            std::memcpy(&p, value, sizeof p);
            ASSERT_NE(p, nullptr);
            got = p;
        } else {
            int i;
            std::memcpy(&i, value, sizeof i);
            got = std::to_string(i);
        }
        EXPECT_EQ(got, v.expect);

        // fi_getparams reports the same type, and libfabric's own definition is accepted.
        fi_param *params = nullptr;
        int count = 0;
        ASSERT_EQ(fi_getparams(&params, &count), 0);
        bool listed = false;
        for (int i = 0; i < count; ++i) {
            if (strcmp(params[i].name, v.env) != 0) continue;
            listed = true;
            EXPECT_EQ(params[i].type, v.type);
        }
        fi_freeparams(params);
        EXPECT_TRUE(listed);
        EXPECT_EQ(fi_param_define(nullptr, v.param, v.type, "as libfabric defines it"), 0);
        const fi_param_type other = v.type == FI_PARAM_STRING ? FI_PARAM_INT : FI_PARAM_STRING;
        EXPECT_EQ(fi_param_define(nullptr, v.param, other, "another type"), -FI_EALREADY);
    }
}

// Variables defined at run time are written with their own type's size too.
TEST(Params, DefinedVariablesWriteTheirTypesSize) {
    fi_provider prov{};
    prov.name = "ufitest";
    struct {
        const char *name;
        fi_param_type type;
    } defs[] = {{"num", FI_PARAM_INT}, {"flag", FI_PARAM_BOOL}, {"size", FI_PARAM_SIZE_T},
                {"str", FI_PARAM_STRING}};
    for (const auto &d : defs) {
        SCOPED_TRACE(d.name);
        ASSERT_EQ(fi_param_define(&prov, d.name, d.type, "test"), 0);
        unsigned char buf[32];
        std::memset(buf, 0xEE, sizeof buf);
        ASSERT_EQ(fi_param_get(&prov, d.name, buf + 8), 0);
        const size_t n = size_of(d.type);
        for (size_t i = 0; i < sizeof buf; ++i) {
            if (i < 8 || i >= 8 + n) {
                EXPECT_EQ(buf[i], 0xEE) << i;
            }
        }
    }
}

}  // namespace
