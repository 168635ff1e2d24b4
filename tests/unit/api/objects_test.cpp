// The exported non-getinfo entry points: fi_version, fi_strerror, fi_fabric/fi_fabric2,
// fi_open, fi_param_*, fi_log*, and the ufi_ext reports, through libufi.so.
#include "api/provider_abi.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <ufi/ufi_ext.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

extern "C" {
int fi_param_define(const struct fi_provider *provider, const char *param_name,
                    enum fi_param_type type, const char *help_string_fmt, ...);
int fi_param_get(struct fi_provider *provider, const char *param_name, void *value);
int fi_log_enabled(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys);
int fi_log_ready(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys,
                 uint64_t *showtime);
void fi_log(const struct fi_provider *prov, enum fi_log_level level, enum fi_log_subsys subsys,
            const char *func, int line, const char *fmt, ...);
}

namespace {

TEST(Api, Version) { EXPECT_EQ(fi_version(), FI_VERSION(2, 7)); }

TEST(Api, StrerrorCoversEveryCode) {
    EXPECT_STREQ(fi_strerror(FI_EAGAIN), strerror(EAGAIN));
    EXPECT_STREQ(fi_strerror(-FI_EAGAIN), strerror(EAGAIN)) << "either sign";
    for (int code = FI_ERRNO_OFFSET; code < FI_ERRNO_MAX; ++code) {
        ASSERT_NE(fi_strerror(code), nullptr);
        EXPECT_GT(strlen(fi_strerror(code)), 3u) << code;
    }
    EXPECT_STRNE(fi_strerror(FI_ETRUNC), fi_strerror(FI_ENOKEY));
    EXPECT_STREQ(fi_strerror(100000), fi_strerror(FI_EOTHER)) << "unknown codes read as FI_EOTHER";
}

TEST(Api, FabricOpenClose) {
    fi_info *info = nullptr;
    ASSERT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr, &info), 0);
    fid_fabric *fabric = nullptr;
    int ctx = 0;
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, &ctx), 0);
    ASSERT_NE(fabric, nullptr);
    EXPECT_EQ(fabric->fid.fclass, static_cast<size_t>(FI_CLASS_FABRIC));
    EXPECT_EQ(fabric->fid.context, &ctx);
    // A fabric with an open domain cannot close.
    fid_domain *domain = nullptr;
    ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
    EXPECT_EQ(fi_close(&fabric->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&domain->fid), 0);
    EXPECT_EQ(fi_close(&fabric->fid), 0);

    ASSERT_EQ(fi_fabric2(info, &fabric, 0, nullptr), 0);
    EXPECT_EQ(fi_close(&fabric->fid), 0);
    EXPECT_EQ(fi_fabric2(info, &fabric, 1, nullptr), -FI_EBADFLAGS);
    EXPECT_EQ(fi_fabric2(nullptr, &fabric, 0, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_fabric(nullptr, &fabric, nullptr), -FI_EINVAL);

    fi_fabric_attr other = *info->fabric_attr;
    char tcp[] = "tcp";
    other.prov_name = tcp;
    EXPECT_EQ(fi_fabric(&other, &fabric, nullptr), -FI_ENODEV);
    other = *info->fabric_attr;
    char name[] = "IB-0xfe80";
    other.name = name;
    EXPECT_EQ(fi_fabric(&other, &fabric, nullptr), -FI_ENODATA);
    other = *info->fabric_attr;
    other.api_version = FI_VERSION(3, 0);
    EXPECT_EQ(fi_fabric(&other, &fabric, nullptr), -FI_ENOSYS);
    fi_freeinfo(info);
}

TEST(Api, OpenOffersNoService) {
    fid *f = nullptr;
    EXPECT_EQ(fi_open(fi_version(), "mr_cache", nullptr, 0, 0, &f, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_open(fi_version(), nullptr, nullptr, 0, 0, &f, nullptr), -FI_EINVAL);
}

// meson sets FI_UFITEST_NUM=42, FI_UFITEST_FLAG=yes, FI_UFITEST_BAD=abc, FI_UFITEST_STR=hello.
TEST(Api, Params) {
    fi_provider prov{};
    prov.name = "ufitest";
    ASSERT_EQ(fi_param_define(&prov, "num", FI_PARAM_INT, "a number %d", 1), 0);
    ASSERT_EQ(fi_param_define(&prov, "flag", FI_PARAM_BOOL, "a flag"), 0);
    ASSERT_EQ(fi_param_define(&prov, "bad", FI_PARAM_SIZE_T, "a size"), 0);
    ASSERT_EQ(fi_param_define(&prov, "str", FI_PARAM_STRING, "a string"), 0);
    ASSERT_EQ(fi_param_define(&prov, "unset", FI_PARAM_INT, "never set"), 0);
    EXPECT_EQ(fi_param_define(&prov, "num", FI_PARAM_INT, "same again"), 0);
    EXPECT_EQ(fi_param_define(&prov, "num", FI_PARAM_STRING, "other type"), -FI_EALREADY);

    int num = 0, flag = 0;
    size_t size = 0;
    char *str = nullptr;
    EXPECT_EQ(fi_param_get(&prov, "num", &num), 0);
    EXPECT_EQ(num, 42);
    EXPECT_EQ(fi_param_get(&prov, "flag", &flag), 0);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(fi_param_get(&prov, "bad", &size), -FI_EINVAL);
    EXPECT_EQ(fi_param_get(&prov, "str", &str), 0);
    ASSERT_NE(str, nullptr);
    EXPECT_STREQ(str, "hello");
    EXPECT_EQ(fi_param_get(&prov, "unset", &num), -FI_ENODATA);
    EXPECT_EQ(fi_param_get(&prov, "never_defined", &num), -FI_ENOENT);
    EXPECT_EQ(fi_param_get(&prov, nullptr, &num), -FI_EINVAL);

    fi_param *params = nullptr;
    int count = 0;
    ASSERT_EQ(fi_getparams(&params, &count), 0);
    bool saw_tls = false, saw_num = false;
    for (int i = 0; i < count; ++i) {
        ASSERT_NE(params[i].name, nullptr);
        ASSERT_NE(params[i].help_string, nullptr);
        if (strcmp(params[i].name, "UFI_TLS") == 0) saw_tls = true;
        if (strcmp(params[i].name, "FI_UFITEST_NUM") == 0) {
            saw_num = true;
            EXPECT_EQ(params[i].type, FI_PARAM_INT);
            ASSERT_NE(params[i].value, nullptr);
            EXPECT_STREQ(params[i].value, "42");
        }
    }
    EXPECT_EQ(params[count].name, nullptr) << "the array is NULL-terminated, as libfabric's";
    EXPECT_TRUE(saw_tls) << "ufi's own variables are listed";
    EXPECT_TRUE(saw_num);
    fi_freeparams(params);
}

std::string slurp(const char *path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// meson sets UFI_LOG_FILE to a file and FI_LOG_LEVEL=info for this test binary.
TEST(Api, LogThroughTheFacade) {
    const char *file = std::getenv("UFI_TEST_LOG_FILE");
    ASSERT_NE(file, nullptr);
    fi_provider prov{};
    prov.name = "someprov";
    EXPECT_EQ(fi_log_enabled(&prov, FI_LOG_WARN, FI_LOG_CORE), 1);
    EXPECT_EQ(fi_log_enabled(&prov, FI_LOG_INFO, FI_LOG_AV), 1);
    EXPECT_EQ(fi_log_enabled(&prov, FI_LOG_DEBUG, FI_LOG_AV), 0);
    auto enabled_c = reinterpret_cast<int (*)(const fi_provider *, int, int)>(&fi_log_enabled);
    EXPECT_EQ(enabled_c(&prov, FI_LOG_WARN, 99), 0) << "a C caller's unknown subsystem";
    fi_log(&prov, FI_LOG_WARN, FI_LOG_MR, "my_func", 123, "value=%d %s\n", 7, "seven");
    uint64_t showtime = 0;
    EXPECT_EQ(fi_log_ready(&prov, FI_LOG_WARN, FI_LOG_CORE, &showtime), 1);
    EXPECT_EQ(fi_log_ready(&prov, FI_LOG_WARN, FI_LOG_CORE, &showtime), 0) << "rate limited";
    const std::string text = slurp(file);
    EXPECT_NE(text.find(":someprov:mr:my_func():123<warn> value=7 seven"), std::string::npos) << text;
}

TEST(Api, ExtReports) {
    for (int topic = UFI_EXT_VERSIONS; topic <= UFI_EXT_GETINFO_EXPLAIN; ++topic) {
        ufi_ext_report *r = nullptr;
        ASSERT_EQ(ufi_ext_get_report(static_cast<ufi_ext_topic>(topic), &r), 0) << topic;
        ASSERT_NE(r, nullptr);
        for (size_t i = 0; i < r->nrecords; ++i) {
            ASSERT_NE(r->records[i].kind, nullptr);
            ASSERT_NE(r->records[i].name, nullptr);
            for (size_t f = 0; f < r->records[i].nfields; ++f) {
                ASSERT_NE(r->records[i].fields[f].key, nullptr);
                ASSERT_NE(r->records[i].fields[f].value, nullptr);
            }
        }
        ufi_ext_free_report(r);
    }
    ufi_ext_report *r = nullptr;
    // As a C caller passing an int that names no topic.
    auto as_c = reinterpret_cast<int (*)(int, ufi_ext_report **)>(&ufi_ext_get_report);
    EXPECT_EQ(as_c(99, &r), -FI_EINVAL);
    EXPECT_EQ(ufi_ext_get_report(UFI_EXT_VERSIONS, nullptr), -FI_EINVAL);
    ASSERT_EQ(ufi_ext_get_report(UFI_EXT_VERSIONS, &r), 0);
    bool found = false;
    for (size_t i = 0; i < r->nrecords; ++i) {
        if (strcmp(r->records[i].name, "libfabric_api") == 0) {
            EXPECT_STREQ(ufi_ext_field_value(&r->records[i], "version"), "2.7");
            found = true;
        }
    }
    EXPECT_TRUE(found);
    ufi_ext_free_report(r);
}

TEST(Api, ExplainAfterNoMatch) {
    fi_info *hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_MSG;
    hints->addr_format = FI_ADDR_UCX;  // (connected endpoints are addressed by socket address)
    fi_info *info = nullptr;
    ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, hints, &info), -FI_ENODATA);
    ufi_ext_report *r = nullptr;
    ASSERT_EQ(ufi_ext_get_report(UFI_EXT_GETINFO_EXPLAIN, &r), 0);
    ASSERT_GT(r->nrecords, 0u);
    EXPECT_NE(strstr(ufi_ext_field_value(&r->records[0], "text"), "FI_EP_MSG"), nullptr);
    ufi_ext_free_report(r);
    fi_freeinfo(hints);
}

}  // namespace
