// fi_av_open, fi_close, fi_av_bind, fi_control and the fi_addr_t helpers: attributes, types,
// flags, and every error the page names for them.
#include "av_fixture.h"

#include "runtime/av/addr_encoding.h"
#include "runtime/av/binding.h"

namespace ufi::av_test {
namespace {

namespace enc = runtime::av::encoding;

TEST_F(AvTest, OpenTableAndClose) {
    open_domain();
    int ctx = 0;
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.count = 16;
    fid_av *av = open_av(attr, &ctx);
    ASSERT_NE(av, nullptr);
    EXPECT_EQ(av->fid.fclass, static_cast<size_t>(FI_CLASS_AV));
    EXPECT_EQ(av->fid.context, &ctx);
    ASSERT_NE(av->ops, nullptr);
    EXPECT_EQ(av->ops->size, sizeof(fi_ops_av));
    EXPECT_NE(av->ops->lookup2, nullptr);
}

TEST_F(AvTest, UnspecReportsTheTypeChosen) {
    open_domain();
    fi_av_attr attr{};
    attr.type = FI_AV_UNSPEC;
    fid_av *av = nullptr;
    ASSERT_EQ(fi_av_open(domain_, &attr, &av, nullptr), 0);
    EXPECT_EQ(attr.type, FI_AV_TABLE);
    EXPECT_EQ(fi_close(&av->fid), 0);
}

TEST_F(AvTest, MapBehavesAsTableAndStaysMap) {
    open_domain();
    fi_av_attr attr{};
    attr.type = FI_AV_MAP;
    fid_av *av = nullptr;
    ASSERT_EQ(fi_av_open(domain_, &attr, &av, nullptr), 0);
    EXPECT_EQ(attr.type, FI_AV_MAP) << "the type asked for is reported";
    const auto blobs = make_blobs(0, 3);
    fi_addr_t out[3];
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 3, out, 0, nullptr), 3);
    EXPECT_EQ(out[0], 0u);
    EXPECT_EQ(out[1], 1u);
    EXPECT_EQ(out[2], 2u);
    EXPECT_EQ(fi_close(&av->fid), 0);
}

TEST_F(AvTest, TableOnAMapDomainIsInvalid) {
    open_domain({.av_type = FI_AV_MAP});
    ASSERT_EQ(info_->domain_attr->av_type, FI_AV_MAP);
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    fid_av *av = nullptr;
    WarnCapture w;
    EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
    EXPECT_EQ(w.count(), 1u);
    attr.type = FI_AV_UNSPEC;
    ASSERT_EQ(fi_av_open(domain_, &attr, &av, nullptr), 0);
    EXPECT_EQ(attr.type, FI_AV_MAP);
    EXPECT_EQ(fi_close(&av->fid), 0);
}

TEST_F(AvTest, BadAttributes) {
    open_domain();
    fid_av *av = nullptr;
    fi_av_attr attr{};
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_open(domain_, nullptr, &av, nullptr), -FI_EINVAL);
        EXPECT_EQ(w.count(), 1u);
        EXPECT_TRUE(w.contains("attr"));
    }
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_open(domain_, &attr, nullptr, nullptr), -FI_EINVAL);
        EXPECT_EQ(w.count(), 1u);
    }
    {
        WarnCapture w;
        int bad_type = 77;
        std::memcpy(&attr.type, &bad_type, sizeof bad_type);  // as a C program could
        EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
        EXPECT_EQ(w.count(), 1u);
        EXPECT_TRUE(w.contains("type"));
        attr.type = FI_AV_TABLE;
    }
    for (int bits : {-1, 33, 64}) {
        WarnCapture w;
        attr.rx_ctx_bits = bits;
        EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL) << bits;
        EXPECT_EQ(w.count(), 1u);
        EXPECT_TRUE(w.contains("rx_ctx_bits"));
    }
    attr.rx_ctx_bits = 0;
    {
        WarnCapture w;
        attr.flags = FI_MORE;  // not an open flag
        EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EBADFLAGS);
        EXPECT_EQ(w.count(), 1u);
        EXPECT_TRUE(w.contains("flags"));
    }
    {
        WarnCapture w;
        attr.flags = FI_READ;  // read-only needs a name
        EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
        EXPECT_EQ(w.count(), 1u);
    }
    {
        WarnCapture w;
        attr.flags = 0;
        attr.name = "";
        EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
        EXPECT_EQ(w.count(), 1u);
        attr.name = nullptr;
    }
    EXPECT_EQ(domain_->ops->av_open(nullptr, &attr, &av, nullptr), -FI_EINVAL)
        << "the ops entry checks the domain";
}

TEST_F(AvTest, AcceptedFlagsAndHints) {
    open_domain();
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.count = 1000;
    attr.ep_per_node = 4;
    attr.rx_ctx_bits = 32;
    attr.flags = FI_SYMMETRIC | FI_AV_USER_ID;
    EXPECT_NE(open_av(attr), nullptr);
    attr.flags = FI_EVENT;
    attr.count = 0;
    attr.rx_ctx_bits = 4;
    EXPECT_NE(open_av(attr), nullptr);
}

TEST_F(AvTest, RxAndGroupAddressesKeepTheEntry) {
    open_domain();
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.rx_ctx_bits = 8;
    fid_av *av = open_av(attr);
    const auto blobs = make_blobs(0, 5);
    fi_addr_t out[5];
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 5, out, 0, nullptr), 5);
    const fi_addr_t rx = fi_rx_addr(out[4], 200, 8);
    EXPECT_EQ(rx >> 56, 200u) << "the rx index sits in the top rx_ctx_bits bits";
    EXPECT_EQ(enc::low(rx), out[4]) << "the entry index is untouched";
    const fi_addr_t grp = fi_group_addr(out[3], 0x1234);
    EXPECT_EQ(grp >> 32, 0x1234u);
    EXPECT_EQ(enc::low(grp), out[3]);
    // Lookups read the entry through both.
    uint8_t buf[256];
    size_t len = sizeof buf;
    ASSERT_EQ(fi_av_lookup(av, rx, buf, &len), 0);
    size_t len2 = sizeof buf;
    uint8_t buf2[256];
    ASSERT_EQ(fi_av_lookup(av, out[4], buf2, &len2), 0);
    EXPECT_EQ(len, len2);
    EXPECT_EQ(std::memcmp(buf, buf2, len), 0);
    // ufi has no peer groups (max_group_id 0): a group id is bits this AV gives no meaning.
    len = sizeof buf;
    EXPECT_EQ(fi_av_lookup(av, grp, buf, &len), -FI_EINVAL);
    // The widest rx_ctx_bits still leaves the index alone.
    EXPECT_EQ(enc::low(fi_rx_addr(out[2], 0x7fffffff, 32)), out[2]);
}

TEST_F(AvTest, CloseWithAttachedEndpointIsBusy) {
    open_domain();
    fid_av *av = open_av();
    auto *a = runtime::av::av_of(av);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(runtime::av::av_of(&domain_->fid), nullptr) << "a domain is not an AV";
    runtime::av::attach_endpoint(a);
    {
        WarnCapture w;
        EXPECT_EQ(fi_close(&av->fid), -FI_EBUSY);
        EXPECT_EQ(w.count(), 1u);
    }
    runtime::av::detach_endpoint(a);
    close_av(av);
}

TEST_F(AvTest, DomainWithOpenAvIsBusy) {
    open_domain();
    fid_av *av = open_av();
    EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);
    close_av(av);
}

TEST_F(AvTest, BindNeedsAnEqAndZeroFlags) {
    open_domain();
    fid_av *av = open_av();
    WarnCapture w;
    EXPECT_EQ(av_bind(av, &domain_->fid, 0), -FI_EINVAL) << "a domain is not an EQ";
    EXPECT_EQ(av_bind(av, nullptr, 0), -FI_EINVAL);
    EXPECT_EQ(w.count(), 2u);
    fi_eq_attr eq_attr{};
    eq_attr.size = 16;
    fid_eq *eq = nullptr;
    const int rc = fi_eq_open(fabric_, &eq_attr, &eq, nullptr);
    ASSERT_EQ(rc, 0) << "fi_eq_open: " << fi_strerror(-rc);
    EXPECT_EQ(av_bind(av, &eq->fid, FI_REG_MR), -FI_EBADFLAGS);
    EXPECT_EQ(av_bind(av, &eq->fid, 0), 0);
    EXPECT_EQ(av_bind(av, &eq->fid, 0), -FI_EINVAL) << "one EQ per AV";
    EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY) << "the AV holds the EQ";
    close_av(av);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(AvTest, ControlOpsOpenAndAvSetAreNotSupported) {
    open_domain();
    fid_av *av = open_av();
    int arg = 0;
    EXPECT_EQ(fi_control(&av->fid, FI_GETOPSFLAG, &arg), -FI_ENOSYS);
    void *ops = nullptr;
    EXPECT_EQ(fi_open_ops(&av->fid, "x", 0, &ops, nullptr), -FI_ENOSYS);
    fi_av_set_attr set_attr{};
    fid_av_set *set = nullptr;
    EXPECT_EQ(av->ops->av_set(av, &set_attr, &set, nullptr), -FI_ENOSYS);
}

TEST_F(AvTest, EveryThreadingModel) {
    for (int t : {FI_THREAD_SAFE, FI_THREAD_DOMAIN, FI_THREAD_COMPLETION, FI_THREAD_ENDPOINT}) {
        open_domain({.threading = t});
        fid_av *av = open_av();
        const auto blobs = make_blobs(0, 10);
        EXPECT_EQ(fi_av_insert(av, blobs.data(), 10, nullptr, 0, nullptr), 10);
        uint8_t buf[128];
        size_t len = sizeof buf;
        EXPECT_EQ(fi_av_lookup(av, 9, buf, &len), 0);
        TearDown();
    }
}

TEST(AvEncoding, Layout) {
    EXPECT_TRUE(enc::is_key_handle(enc::key_handle(3)));
    EXPECT_FALSE(enc::is_key_handle(enc::entry_addr(enc::kMaxEntryIndex)));
    EXPECT_EQ(enc::slot_of(enc::key_handle(3)), 3u);
    EXPECT_TRUE(enc::is_key_handle(FI_ADDR_NOTAVAIL));
    EXPECT_FALSE(enc::is_canonical(FI_ADDR_NOTAVAIL));
    EXPECT_TRUE(enc::is_canonical(enc::key_handle(255)));
}

}  // namespace
}  // namespace ufi::av_test
