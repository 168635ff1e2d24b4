// fi_getinfo called the way libfabric's own unit test (fabtests' fi_getinfo_test) calls it:
// every combination of primary capabilities, of domain capabilities, FI_LOCAL_COMM versus
// FI_REMOTE_COMM, and no hints at all; each returned entry is checked with fabtests' rules
// (no capability beyond the requested primaries and the optional ones, tx_attr->caps and
// rx_attr->caps hold only transmit and receive capabilities and nothing info->caps lacks).
// The capability sets below are written from fi_getinfo(3), independently of
// runtime/info/capabilities.h, so a mistake there cannot hide here.
#include "runtime/info/getinfo.h"
#include "tests/unit/info/info_fixture.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <bitset>
#include <string>
#include <vector>

namespace ufi::runtime::info {
namespace {

using testing::InfoPtr;

constexpr uint32_t kApi = FI_VERSION(2, 7);

constexpr uint64_t kPrimaryTx = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST |
                                FI_NAMED_RX_CTX | FI_HMEM | FI_COLLECTIVE;
constexpr uint64_t kPrimaryRx =
    FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_DIRECTED_RECV | FI_HMEM | FI_COLLECTIVE;
constexpr uint64_t kPrimary = kPrimaryTx | kPrimaryRx;
constexpr uint64_t kDomainCaps = FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV;
constexpr uint64_t kSecondaryTx = FI_TRIGGER | FI_FENCE | FI_RMA_PMEM;
constexpr uint64_t kSecondaryRx =
    FI_RMA_PMEM | FI_SOURCE | FI_SOURCE_ERR | FI_RMA_EVENT | FI_MULTI_RECV | FI_TRIGGER;
constexpr uint64_t kOptionalTx = FI_SEND | FI_READ | FI_WRITE | kSecondaryTx;
constexpr uint64_t kOptionalRx = FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE | kSecondaryRx;
constexpr uint64_t kOptional = kDomainCaps | kOptionalTx | kOptionalRx;

GetinfoEnv machine_env() {
    GetinfoEnv env;
    env.offers = {testing::eth0_offer(), testing::lo_offer(), testing::shm_offer()};
    env.local_addrs = {"127.0.0.1", "::1", "192.0.2.2"};
    return env;
}

std::string bits(uint64_t v) { return std::bitset<64>(v).to_string(); }

// fabtests' check_no_extra_caps / check_caps for one entry; "" when it passes.
std::string fabtests_check(const fi_info &fi, uint64_t requested) {
    if (requested != 0 && (fi.caps & ~(requested | kOptional)) != 0)
        return "info->caps has unrequested bits " + bits(fi.caps & ~(requested | kOptional));
    if ((fi.tx_attr->caps & ~(kPrimaryTx | kOptionalTx)) != 0)
        return "tx_attr->caps has non-transmit bits " + bits(fi.tx_attr->caps & ~(kPrimaryTx | kOptionalTx));
    if ((fi.tx_attr->caps & ~fi.caps) != 0) return "tx_attr->caps has bits info->caps lacks";
    if ((fi.rx_attr->caps & ~(kPrimaryRx | kOptionalRx)) != 0)
        return "rx_attr->caps has non-receive bits " + bits(fi.rx_attr->caps & ~(kPrimaryRx | kOptionalRx));
    if ((fi.rx_attr->caps & ~fi.caps) != 0) return "rx_attr->caps has bits info->caps lacks";
    if (requested == 0) return "";
    if ((fi.caps & requested) != requested) return "info->caps lacks requested bits";
    if ((fi.tx_attr->caps & (requested & kPrimaryTx)) != (requested & kPrimaryTx))
        return "tx_attr->caps lacks requested transmit primaries";
    if ((fi.rx_attr->caps & (requested & kPrimaryRx)) != (requested & kPrimaryRx))
        return "rx_attr->caps lacks requested receive primaries";
    return "";
}

// All combinations of `mask`'s bits (fabtests' ft_alloc_bit_combo), 0 included.
std::vector<uint64_t> combinations(uint64_t mask) {
    std::vector<uint64_t> set_bits;
    for (int b = 0; b < 64; ++b) {
        if (mask & (1ULL << b)) set_bits.push_back(1ULL << b);
    }
    std::vector<uint64_t> out;
    for (uint64_t m = 0; m < (1ULL << set_bits.size()); ++m) {
        uint64_t v = 0;
        for (size_t i = 0; i < set_bits.size(); ++i) {
            if (m & (1ULL << i)) v |= set_bits[i];
        }
        out.push_back(v);
    }
    return out;
}

// hints as fabtests builds them: fi_allocinfo, mode ~0, the given caps.
InfoPtr fabtests_hints(uint64_t caps) {
    InfoPtr h(alloc_info());
    h->mode = ~0ULL;
    h->caps = caps;
    return h;
}

TEST(GetinfoCaps, EveryPrimaryCombination) {  // fabtests getinfo_caps1
    int returned = 0;
    for (uint64_t caps : combinations(kPrimary)) {
        InfoPtr hints = fabtests_hints(caps);
        fi_info *info = nullptr;
        Explanation why;
        const int rc = getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, hints.get(), &info, why);
        InfoPtr out(info);
        if (rc == -FI_ENODATA) continue;  // fabtests counts these as skipped
        ASSERT_EQ(rc, 0) << bits(caps);
        for (const fi_info *fi = out.get(); fi != nullptr; fi = fi->next, ++returned) {
            EXPECT_EQ(fabtests_check(*fi, caps), "") << "requested " << bits(caps);
            if (caps != 0) {
                EXPECT_EQ(fi->caps & FI_AV_USER_ID, 0u) << "FI_AV_USER_ID is primary: on request";
            }
        }
    }
    EXPECT_GT(returned, 0);
}

TEST(GetinfoCaps, NoHints) {  // fabtests getinfo_caps2
    fi_info *info = nullptr;
    Explanation why;
    ASSERT_EQ(getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, nullptr, &info, why), 0);
    InfoPtr out(info);
    for (const fi_info *fi = out.get(); fi != nullptr; fi = fi->next) {
        EXPECT_EQ(fabtests_check(*fi, 0), "");
        // (AV user IDs on the types with an AV: a connected endpoint has none.)
        if (fi->ep_attr->type != FI_EP_MSG) {
            EXPECT_NE(fi->caps & FI_AV_USER_ID, 0u) << "no hints: everything offered, primaries too";
        }
        EXPECT_EQ(fi->tx_attr->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM | FI_AV_USER_ID), 0u)
            << "domain capabilities stay out of tx_attr->caps";
        EXPECT_EQ(fi->rx_attr->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM | FI_AV_USER_ID), 0u);
    }
}

TEST(GetinfoCaps, UserIdOnlyWhenAsked) {
    InfoPtr hints = fabtests_hints(FI_AV_USER_ID);
    fi_info *info = nullptr;
    Explanation why;
    ASSERT_EQ(getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, hints.get(), &info, why), 0);
    InfoPtr out(info);
    EXPECT_NE(out->caps & FI_AV_USER_ID, 0u);
    EXPECT_NE(out->domain_attr->caps & FI_AV_USER_ID, 0u);
    // Asking for a secondary only (FI_LOCAL_COMM): still no FI_AV_USER_ID.
    hints = fabtests_hints(FI_LOCAL_COMM);
    ASSERT_EQ(getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, hints.get(), &info, why), 0);
    out.reset(info);
    EXPECT_EQ(out->caps & FI_AV_USER_ID, 0u);
    EXPECT_EQ(out->domain_attr->caps & FI_AV_USER_ID, 0u) << "the domain follows the entry";
    EXPECT_NE(out->domain_attr->caps & FI_SHARED_AV, 0u) << "secondaries stay";
}

TEST(GetinfoCaps, DomainCapabilityCombinations) {  // fabtests getinfo_caps3
    for (uint64_t caps : combinations(kDomainCaps)) {
        InfoPtr hints = fabtests_hints(0);
        hints->domain_attr->caps = caps;
        fi_info *info = nullptr;
        Explanation why;
        const int rc = getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, hints.get(), &info, why);
        InfoPtr out(info);
        if (rc == -FI_ENODATA) continue;
        ASSERT_EQ(rc, 0);
        for (const fi_info *fi = out.get(); fi != nullptr; fi = fi->next) {
            EXPECT_EQ(fi->domain_attr->caps & caps, caps) << bits(caps);
        }
    }
}

TEST(GetinfoCaps, LocalOrRemoteComm) {  // fabtests getinfo_caps4
    bool found = false;
    for (uint64_t c : {FI_LOCAL_COMM, FI_REMOTE_COMM}) {
        InfoPtr hints = fabtests_hints(c);
        hints->domain_attr->caps = c;
        fi_info *info = nullptr;
        Explanation why;
        if (getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, hints.get(), &info, why) != 0)
            continue;
        InfoPtr out(info);
        found |= (out->caps & c) == c && (out->domain_attr->caps & c) == c;
    }
    EXPECT_TRUE(found);
}

TEST(GetinfoCaps, OlderApplicationsReceiveBitsInTxCapsAreIgnored) {
    // libfabric ignores receive bits in tx_attr->caps (and transmit bits in rx_attr->caps).
    InfoPtr hints = fabtests_hints(0);
    hints->tx_attr->caps = FI_RECV | FI_REMOTE_READ | FI_SOURCE;
    hints->rx_attr->caps = FI_SEND | FI_READ | FI_FENCE;
    fi_info *info = nullptr;
    Explanation why;
    ASSERT_EQ(getinfo_with_env(machine_env(), kApi, nullptr, {}, 0, hints.get(), &info, why), 0);
    InfoPtr out(info);
    EXPECT_EQ(fabtests_check(*out, 0), "");
}

}  // namespace
}  // namespace ufi::runtime::info
