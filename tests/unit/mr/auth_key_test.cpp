// Memory regions on FI_AV_AUTH_KEY domains: fi_mr_reg/fi_mr_regv are refused, fi_mr_regattr
// takes a struct fi_mr_auth_key naming the AV, and the MR holds the AV's keys while enabled
// (FI_AUTH_KEY: only the one named by src_addr).
#include "mr_fixture.h"

#include "runtime/mr/mr.h"

namespace ufi::test {
namespace {

class AuthKeyMr : public MrFixture {
  protected:
    // A domain opened with FI_AV_AUTH_KEY and an AV on it; skips when either is not there yet.
    void open_av_key_domain(int mr_mode = 0) {
        fi_info *info = fi_dupinfo(info_);
        info->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
        info->domain_attr->auth_key = nullptr;
        const int rc = fi_domain(fabric_, info, &domain_, nullptr);
        fi_freeinfo(info);
        ASSERT_EQ(rc, 0) << "fi_domain refuses FI_AV_AUTH_KEY";
        domains_.push_back(domain_);
        runtime_domain(domain_)->mr_mode = mr_mode;
        ASSERT_TRUE(runtime_domain(domain_)->av_auth_keys);
        fi_av_attr attr{};
        attr.type = FI_AV_TABLE;
        ASSERT_EQ(fi_av_open(domain_, &attr, &av_, nullptr), 0);
    }
    void TearDown() override {
        if (av_ != nullptr) {
            EXPECT_EQ(fi_close(&av_->fid), 0);
        }
        MrFixture::TearDown();
    }
    int regattr(fi_mr_auth_key *key, size_t key_size, uint64_t flags, fid_mr **mr,
                uint64_t requested = 1) {
        iov_ = {buf_.data(), 4096};
        fi_mr_attr attr{};
        attr.mr_iov = &iov_;
        attr.iov_count = 1;
        attr.access = FI_REMOTE_READ;
        attr.requested_key = requested;
        attr.auth_key = reinterpret_cast<uint8_t *>(key);
        attr.auth_key_size = key_size;
        return fi_mr_regattr(domain_, &attr, flags, mr);
    }

    fid_domain *domain_ = nullptr;
    fid_av *av_ = nullptr;
    iovec iov_{};
    std::vector<char> buf_ = std::vector<char>(8192);
};

TEST_F(AuthKeyMr, RegAndRegvAreRefused) {
    open_av_key_domain();
    fid_mr *mr = nullptr;
    EXPECT_EQ(fi_mr_reg(domain_, buf_.data(), 64, FI_REMOTE_READ, 0, 1, 0, &mr, nullptr),
              -FI_EINVAL);
    iovec iov{buf_.data(), 64};
    EXPECT_EQ(fi_mr_regv(domain_, &iov, 1, FI_REMOTE_READ, 0, 1, 0, &mr, nullptr), -FI_EINVAL);
}

TEST_F(AuthKeyMr, RegattrNeedsAnFiMrAuthKey) {
    open_av_key_domain();
    fid_mr *mr = nullptr;
    fi_mr_auth_key key{av_, FI_ADDR_UNSPEC};
    EXPECT_EQ(regattr(&key, sizeof key - 1, 0, &mr), -FI_EINVAL)
        << "auth_key_size must be sizeof(fi_mr_auth_key)";
    EXPECT_EQ(regattr(&key, 0, 0, &mr), -FI_EINVAL);
    EXPECT_EQ(regattr(nullptr, sizeof key, 0, &mr), -FI_EINVAL);
    fi_mr_auth_key no_av{nullptr, FI_ADDR_UNSPEC};
    EXPECT_EQ(regattr(&no_av, sizeof no_av, 0, &mr), -FI_EINVAL);
    ASSERT_EQ(regattr(&key, sizeof key, 0, &mr), 0) << "every key of the AV";
    EXPECT_EQ(fi_close(&av_->fid), -FI_EBUSY) << "the MR uses the AV until it closes";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(AuthKeyMr, AuthKeyFlagRestrictsToOneKey) {
    open_av_key_domain();
    const uint8_t k1[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const uint8_t k2[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    fi_addr_t a1 = FI_ADDR_NOTAVAIL, a2 = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insert_auth_key(av_, k1, sizeof k1, &a1, 0), 0);
    ASSERT_EQ(fi_av_insert_auth_key(av_, k2, sizeof k2, &a2, 0), 0);
    fid_mr *mr = nullptr;
    fi_mr_auth_key key{av_, a1};
    EXPECT_EQ(regattr(&key, sizeof key, FI_AUTH_KEY, &mr), 0);
    auto *m = static_cast<runtime::mr::Mr *>(mr);
    ASSERT_EQ(m->held_auth_keys.size(), 1u);
    EXPECT_EQ(m->held_auth_keys[0], a1);
    EXPECT_EQ(fi_av_remove(av_, &a1, 1, FI_AUTH_KEY), -FI_EBUSY) << "held by the MR";
    EXPECT_EQ(fi_av_remove(av_, &a2, 1, FI_AUTH_KEY), 0) << "not held";
    fi_mr_auth_key gone{av_, a2};
    fid_mr *mr2 = nullptr;
    EXPECT_EQ(regattr(&gone, sizeof gone, FI_AUTH_KEY, &mr2, 2), -FI_EINVAL)
        << "no such key in the AV";
    fi_mr_auth_key unspec{av_, FI_ADDR_UNSPEC};
    EXPECT_EQ(regattr(&unspec, sizeof unspec, FI_AUTH_KEY, &mr2, 2), -FI_EINVAL);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    EXPECT_EQ(fi_av_remove(av_, &a1, 1, FI_AUTH_KEY), 0) << "released with the MR";
}

TEST_F(AuthKeyMr, DisabledMrsTakeKeysWhenEnabled) {
    open_av_key_domain(FI_MR_RMA_EVENT);
    const uint8_t k1[8] = {3};
    fi_addr_t a1 = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insert_auth_key(av_, k1, sizeof k1, &a1, 0), 0);
    fid_mr *mr = nullptr;
    fi_mr_auth_key key{av_, FI_ADDR_UNSPEC};
    ASSERT_EQ(regattr(&key, sizeof key, FI_RMA_EVENT, &mr), 0);
    auto *m = static_cast<runtime::mr::Mr *>(mr);
    EXPECT_TRUE(m->held_auth_keys.empty()) << "not enabled yet";
    const uint8_t k2[8] = {4};
    fi_addr_t a2 = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(fi_av_insert_auth_key(av_, k2, sizeof k2, &a2, 0), 0);
    ASSERT_EQ(fi_mr_enable(mr), 0);
    EXPECT_EQ(m->held_auth_keys.size(), 2u) << "the keys present at fi_mr_enable";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

}  // namespace
}  // namespace ufi::test
