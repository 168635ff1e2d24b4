// A fabric and a domain for MR tests, optionally with a synthetic mr_mode (and extra caps)
// set on the runtime Domain before its first MR call: fi_getinfo only ever keeps VIRT_ADDR,
// ALLOCATED and PROV_KEY, so the other bits' behaviour is reached this way (white-box).
#pragma once

#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/mr/limits.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ufi::test {

class MrFixture : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, &info_), 0);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
    }
    void TearDown() override {
        for (auto it = domains_.rbegin(); it != domains_.rend(); ++it) {
            EXPECT_EQ(fi_close(&(*it)->fid), 0);
        }
        if (fabric_ != nullptr) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        fi_freeinfo(info_);
    }

    // A domain on the first offer. mr_mode < 0 keeps the negotiated value. The runtime's
    // mr_iov_limit is raised to ufi's (the lead's fi_getinfo reports it).
    fid_domain *open_domain(int mr_mode = -1, uint64_t extra_caps = 0) {
        fid_domain *d = nullptr;
        EXPECT_EQ(fi_domain(fabric_, info_, &d, nullptr), 0);
        if (d == nullptr) return nullptr;
        runtime::Domain *rd = runtime_domain(d);
        if (mr_mode >= 0) rd->mr_mode = mr_mode;
        rd->caps |= extra_caps;
        rd->info->domain_attr->mr_iov_limit = runtime::mr::kMrIovLimit;
        domains_.push_back(d);
        return d;
    }
    static runtime::Domain *runtime_domain(fid_domain *d) {
        return runtime::object_of<runtime::Domain>(&d->fid, FI_CLASS_DOMAIN);
    }

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    std::vector<fid_domain *> domains_;
};

// Closes an MR at scope exit (tests keep going after a failed expectation).
struct MrCloser {
    fid_mr *mr = nullptr;
    ~MrCloser() {
        if (mr != nullptr) fi_close(&mr->fid);
    }
};

}  // namespace ufi::test
