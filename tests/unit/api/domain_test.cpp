// fi_domain / fi_domain2 / fi_domain_bind / fi_close ordering through the public API.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace {

class DomainTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, &info_), 0);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
    }
    void TearDown() override {
        if (fabric_) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        fi_freeinfo(info_);
    }
    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
};

TEST_F(DomainTest, OpenEveryOfferedDomain) {
    for (fi_info *cur = info_; cur != nullptr; cur = cur->next) {
        fid_domain *d = nullptr;
        int ctx = 0;
        ASSERT_EQ(fi_domain(fabric_, cur, &d, &ctx), 0) << cur->domain_attr->name;
        EXPECT_EQ(d->fid.fclass, static_cast<size_t>(FI_CLASS_DOMAIN));
        EXPECT_EQ(d->fid.context, &ctx);
        ASSERT_NE(d->ops, nullptr);
        ASSERT_NE(d->mr, nullptr);
        EXPECT_GE(d->ops->size, sizeof(fi_ops_domain));
        EXPECT_EQ(fi_close(&d->fid), 0);
    }
}

TEST_F(DomainTest, Domain2AndFlags) {
    fid_domain *d = nullptr;
    ASSERT_EQ(fi_domain2(fabric_, info_, &d, 0, nullptr), 0);
    EXPECT_EQ(fi_close(&d->fid), 0);
    EXPECT_EQ(fi_domain2(fabric_, info_, &d, FI_PEER, nullptr), -FI_EBADFLAGS);
}

TEST_F(DomainTest, BadArguments) {
    fid_domain *d = nullptr;
    EXPECT_EQ(fi_domain(fabric_, nullptr, &d, nullptr), -FI_EINVAL);
    fi_info *copy = fi_dupinfo(info_);
    free(copy->domain_attr->name);
    copy->domain_attr->name = strdup("no-such-domain");
    EXPECT_EQ(fi_domain(fabric_, copy, &d, nullptr), -FI_ENODATA);
    free(copy->domain_attr->name);
    copy->domain_attr->name = strdup(info_->domain_attr->name);
    copy->ep_attr->type = FI_EP_MSG;  // edited after fi_getinfo: not something ufi offers
    EXPECT_EQ(fi_domain(fabric_, copy, &d, nullptr), -FI_ENODATA);
    fi_freeinfo(copy);
}

TEST_F(DomainTest, AttributesFollowTheInfo) {
    fi_info *copy = fi_dupinfo(info_);
    copy->domain_attr->threading = FI_THREAD_DOMAIN;
    fid_domain *d = nullptr;
    ASSERT_EQ(fi_domain(fabric_, copy, &d, nullptr), 0);
    EXPECT_EQ(fi_close(&d->fid), 0);
    fi_freeinfo(copy);
}

TEST_F(DomainTest, AuthKeys) {
    fid_domain *d = nullptr;
    // AV-level keys.
    fi_info *copy = fi_dupinfo(info_);
    copy->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
    ASSERT_EQ(fi_domain(fabric_, copy, &d, nullptr), 0);
    EXPECT_EQ(fi_close(&d->fid), 0);
    // A classic per-domain key.
    copy->domain_attr->auth_key_size = 8;
    copy->domain_attr->auth_key = static_cast<uint8_t *>(malloc(8));
    memset(copy->domain_attr->auth_key, 0x5a, 8);
    ASSERT_EQ(fi_domain(fabric_, copy, &d, nullptr), 0);
    EXPECT_EQ(fi_close(&d->fid), 0);
    // Keys are 1 to 64 bytes: anything else is -FI_EINVAL.
    free(copy->domain_attr->auth_key);
    copy->domain_attr->auth_key = static_cast<uint8_t *>(calloc(1, 65));
    copy->domain_attr->auth_key_size = 65;
    EXPECT_EQ(fi_domain(fabric_, copy, &d, nullptr), -FI_EINVAL);
    free(copy->domain_attr->auth_key);
    copy->domain_attr->auth_key = nullptr;
    copy->domain_attr->auth_key_size = 4;
    EXPECT_EQ(fi_domain(fabric_, copy, &d, nullptr), -FI_EINVAL) << "a size without a key";
    copy->domain_attr->auth_key_size = 0;
    fi_freeinfo(copy);
    // fi_getinfo advertises room for AV-level keys.
    EXPECT_GE(info_->domain_attr->max_ep_auth_key, 1u);
}

TEST_F(DomainTest, BindEq) {
    fid_domain *d = nullptr;
    ASSERT_EQ(fi_domain(fabric_, info_, &d, nullptr), 0);
    fi_eq_attr attr{};
    attr.size = 8;
    fid_eq *eq = nullptr;
    ASSERT_EQ(fi_eq_open(fabric_, &attr, &eq, nullptr), 0);
    EXPECT_EQ(fi_domain_bind(d, &eq->fid, FI_SEND), -FI_EBADFLAGS);
    EXPECT_EQ(fi_domain_bind(d, &d->fid, FI_REG_MR), -FI_EINVAL) << "only an EQ binds";
    ASSERT_EQ(fi_domain_bind(d, &eq->fid, FI_REG_MR), 0);
    EXPECT_EQ(fi_domain_bind(d, &eq->fid, FI_REG_MR), -FI_EINVAL) << "one EQ per domain";
    EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY) << "the domain holds its EQ";
    EXPECT_EQ(fi_close(&d->fid), 0);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(DomainTest, Trywait) {
    fi_eq_attr attr{};
    attr.size = 8;
    attr.wait_obj = FI_WAIT_FD;
    attr.flags = FI_WRITE;
    fid_eq *eq = nullptr;
    ASSERT_EQ(fi_eq_open(fabric_, &attr, &eq, nullptr), 0);
    fid *fids[] = {&eq->fid};
    EXPECT_EQ(fi_trywait(fabric_, fids, 1), 0) << "nothing to read: may sleep on the fd";
    fi_eq_entry entry{};
    ASSERT_EQ(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof entry, 0), static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(fi_trywait(fabric_, fids, 1), -FI_EAGAIN) << "an event is waiting";
    EXPECT_EQ(fi_trywait(fabric_, nullptr, 1), -FI_EINVAL);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(DomainTest, GetinfoForAnOpenDomain) {
    fid_domain *d = nullptr;
    ASSERT_EQ(fi_domain(fabric_, info_, &d, nullptr), 0);
    fi_info *hints = fi_allocinfo();
    hints->domain_attr->domain = d;
    fi_info *out = nullptr;
    ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, hints, &out), 0);
    for (fi_info *cur = out; cur; cur = cur->next) {
        EXPECT_STREQ(cur->domain_attr->name, info_->domain_attr->name) << "only that domain";
    }
    fi_freeinfo(out);
    hints->domain_attr->domain = nullptr;
    fi_freeinfo(hints);
    EXPECT_EQ(fi_close(&d->fid), 0);
}

}  // namespace
