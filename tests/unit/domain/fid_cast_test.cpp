// Handles are ufi's only when their fi_ops table is one of ufi's: a foreign object of the
// right class (another library's, or a fake) is refused, never cast.
#include "runtime/cntr/binding.h"
#include "runtime/cq/binding.h"
#include "runtime/eq/binding.h"
#include "runtime/fid_cast.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <gtest/gtest.h>

namespace {

TEST(FidCast, ForeignObjectsOfTheRightClassAreRefused) {
    fi_ops foreign_ops{};
    foreign_ops.size = sizeof(fi_ops);
    fid_cq fake_cq{};
    fake_cq.fid.fclass = FI_CLASS_CQ;
    fake_cq.fid.ops = &foreign_ops;
    EXPECT_EQ(ufi::runtime::cq::cq_of(&fake_cq), nullptr);
    fid_cntr fake_cntr{};
    fake_cntr.fid.fclass = FI_CLASS_CNTR;
    fake_cntr.fid.ops = &foreign_ops;
    EXPECT_EQ(ufi::runtime::cntr::cntr_of(&fake_cntr), nullptr);
    fid_eq fake_eq{};
    fake_eq.fid.fclass = FI_CLASS_EQ;
    fake_eq.fid.ops = nullptr;
    EXPECT_EQ(ufi::runtime::eq::eq_of(&fake_eq), nullptr);
    EXPECT_FALSE(ufi::runtime::is_ufi_fi_ops(&foreign_ops));
    EXPECT_EQ(ufi::runtime::cq::cq_of(static_cast<fid_t>(nullptr)), nullptr);
}

TEST(FidCast, UfiObjectsAreFound) {
    fi_info *info = nullptr;
    ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, &info), 0);
    fid_fabric *fabric = nullptr;
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
    fid_domain *domain = nullptr;
    ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
    fi_cq_attr attr{};
    fid_cq *cq = nullptr;
    ASSERT_EQ(fi_cq_open(domain, &attr, &cq, nullptr), 0);
    EXPECT_NE(ufi::runtime::cq::cq_of(cq), nullptr);
    EXPECT_TRUE(ufi::runtime::is_ufi_fi_ops(cq->fid.ops));
    EXPECT_EQ(ufi::runtime::cntr::cntr_of(&cq->fid), nullptr) << "wrong class";
    EXPECT_TRUE(ufi::runtime::is_ufi_fi_ops(cq->fid.ops, FI_CLASS_CQ));
    // A ufi table under another class's label is not that class's: a CQ's ops in a handle
    // that claims to be a counter are refused even though the table is ufi's.
    EXPECT_FALSE(ufi::runtime::is_ufi_fi_ops(cq->fid.ops, FI_CLASS_CNTR));
    fid_cntr disguised{};
    disguised.fid.fclass = FI_CLASS_CNTR;
    disguised.fid.ops = cq->fid.ops;
    EXPECT_EQ(ufi::runtime::cntr::cntr_of(&disguised), nullptr);
    EXPECT_FALSE(ufi::runtime::is_ufi_fi_ops(cq->fid.ops, 1000)) << "a class beyond the index";
    EXPECT_EQ(fi_close(&cq->fid), 0);
    EXPECT_EQ(fi_close(&domain->fid), 0);
    EXPECT_EQ(fi_close(&fabric->fid), 0);
    fi_freeinfo(info);
}

}  // namespace
