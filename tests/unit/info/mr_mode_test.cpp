// mr_mode negotiation (shared/spec/fi_mr.3.md) as a table of cases.
#include "runtime/info/mr_mode.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <gtest/gtest.h>

#include <optional>

namespace ufi::runtime::info {
namespace {

struct Case {
    const char *what;
    std::optional<int> requested;
    uint32_t version;
    uint64_t caps;
    bool ok;
    int expected;
};

constexpr uint32_t v2_7 = FI_VERSION(2, 7);
constexpr uint32_t v1_4 = FI_VERSION(1, 4);
constexpr int kAllBits = FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                         FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT | FI_MR_ENDPOINT | FI_MR_HMEM |
                         FI_MR_COLLECTIVE;

const Case kCases[] = {
    {"no domain hints: nothing required", std::nullopt, v2_7, 0, true, 0},
    {"no domain hints, 1.4 caller: scalable", std::nullopt, v1_4, 0, true, FI_MR_SCALABLE},
    {"-1 is a request (every bit, BASIC and SCALABLE too), not 'no hint'", -1, v2_7, 0, false, 0},
    {"-1 from a 1.4 caller is no legacy value either", -1, v1_4, 0, false, 0},
    {"unspec (no bits) is accepted as is", 0, v2_7, 0, true, 0},
    {"LOCAL is never required", FI_MR_LOCAL, v2_7, 0, true, 0},
    {"RAW is never required", FI_MR_RAW, v2_7, 0, true, 0},
    {"LOCAL|RAW cleared, VIRT_ADDR kept", FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR, v2_7, 0, true,
     FI_MR_VIRT_ADDR},
    {"MPICH-style offer", FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_LOCAL, v2_7, 0,
     true, FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY},
    {"fi_info's offer: all bits", kAllBits, v2_7, 0, true,
     FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY},
    {"RMA_EVENT kept only with FI_RMA_EVENT", FI_MR_RMA_EVENT, v2_7, FI_RMA | FI_RMA_EVENT, true,
     FI_MR_RMA_EVENT},
    {"RMA_EVENT cleared without FI_RMA_EVENT", FI_MR_RMA_EVENT, v2_7, FI_RMA, true, 0},
    {"ENDPOINT, MMU_NOTIFY, HMEM, COLLECTIVE cleared",
     FI_MR_ENDPOINT | FI_MR_MMU_NOTIFY | FI_MR_HMEM | FI_MR_COLLECTIVE, v2_7, 0, true, 0},
    {"BASIC alone is kept", FI_MR_BASIC, v2_7, 0, true, FI_MR_BASIC},
    {"SCALABLE alone is kept", FI_MR_SCALABLE, v2_7, 0, true, FI_MR_SCALABLE},
    {"BASIC for a 1.4 caller", FI_MR_BASIC, v1_4, 0, true, FI_MR_BASIC},
    {"BASIC mixed with bits is invalid", FI_MR_BASIC | FI_MR_LOCAL, v2_7, 0, false, 0},
    {"SCALABLE mixed with bits is invalid", FI_MR_SCALABLE | FI_MR_PROV_KEY, v2_7, 0, false, 0},
    {"1.4 caller with 1.5 bits is invalid", FI_MR_LOCAL, v1_4, 0, false, 0},
    {"1.4 caller, unspec: scalable", 0, v1_4, 0, true, FI_MR_SCALABLE},
};

TEST(MrMode, TableOfCases) {
    for (const Case &c : kCases) {
        SCOPED_TRACE(c.what);
        const MrModeOutcome out = negotiate_mr_mode(c.requested, c.version, c.caps);
        EXPECT_EQ(out.ok, c.ok) << out.reason;
        if (c.ok) {
            EXPECT_EQ(out.mr_mode, c.expected);
            EXPECT_TRUE(out.reason.empty());
        } else {
            EXPECT_FALSE(out.reason.empty());
        }
    }
}

TEST(MrMode, NeverRequiresLocalOrRaw) {
    // Whatever an application offers, ufi's answer never contains LOCAL or RAW.
    for (int bits = 0; bits < (1 << 12); bits += 4) {  // skip the BASIC/SCALABLE values
        const MrModeOutcome out = negotiate_mr_mode(bits, v2_7, FI_RMA | FI_RMA_EVENT);
        ASSERT_TRUE(out.ok) << bits;
        EXPECT_EQ(out.mr_mode & (FI_MR_LOCAL | FI_MR_RAW), 0) << bits;
        EXPECT_EQ(out.mr_mode & ~bits, 0) << "never adds a bit the application did not offer";
    }
}

}  // namespace
}  // namespace ufi::runtime::info
