// The "why -FI_ENODATA" log lines: at info level normally, at warn level when the
// application named ufi explicitly, and the explanation kept for ufi_info -f.
#include "runtime/info/getinfo.h"
#include "runtime/info/info_alloc.h"
#include "runtime/log/log.h"
#include "runtime/log/testing.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <cstring>

namespace ufi::runtime::info {
namespace {

int no_match_lines(const log::ScopedCapture &cap) {
    int n = 0;
    for (const auto &l : cap.lines()) n += l.find("fi_getinfo: no match:") != std::string::npos;
    return n;
}

int run(bool name_ufi) {
    fi_info *hints = alloc_info();
    hints->ep_attr->type = FI_EP_MSG;  // not offered: every domain is excluded
    if (name_ufi) hints->fabric_attr->prov_name = strdup("ufi");
    fi_info *out = nullptr;
    const int rc = getinfo(FI_VERSION(2, 7), nullptr, nullptr, 0, hints, &out);
    free_info(hints);
    free_info(out);
    return rc;
}

TEST(GetinfoLog, WarnOnceOnlyWhenUfiWasNamed) {
    const log::Level saved = log::level();
    log::ScopedCapture cap;
    log::set_level(log::Level::Warn);
    EXPECT_EQ(run(false), -FI_ENODATA);
    EXPECT_EQ(no_match_lines(cap), 0) << "an application probing providers sees no warnings";
    EXPECT_FALSE(last_explanation().lines.empty()) << "but ufi_info -f can still explain";
    EXPECT_FALSE(last_explanation().explicit_request);

    cap.clear();
    rearm_no_match_warning();
    EXPECT_EQ(run(true), -FI_ENODATA);
    EXPECT_EQ(no_match_lines(cap), 1) << "FI_PROVIDER=ufi / prov_name ufi: one warn line";
    EXPECT_TRUE(last_explanation().explicit_request);
    for (const auto &l : cap.lines()) {
        if (l.find("no match") != std::string::npos) {
            EXPECT_NE(l.find("<warn>"), std::string::npos) << l;
            EXPECT_NE(l.find("ufi_info -f"), std::string::npos) << "says where the rest is: " << l;
        }
    }
    // Once per process: a program probing in a loop (fabtests' fi_getinfo_test makes ~500
    // calls) gets no more warnings; the reasons stay at info level.
    cap.clear();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(run(true), -FI_ENODATA);
    EXPECT_EQ(no_match_lines(cap), 0) << "no second warning";
    EXPECT_FALSE(last_explanation().lines.empty());

    cap.clear();
    log::set_level(log::Level::Info);
    EXPECT_EQ(run(true), -FI_ENODATA);
    EXPECT_GT(no_match_lines(cap), 1) << "FI_LOG_LEVEL=info shows every reason, every time";
    cap.clear();
    EXPECT_EQ(run(false), -FI_ENODATA);
    EXPECT_GT(no_match_lines(cap), 0) << "FI_LOG_LEVEL=info shows the reasons";
    bool names_domain_and_hint = false;
    for (const auto &l : cap.lines()) {
        names_domain_and_hint |= l.find("domain ") != std::string::npos && l.find("FI_EP_MSG") != std::string::npos;
    }
    EXPECT_TRUE(names_domain_and_hint || process_env().offers.empty());
    log::set_level(saved);
}

}  // namespace
}  // namespace ufi::runtime::info
