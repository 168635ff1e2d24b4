// The "why -FI_ENODATA" log lines: at info level only (also when the application named ufi),
// and the explanation kept for ufi_info -f.
#include "runtime/info/getinfo.h"
#include "runtime/info/info_alloc.h"
#include "base/log/log.h"
#include "base/log/testing.h"

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
    hints->ep_attr->type = FI_EP_MSG;  // with ufi's own address format: every domain is excluded
    hints->addr_format = FI_ADDR_UCX;
    if (name_ufi) hints->fabric_attr->prov_name = strdup("ufi");
    fi_info *out = nullptr;
    const int rc = getinfo(FI_VERSION(2, 7), nullptr, nullptr, 0, hints, &out);
    free_info(hints);
    free_info(out);
    return rc;
}

// A miss is never a warning (MPICH's test harness counts any stderr output as a failure, and
// it probes with several capability sets), also when the application named ufi.
TEST(GetinfoLog, NoMatchIsNoWarningEvenWhenUfiWasNamed) {
    const log::Level saved = log::level();
    log::ScopedCapture cap;
    log::set_level(log::Level::Warn);
    EXPECT_EQ(run(false), -FI_ENODATA);
    EXPECT_EQ(no_match_lines(cap), 0) << "an application probing providers sees no warnings";
    EXPECT_FALSE(last_explanation().lines.empty()) << "but ufi_info -f can still explain";
    EXPECT_FALSE(last_explanation().explicit_request);

    cap.clear();
    for (int i = 0; i < 5; ++i) EXPECT_EQ(run(true), -FI_ENODATA);
    EXPECT_EQ(no_match_lines(cap), 0) << "FI_PROVIDER=ufi / prov_name ufi: still no warning";
    EXPECT_TRUE(last_explanation().explicit_request);
    EXPECT_FALSE(last_explanation().lines.empty());
    EXPECT_TRUE(cap.lines().empty()) << "nothing else at warn either";

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
