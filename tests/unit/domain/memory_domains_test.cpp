// A domain opens each UCT memory domain once and shares it between memory registration and
// endpoint interfaces (registrations are usable only on interfaces of the same open md).
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/mr/binding.h"
#include "transports/resource.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

TEST(DomainMemoryDomains, OpenedOnceAndShared) {
    fi_info *info = nullptr;
    ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, &info), 0);
    fid_fabric *fabric = nullptr;
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
    fid_domain *domain = nullptr;
    ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
    auto *d = ufi::runtime::object_of<ufi::runtime::Domain>(domain);

    const auto &mds = d->memory_domains();
    EXPECT_EQ(&mds, &d->memory_domains()) << "one set per domain";
    std::set<std::string> names;
    for (const auto *r : d->resources) names.insert(r->md);
    EXPECT_EQ(mds.size(), names.size()) << "each md of the domain's transports, once";
    EXPECT_EQ(ufi::runtime::mr::memory_domains(d), &mds) << "registrations use the same mds";

    EXPECT_EQ(fi_close(&domain->fid), 0);
    EXPECT_EQ(fi_close(&fabric->fid), 0);
    fi_freeinfo(info);
}

}  // namespace
