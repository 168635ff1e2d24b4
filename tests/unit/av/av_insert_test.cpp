// fi_av_insert / fi_av_remove / fi_av_lookup / fi_av_lookup2 / fi_av_straddr in both address
// formats, user IDs, and the data path's resolve().
#include "av_fixture.h"

#include "runtime/av/addr_encoding.h"
#include "runtime/av/binding.h"
#include "base/log/log.h"

#include <climits>

namespace ufi::av_test {
namespace {

std::vector<uint8_t> lookup(fid_av *av, fi_addr_t a, int expect = 0) {
    std::vector<uint8_t> buf(20000);
    size_t len = buf.size();
    EXPECT_EQ(fi_av_lookup(av, a, buf.data(), &len), expect);
    buf.resize(expect == 0 ? len : 0);
    return buf;
}

TEST_F(AvTest, InsertFixedLengthAddressesInOrder) {
    open_domain();
    fid_av *av = open_av_type(FI_AV_TABLE);
    std::vector<size_t> sizes;
    const auto blobs = make_blobs(0, 10, &sizes);
    ASSERT_EQ(blobs.size(), 10 * addr_len()) << "the stride is the domain's address length";
    EXPECT_NE(sizes[0], sizes[1]) << "contents of different lengths, padded alike";
    std::vector<fi_addr_t> out(10, 99);
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 10, out.data(), FI_MORE, nullptr), 10);
    for (size_t i = 0; i < 10; ++i) {
        EXPECT_EQ(out[i], i);
        const auto got = lookup(av, out[i]);
        ASSERT_EQ(got.size(), addr_len()) << "lookups return the domain's length";
        EXPECT_EQ(std::memcmp(got.data(), blobs.data() + i * addr_len(), addr_len()), 0) << i;
    }
    // Indices accumulate across calls; fi_addr may be NULL.
    const auto more = make_blobs(100, 2);
    EXPECT_EQ(fi_av_insert(av, more.data(), 2, nullptr, 0, nullptr), 2);
    EXPECT_EQ(lookup(av, 11), make_blob(101, 1 + 101 % 3));
    EXPECT_EQ(fi_av_insert(av, more.data(), 0, nullptr, 0, nullptr), 0)
        << "count 0 inserts nothing";
}

TEST_F(AvTest, LookupTruncatesAndReportsTheSize) {
    open_domain();
    fid_av *av = open_av();
    const auto b = make_blob(7);
    ASSERT_EQ(fi_av_insert(av, b.data(), 1, nullptr, 0, nullptr), 1);
    std::vector<uint8_t> buf(10, 0xee);
    size_t len = 4;
    EXPECT_EQ(fi_av_lookup(av, 0, buf.data(), &len), 0);
    EXPECT_EQ(len, b.size()) << "*addrlen is the size needed";
    EXPECT_EQ(std::memcmp(buf.data(), b.data(), 4), 0);
    EXPECT_EQ(buf[4], 0xee) << "nothing beyond the buffer's size is written";
    len = 0;
    EXPECT_EQ(fi_av_lookup(av, 0, nullptr, &len), 0);
    EXPECT_EQ(len, b.size());
}

TEST_F(AvTest, LookupErrors) {
    open_domain();
    fid_av *av = open_av();
    const auto b = make_blob(7);
    ASSERT_EQ(fi_av_insert(av, b.data(), 1, nullptr, 0, nullptr), 1);
    uint8_t buf[64];
    size_t len = sizeof buf;
    for (fi_addr_t a : {fi_addr_t{1}, fi_addr_t{1000000}, FI_ADDR_NOTAVAIL, fi_addr_t{0x7ffffffe},
                        runtime::av::encoding::key_handle(0)}) {
        WarnCapture w;
        len = sizeof buf;
        EXPECT_EQ(fi_av_lookup(av, a, buf, &len), -FI_EINVAL) << a;
        EXPECT_EQ(w.count(), 1u) << a;
    }
    WarnCapture w;
    EXPECT_EQ(fi_av_lookup(av, 0, buf, nullptr), -FI_EINVAL);
    len = 8;
    EXPECT_EQ(fi_av_lookup(av, 0, nullptr, &len), -FI_EINVAL);
    EXPECT_EQ(w.count(), 2u);
}

TEST_F(AvTest, Lookup2) {
    open_domain();
    fid_av *av = open_av();
    const auto b = make_blob(3);
    ASSERT_EQ(fi_av_insert(av, b.data(), 1, nullptr, 0, nullptr), 1);
    std::vector<uint8_t> buf(b.size());
    size_t len = buf.size();
    ASSERT_EQ(fi_av_lookup2(av, 0, buf.data(), &len, 0, nullptr), 0);
    EXPECT_EQ(len, b.size());
    EXPECT_EQ(buf, b);
    len = b.size() - 1;
    std::fill(buf.begin(), buf.end(), 0);
    EXPECT_EQ(fi_av_lookup2(av, 0, buf.data(), &len, 0, nullptr), -FI_ETOOSMALL);
    EXPECT_EQ(len, b.size()) << "*len is the size needed";
    EXPECT_EQ(buf[0], 0) << "nothing written";
    len = buf.size();
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_lookup2(av, 0, buf.data(), &len, FI_XPU, nullptr), -FI_EINVAL);
        EXPECT_EQ(w.count(), 1u);
        EXPECT_TRUE(w.contains("XPU"));
    }
    auto *fake_ctx = reinterpret_cast<fid_xpu_ctx *>(&buf[0]);
    EXPECT_EQ(fi_av_lookup2(av, 0, buf.data(), &len, FI_XPU, fake_ctx), -FI_EINVAL)
        << "not an XPU context of ufi's";
    EXPECT_EQ(fi_av_lookup2(av, 0, buf.data(), &len, 0, fake_ctx), -FI_EINVAL)
        << "a context without FI_XPU";
    EXPECT_EQ(fi_av_lookup2(av, 0, buf.data(), &len, FI_MORE, nullptr), -FI_EBADFLAGS);
    EXPECT_EQ(fi_av_lookup2(av, 5, buf.data(), &len, 0, nullptr), -FI_EINVAL) << "unset fi_addr";
}

TEST_F(AvTest, Straddr) {
    open_domain();
    fid_av *av = open_av();
    const auto b = make_blob(3);
    ASSERT_EQ(b.size(), addr_len());
    const auto t = trimmed(b);
    const std::string expect = address::to_string(t.data(), t.size());
    char buf[512];
    size_t len = sizeof buf;
    EXPECT_EQ(fi_av_straddr(av, b.data(), buf, &len), buf);
    EXPECT_EQ(std::string(buf), expect);
    EXPECT_EQ(len, expect.size() + 1) << "the size needed, NUL included";
    EXPECT_EQ(expect.rfind("fi_ufi://", 0), 0u);
    len = 10;
    EXPECT_EQ(fi_av_straddr(av, b.data(), buf, &len), buf);
    EXPECT_EQ(std::string(buf), expect.substr(0, 9)) << "truncated, NUL-terminated";
    EXPECT_EQ(len, expect.size() + 1);
    WarnCapture w;
    std::vector<uint8_t> junk(addr_len(), 0);
    junk[0] = 'x';
    junk[1] = 'y';
    len = sizeof buf;
    EXPECT_EQ(fi_av_straddr(av, junk.data(), buf, &len), nullptr);
    EXPECT_EQ(w.count(), 1u);
    EXPECT_TRUE(w.contains("bad magic"));
}

TEST_F(AvTest, MalformedAddressIsRejectedWithItsReason) {
    open_domain();
    fid_av *av = open_av();
    auto blobs = make_blobs(0, 4);
    blobs[addr_len() + 2] = 9;  // version 9: the second address is malformed
    std::vector<fi_addr_t> out(4, 0);
    std::vector<int> status(4, 12345);
    WarnCapture w;
    EXPECT_EQ(fi_av_insert(av, blobs.data(), 4, out.data(), FI_SYNC_ERR, status.data()), 3)
        << "each entry is judged on its own: the ones after a malformed one still go in";
    EXPECT_EQ(w.count(), 1u) << w.text();
    EXPECT_TRUE(w.contains("version 9")) << w.text();
    EXPECT_EQ(out[0], 0u);
    EXPECT_EQ(status[0], 0);
    EXPECT_EQ(out[1], FI_ADDR_NOTAVAIL);
    EXPECT_EQ(status[1], FI_EINVAL);
    EXPECT_EQ(out[2], 1u);
    EXPECT_EQ(status[2], 0);
    EXPECT_EQ(out[3], 2u);
    EXPECT_EQ(status[3], 0);
    EXPECT_EQ(lookup(av, 1), make_blob(2, 1 + 2 % 3));
}

// [good, malformed, good] with every way the middle one can be broken: the third is always
// inserted, the second never, and FI_SYNC_ERR says so per entry (issue: one malformed entry
// used to take the rest down with it).
TEST_F(AvTest, EveryEntryIsJudgedOnItsOwn) {
    open_domain();
    const auto good = make_blob(1);
    const auto content = address::content_size(good.data(), good.size());
    int cases = 0;
    for (size_t byte = 0; byte < addr_len(); ++byte) {
        for (uint8_t v : {uint8_t{0}, uint8_t{0x7f}, uint8_t{0xff}}) {
            auto three = make_blobs(10, 3);
            std::copy(good.begin(), good.end(), three.begin() + static_cast<long>(addr_len()));
            three[addr_len() + byte] = v;
            const bool still_valid =
                address::is_valid(three.data() + addr_len(), addr_len());
            fid_av *av = open_av();
            fi_addr_t out[3] = {};
            int status[3] = {-1, -1, -1};
            log::Level saved = log::level();
            log::set_level(log::Level::Error);
            const int rc = fi_av_insert(av, three.data(), 3, out, FI_SYNC_ERR, status);
            log::set_level(saved);
            EXPECT_EQ(rc, still_valid ? 3 : 2) << "byte " << byte << " = " << int(v);
            EXPECT_EQ(status[0], 0);
            EXPECT_EQ(status[1], still_valid ? 0 : FI_EINVAL) << byte;
            EXPECT_EQ(status[2], 0) << byte;
            EXPECT_NE(out[2], FI_ADDR_NOTAVAIL);
            close_av(av);
            cases += !still_valid;
        }
    }
    EXPECT_GT(cases, static_cast<int>(content)) << "most corruptions are caught";
}

TEST_F(AvTest, InsertArgumentErrors) {
    open_domain();
    fid_av *av = open_av();
    const auto b = make_blob(1);
    fi_addr_t out = 0;
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insert(av, nullptr, 1, &out, 0, nullptr), -FI_EINVAL);
        EXPECT_TRUE(w.contains("addr is NULL"));
        EXPECT_EQ(w.count(), 1u);
    }
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insert(av, b.data(), 1, &out, FI_READ, nullptr), -FI_EBADFLAGS);
        EXPECT_EQ(w.count(), 1u);
    }
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insert(av, b.data(), 1, &out, FI_SYNC_ERR, nullptr), -FI_EINVAL);
        EXPECT_TRUE(w.contains("context"));
    }
    EXPECT_EQ(fi_av_insert(av, b.data(), 1, nullptr, FI_AV_USER_ID, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_av_insert(av, b.data(), size_t{INT_MAX} + 1, nullptr, 0, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_av_insert(av, b.data(), 1, &out, FI_AUTH_KEY, nullptr), -FI_EINVAL)
        << "FI_AUTH_KEY on a domain without FI_AV_AUTH_KEY";
    EXPECT_EQ(fi_av_insert(av, b.data(), 1, &out, FI_FIREWALL_ADDR, nullptr), 1);
    runtime::av::PeerEntry pe;
    ASSERT_EQ(runtime::av::resolve(runtime::av::av_of(av), out, pe), 0);
    EXPECT_TRUE(pe.firewall);
}

TEST_F(AvTest, RemoveThenReinsertTakesTheLowestFreeIndex) {
    open_domain();
    fid_av *av = open_av();
    const auto blobs = make_blobs(0, 6);
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 6, nullptr, 0, nullptr), 6);
    fi_addr_t gone[] = {4, 1};
    ASSERT_EQ(fi_av_remove(av, gone, 2, 0), 0);
    lookup(av, 1, -FI_EINVAL);
    lookup(av, 4, -FI_EINVAL);
    const auto again = make_blobs(50, 3);
    fi_addr_t out[3];
    ASSERT_EQ(fi_av_insert(av, again.data(), 3, out, 0, nullptr), 3);
    EXPECT_EQ(out[0], 1u) << "the lowest unused location first";
    EXPECT_EQ(out[1], 4u);
    EXPECT_EQ(out[2], 6u);
    EXPECT_EQ(lookup(av, 4), make_blob(51, 1 + 51 % 3));
    // The same address removed and inserted again (the page requires this to work).
    const auto b = make_blob(2, 3);  // address 2 had three records
    fi_addr_t two = 2;
    ASSERT_EQ(fi_av_remove(av, &two, 1, 0), 0);
    fi_addr_t back = 0;
    ASSERT_EQ(fi_av_insert(av, b.data(), 1, &back, 0, nullptr), 1);
    EXPECT_EQ(back, 2u);
    EXPECT_EQ(lookup(av, 2), b);
}

TEST_F(AvTest, RemoveErrors) {
    open_domain();
    fid_av *av = open_av();
    const auto blobs = make_blobs(0, 3);
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 3, nullptr, 0, nullptr), 3);
    for (fi_addr_t a :
         {fi_addr_t{3}, fi_addr_t{1} << 40, FI_ADDR_NOTAVAIL, fi_addr_t{0x80000000}}) {
        WarnCapture w;
        EXPECT_EQ(fi_av_remove(av, &a, 1, 0), -FI_EINVAL) << a;
        EXPECT_EQ(w.count(), 1u);
    }
    fi_addr_t one = 1;
    ASSERT_EQ(fi_av_remove(av, &one, 1, 0), 0);
    EXPECT_EQ(fi_av_remove(av, &one, 1, 0), -FI_EINVAL) << "already removed";
    // A list with one bad address removes nothing.
    fi_addr_t mixed[] = {0, 7};
    EXPECT_EQ(fi_av_remove(av, mixed, 2, 0), -FI_EINVAL);
    EXPECT_EQ(lookup(av, 0).size(), addr_len());
    EXPECT_EQ(fi_av_remove(av, nullptr, 1, 0), -FI_EINVAL);
    EXPECT_EQ(fi_av_remove(av, mixed, 0, 0), 0);
    EXPECT_EQ(fi_av_remove(av, mixed, 1, FI_MORE), -FI_EBADFLAGS);
    EXPECT_EQ(fi_av_remove(av, mixed, 1, FI_AUTH_KEY), -FI_EINVAL) << "no keys on this domain";
    fi_addr_t twice[] = {2, 2};
    EXPECT_EQ(fi_av_remove(av, twice, 2, 0), 0) << "a duplicate in the list is removed once";
    lookup(av, 2, -FI_EINVAL);
}

TEST_F(AvTest, DuplicateInsertsDoNotCrash) {
    open_domain();
    fid_av *av = open_av();
    const auto b = make_blob(5);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(fi_av_insert(av, b.data(), 1, nullptr, 0, nullptr), 1);
    for (fi_addr_t a = 0; a < 5; ++a) EXPECT_EQ(lookup(av, a), b);
}

TEST_F(AvTest, StringFormat) {
    open_domain({.str_format = true});
    ASSERT_EQ(info_->addr_format, static_cast<uint32_t>(FI_ADDR_STR));
    fid_av *av = open_av();
    std::vector<std::string> strs;
    for (int i = 0; i < 3; ++i) {
        const auto b = trimmed(make_blob(i));
        strs.push_back(address::to_string(b.data(), b.size()));
    }
    const char *addrs[4] = {strs[0].c_str(), strs[1].c_str(), "fi_ufi://not-an-address",
                            strs[2].c_str()};
    fi_addr_t out[4];
    int status[4];
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insert(av, addrs, 4, out, FI_SYNC_ERR, status), 3);
        EXPECT_EQ(w.count(), 1u);
    }
    EXPECT_EQ(out[2], FI_ADDR_NOTAVAIL);
    EXPECT_EQ(status[2], FI_EINVAL);
    EXPECT_EQ(out[3], 2u);
    // Lookups return the string form, NUL included.
    char buf[512];
    size_t len = sizeof buf;
    ASSERT_EQ(fi_av_lookup(av, out[3], buf, &len), 0);
    EXPECT_EQ(std::string(buf), strs[2]);
    EXPECT_EQ(len, strs[2].size() + 1);
    len = sizeof buf;
    EXPECT_EQ(fi_av_straddr(av, strs[1].c_str(), buf, &len), buf);
    EXPECT_EQ(std::string(buf), strs[1]);
    const char *null_addr[1] = {nullptr};
    EXPECT_EQ(fi_av_insert(av, null_addr, 1, out, 0, nullptr), 0);
    EXPECT_EQ(out[0], FI_ADDR_NOTAVAIL);
    // The data path still sees the binary blob.
    runtime::av::PeerEntry pe;
    ASSERT_EQ(runtime::av::resolve(runtime::av::av_of(av), 0, pe), 0);
    const auto b0 = trimmed(make_blob(0));
    ASSERT_EQ(pe.len, b0.size());
    EXPECT_EQ(std::memcmp(pe.blob, b0.data(), pe.len), 0);
}

TEST_F(AvTest, ResolveForTheDataPath) {
    open_domain();
    fid_av *av = open_av();
    auto *a = runtime::av::av_of(av);
    const auto blobs = make_blobs(0, 3);
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 3, nullptr, 0, nullptr), 3);
    runtime::av::PeerEntry pe;
    ASSERT_EQ(runtime::av::resolve(a, 1, pe), 0);
    EXPECT_EQ(pe.user_id, 1u) << "without user IDs completions report the fi_addr";
    EXPECT_EQ(pe.auth_key, FI_ADDR_NOTAVAIL);
    EXPECT_FALSE(pe.firewall);
    const uint32_t v1 = pe.version;
    EXPECT_EQ(runtime::av::resolve(a, fi_group_addr(1, 9), pe), -FI_EINVAL)
        << "ufi has no peer groups: group bits name nothing";
    EXPECT_EQ(runtime::av::resolve(a, 3, pe), -FI_EINVAL);
    EXPECT_EQ(runtime::av::resolve(a, FI_ADDR_NOTAVAIL, pe), -FI_EINVAL);
    fi_addr_t one = 1;
    ASSERT_EQ(fi_av_remove(av, &one, 1, 0), 0);
    EXPECT_EQ(runtime::av::resolve(a, 1, pe), -FI_EINVAL);
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 1, nullptr, 0, nullptr), 1);
    ASSERT_EQ(runtime::av::resolve(a, 1, pe), 0);
    EXPECT_NE(pe.version, v1) << "a reused slot has a new version";
    EXPECT_EQ(runtime::av::rx_ctx_bits(a), 0);
}

TEST_F(AvTest, PerInsertUserIds) {
    open_domain();
    fid_av *av = open_av();
    auto *a = runtime::av::av_of(av);
    const auto blobs = make_blobs(0, 3);
    fi_addr_t ids[3] = {0xaaa, 0xbbb, 0xccc};
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 3, ids, FI_AV_USER_ID, nullptr), 3);
    EXPECT_EQ(ids[0], 0u) << "the output is the fi_addr, as without the flag";
    EXPECT_EQ(ids[2], 2u);
    runtime::av::PeerEntry pe;
    ASSERT_EQ(runtime::av::resolve(a, 1, pe), 0);
    EXPECT_EQ(pe.user_id, 0xbbbu);
    // Removal forgets it: a re-inserted address reports its fi_addr again.
    fi_addr_t one = 1;
    ASSERT_EQ(fi_av_remove(av, &one, 1, 0), 0);
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 1, nullptr, 0, nullptr), 1);
    ASSERT_EQ(runtime::av::resolve(a, 1, pe), 0);
    EXPECT_EQ(pe.user_id, 1u);
    // set_user_id belongs to FI_AV_USER_ID AVs.
    WarnCapture w;
    EXPECT_EQ(fi_av_set_user_id(av, 0, 5, 0), -FI_EINVAL);
    EXPECT_EQ(w.count(), 1u);
}

TEST_F(AvTest, OpenFlagUserIds) {
    open_domain();
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.flags = FI_AV_USER_ID;
    fid_av *av = open_av(attr);
    auto *a = runtime::av::av_of(av);
    const auto blobs = make_blobs(0, 2);
    fi_addr_t out[2] = {7, 8};
    {
        WarnCapture w;
        EXPECT_EQ(fi_av_insert(av, blobs.data(), 2, out, FI_AV_USER_ID, nullptr), -FI_EINVAL)
            << "per-insert FI_AV_USER_ID is invalid on an FI_AV_USER_ID AV";
        EXPECT_EQ(w.count(), 1u);
        EXPECT_EQ(fi_av_remove(av, out, 1, FI_AV_USER_ID), -FI_EINVAL);
    }
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 2, out, 0, nullptr), 2);
    runtime::av::PeerEntry pe;
    ASSERT_EQ(runtime::av::resolve(a, out[0], pe), 0);
    EXPECT_EQ(pe.user_id, FI_ADDR_NOTAVAIL) << "until set";
    ASSERT_EQ(fi_av_set_user_id(av, out[0], 0x1234, 0), 0);
    ASSERT_EQ(runtime::av::resolve(a, out[0], pe), 0);
    EXPECT_EQ(pe.user_id, 0x1234u);
    ASSERT_EQ(fi_av_set_user_id(av, out[0], 0x5678, 0), 0) << "may be set again";
    ASSERT_EQ(runtime::av::resolve(a, out[0], pe), 0);
    EXPECT_EQ(pe.user_id, 0x5678u);
    WarnCapture w;
    EXPECT_EQ(fi_av_set_user_id(av, 5, 1, 0), -FI_EINVAL) << "unset fi_addr";
    EXPECT_EQ(fi_av_set_user_id(av, out[1], 1, FI_MORE), -FI_EBADFLAGS);
    EXPECT_EQ(fi_av_set_user_id(av, out[1], 1, FI_AUTH_KEY), -FI_EINVAL) << "not a key handle";
    EXPECT_EQ(w.count(), 3u);
    // Removed, out-of-range and reserved addresses: -FI_EINVAL, never success or a crash.
    ASSERT_EQ(fi_av_remove(av, &out[1], 1, 0), 0);
    for (fi_addr_t bad : {out[1], fi_addr_t{0x7fffffff}, fi_addr_t{0x80000000},
                          fi_addr_t{0xffffffff}, FI_ADDR_NOTAVAIL, fi_addr_t{1} << 40}) {
        EXPECT_EQ(fi_av_set_user_id(av, bad, 9, 0), -FI_EINVAL) << std::hex << bad;
    }
}

TEST_F(AvTest, Lookup2OfRemovedOrOutOfRangeAddresses) {
    open_domain();
    fid_av *av = open_av();
    const auto blobs = make_blobs(0, 2);
    fi_addr_t out[2];
    ASSERT_EQ(fi_av_insert(av, blobs.data(), 2, out, 0, nullptr), 2);
    ASSERT_EQ(fi_av_remove(av, &out[0], 1, 0), 0);
    std::vector<uint8_t> buf(256);
    for (fi_addr_t bad : {out[0], fi_addr_t{5}, fi_addr_t{0x7fffffff}, fi_addr_t{0x80000000},
                          FI_ADDR_NOTAVAIL}) {
        size_t len = buf.size();
        EXPECT_EQ(fi_av_lookup2(av, bad, buf.data(), &len, 0, nullptr), -FI_EINVAL) << std::hex << bad;
        len = 1;  // even with a buffer too small, an invalid address is -FI_EINVAL
        EXPECT_EQ(fi_av_lookup2(av, bad, buf.data(), &len, 0, nullptr), -FI_EINVAL) << std::hex << bad;
    }
    size_t len = buf.size();
    EXPECT_EQ(fi_av_lookup2(av, out[1], buf.data(), &len, 0, nullptr), 0) << "the other entry stays";
}

TEST_F(AvTest, ManyEntriesAcrossChunks) {
    open_domain();
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.count = 10;  // far fewer than inserted: chunks grow
    fid_av *av = open_av(attr);
    const size_t n = 20000;
    std::vector<size_t> sizes;
    const auto blobs = make_blobs(0, n, &sizes);
    std::vector<fi_addr_t> out(n);
    ASSERT_EQ(fi_av_insert(av, blobs.data(), n, out.data(), 0, nullptr), static_cast<int>(n));
    for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], i);
        if (i % 997 == 0 || i == n - 1) {
            const auto got = lookup(av, i);
            ASSERT_EQ(got.size(), addr_len());
            EXPECT_EQ(std::memcmp(got.data(), blobs.data() + i * addr_len(), addr_len()), 0);
            EXPECT_EQ(address::content_size(got.data(), got.size()), sizes[i]);
        }
    }
}

}  // namespace
}  // namespace ufi::av_test
