// Authorization keys in the AV (domains opened with auth_key_size FI_AV_AUTH_KEY):
// fi_av_insert_auth_key, inserts with FI_AUTH_KEY, fi_av_lookup_auth_key, removal and holds,
// user IDs of key handles.
#include "av_fixture.h"

#include "runtime/av/addr_encoding.h"
#include "runtime/av/binding.h"

namespace ufi::av_test {
namespace {

namespace enc = runtime::av::encoding;

class AvKeysTest : public AvTest {
  protected:
    void SetUp() override { open_domain({.auth_keys = true}); }
};

TEST_F(AvKeysTest, InsertAndLookupKeys) {
    fid_av *av = open_av();
    const uint8_t k1[] = {1, 2, 3, 4};
    std::vector<uint8_t> k2(64, 0x5a);
    fi_addr_t h1 = 0, h2 = 0;
    ASSERT_EQ(fi_av_insert_auth_key(av, k1, sizeof k1, &h1, 0), 0);
    ASSERT_EQ(fi_av_insert_auth_key(av, k2.data(), k2.size(), &h2, 0), 0);
    EXPECT_TRUE(enc::is_key_handle(h1));
    EXPECT_NE(h1, h2);
    uint8_t buf[64];
    size_t len = sizeof buf;
    ASSERT_EQ(fi_av_lookup_auth_key(av, h1, buf, &len), 0);
    EXPECT_EQ(len, sizeof k1);
    EXPECT_EQ(std::memcmp(buf, k1, sizeof k1), 0);
    len = 10;  // truncation: *len is the size needed
    std::memset(buf, 0, sizeof buf);
    ASSERT_EQ(fi_av_lookup_auth_key(av, h2, buf, &len), 0);
    EXPECT_EQ(len, 64u);
    EXPECT_EQ(buf[9], 0x5a);
    EXPECT_EQ(buf[10], 0);
    // A key handle is not an address.
    len = sizeof buf;
    EXPECT_EQ(fi_av_lookup(av, h1, buf, &len), -FI_EINVAL);
}

TEST_F(AvKeysTest, KeyErrors) {
    fid_av *av = open_av();
    const uint8_t k[80] = {};
    fi_addr_t h = 0;
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insert_auth_key(av, k, 0, &h, 0), -FI_EINVAL);
        EXPECT_EQ(fi_av_insert_auth_key(av, k, 65, &h, 0), -FI_EINVAL);
        EXPECT_EQ(w.count(), 2u);
        EXPECT_TRUE(w.contains("auth_key_size"));
    }
    EXPECT_EQ(fi_av_insert_auth_key(av, nullptr, 4, &h, 0), -FI_EINVAL);
    EXPECT_EQ(fi_av_insert_auth_key(av, k, 4, nullptr, 0), -FI_EINVAL);
    EXPECT_EQ(fi_av_insert_auth_key(av, k, 4, &h, FI_MORE), -FI_EBADFLAGS);
    size_t len = 8;
    uint8_t buf[8];
    EXPECT_EQ(fi_av_lookup_auth_key(av, enc::key_handle(5), buf, &len), -FI_EINVAL)
        << "no such key";
    EXPECT_EQ(fi_av_lookup_auth_key(av, FI_ADDR_NOTAVAIL, buf, &len), -FI_EINVAL);
    EXPECT_EQ(fi_av_lookup_auth_key(av, 0, buf, &len), -FI_EINVAL) << "no address 0";
    EXPECT_EQ(fi_av_lookup_auth_key(av, 0, buf, nullptr), -FI_EINVAL);
    // The key table holds 256 keys.
    for (int i = 0; i < 256; ++i) ASSERT_EQ(fi_av_insert_auth_key(av, k, 1, &h, 0), 0) << i;
    EXPECT_EQ(fi_av_insert_auth_key(av, k, 1, &h, 0), -FI_ENOSPC);
}

TEST_F(AvKeysTest, AddressesBoundToKeys) {
    fid_av *av = open_av();
    const uint8_t k1[] = {9, 9};
    fi_addr_t key = 0;
    ASSERT_EQ(fi_av_insert_auth_key(av, k1, sizeof k1, &key, 0), 0);
    const auto blobs = make_blobs(0, 3);
    fi_addr_t in_out[3] = {key, key, enc::key_handle(77)};
    int status[3];
    WarnCapture w;
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 3, in_out, FI_AUTH_KEY | FI_SYNC_ERR, status), 2);
    EXPECT_EQ(w.count(), 1u) << "the bad key handle of address 2";
    EXPECT_EQ(in_out[0], 0u);
    EXPECT_EQ(in_out[1], 1u);
    EXPECT_EQ(in_out[2], FI_ADDR_NOTAVAIL);
    EXPECT_EQ(status[2], FI_EINVAL);
    // lookup_auth_key works on address entries bound to a key.
    uint8_t buf[8];
    size_t len = sizeof buf;
    ASSERT_EQ(fi_av_lookup_auth_key(av, in_out[1], buf, &len), 0);
    EXPECT_EQ(len, 2u);
    EXPECT_EQ(buf[0], 9);
    runtime::av::PeerEntry pe;
    ASSERT_EQ(runtime::av::resolve(runtime::av::av_of(av), in_out[0], pe), 0);
    EXPECT_EQ(pe.auth_key, key);
    // Addresses inserted without FI_AUTH_KEY have no key.
    fi_addr_t plain = 0;
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 1, &plain, 0, nullptr), 1);
    len = sizeof buf;
    EXPECT_EQ(fi_av_lookup_auth_key(av, plain, buf, &len), -FI_EINVAL);
    // Per-insert user IDs are invalid on FI_AV_AUTH_KEY domains.
    fi_addr_t ids[1] = {5};
    EXPECT_EQ(fi_av_insert(av, blobs.data(), 1, ids, FI_AV_USER_ID, nullptr), -FI_EINVAL);
    // A key with addresses bound to it cannot go; once they are removed it can.
    EXPECT_EQ(fi_av_remove(av, &key, 1, FI_AUTH_KEY), -FI_EBUSY);
    fi_addr_t bound[] = {0, 1};
    ASSERT_EQ(fi_av_remove(av, bound, 2, 0), 0);
    EXPECT_EQ(fi_av_remove(av, &key, 1, 0), -FI_EINVAL) << "a key handle needs FI_AUTH_KEY";
    EXPECT_EQ(fi_av_remove(av, &key, 1, FI_AUTH_KEY), 0);
    EXPECT_EQ(fi_av_remove(av, &key, 1, FI_AUTH_KEY), -FI_EINVAL) << "already removed";
    fi_addr_t again = key;
    EXPECT_EQ(fi_av_insert(av, blobs.data(), 1, &again, FI_AUTH_KEY, nullptr), 0)
        << "the key is gone";
}

TEST_F(AvKeysTest, HeldKeysAreBusy) {
    fid_av *av = open_av();
    auto *a = runtime::av::av_of(av);
    const uint8_t k[] = {1};
    fi_addr_t h1 = 0, h2 = 0;
    ASSERT_EQ(fi_av_insert_auth_key(av, k, 1, &h1, 0), 0);
    ASSERT_EQ(fi_av_insert_auth_key(av, k, 1, &h2, 0), 0);
    const auto held = runtime::av::hold_auth_keys(a);  // an endpoint enabled now
    ASSERT_EQ(held.size(), 2u);
    fi_addr_t h3 = 0;
    ASSERT_EQ(fi_av_insert_auth_key(av, k, 1, &h3, 0), 0);  // does not reach it
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_remove(av, &h1, 1, FI_AUTH_KEY), -FI_EBUSY);
        EXPECT_EQ(w.count(), 1u);
    }
    EXPECT_EQ(fi_av_remove(av, &h3, 1, FI_AUTH_KEY), 0) << "not held";
    EXPECT_EQ(fi_close(&av->fid), -FI_EBUSY) << "keys held by an enabled endpoint";
    const uint8_t *bytes = nullptr;
    size_t len = 0;
    ASSERT_EQ(runtime::av::auth_key_bytes(a, h2, bytes, len), 0);
    EXPECT_EQ(len, 1u);
    runtime::av::release_auth_keys(a, held);
    EXPECT_EQ(fi_av_remove(av, &h1, 1, FI_AUTH_KEY), 0);
}

TEST_F(AvKeysTest, KeyUserIds) {
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.flags = FI_AV_USER_ID;
    fid_av *av = open_av(attr);
    auto *a = runtime::av::av_of(av);
    const uint8_t k[] = {1};
    fi_addr_t h = 0;
    ASSERT_EQ(fi_av_insert_auth_key(av, k, 1, &h, 0), 0);
    EXPECT_EQ(runtime::av::key_report_id(a, h), FI_ADDR_NOTAVAIL) << "until set";
    EXPECT_EQ(fi_av_set_user_id(av, h, 0x77, 0), -FI_EINVAL) << "a key handle needs FI_AUTH_KEY";
    ASSERT_EQ(fi_av_set_user_id(av, h, 0x77, FI_AUTH_KEY), 0);
    EXPECT_EQ(runtime::av::key_report_id(a, h), 0x77u);
    EXPECT_EQ(fi_av_set_user_id(av, enc::key_handle(3), 1, FI_AUTH_KEY), -FI_EINVAL);
    fi_av_attr plain{};
    plain.type = FI_AV_TABLE;
    fid_av *av2 = open_av(plain);
    fi_addr_t h2 = 0;
    ASSERT_EQ(fi_av_insert_auth_key(av2, k, 1, &h2, 0), 0);
    EXPECT_EQ(runtime::av::key_report_id(runtime::av::av_of(av2), h2), h2)
        << "without user IDs: the handle";
}

TEST_F(AvTest, KeysNeedAnAuthKeyDomain) {
    open_domain();
    fid_av *av = open_av();
    const uint8_t k[] = {1};
    fi_addr_t h = 0;
    WarnCapture w;
    EXPECT_EQ(fi_av_insert_auth_key(av, k, 1, &h, 0), -FI_EINVAL);
    EXPECT_EQ(w.count(), 1u);
    EXPECT_TRUE(w.contains("FI_AV_AUTH_KEY"));
    size_t len = 1;
    EXPECT_EQ(fi_av_lookup_auth_key(av, enc::key_handle(0), &h, &len), -FI_EINVAL);
    EXPECT_TRUE(runtime::av::hold_auth_keys(runtime::av::av_of(av)).empty());
}

}  // namespace
}  // namespace ufi::av_test
