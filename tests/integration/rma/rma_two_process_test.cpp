// RMA between two processes (fork; a socketpair carries the names, the target's key and
// address, and the steps' synchronisation): B registers a region, A writes every size into it
// and reads it back, B checks the bytes; fi_writedata reaches B's CQ with the data and A's
// fi_addr; a write B's region does not allow fails at A and leaves B's memory alone; B's
// counters count A's accesses (FI_RMA_EVENT); both processes fetch-add one counter without
// losing an update; regions under authorization keys admit only peers holding them; a raw
// key round trip. Meson runs it over shared memory and over tcp on loopback. Every wait is
// bounded.
#include "../msg/two_process.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include <algorithm>

#include <gtest/gtest.h>

namespace {

using namespace ufi::two_process;

// memcmp for buffers that may be empty (an empty vector's data() may be null).
bool same(const void *a, const void *b, size_t n) {
    return n == 0 || std::memcmp(a, b, n) == 0;
}

constexpr size_t kMax = (2 << 20) + 5;
constexpr uint64_t kKey = 0x1234;

// Where A's accesses land in B's region: A learns it over the socket.
struct Target {
    uint64_t base;  // what A names the region's first byte with (address or 0)
    uint64_t key;
    uint64_t ro_key;  // a region B registered for FI_REMOTE_READ only
    uint64_t ro_base;
};

int run(const char *role, int sock, bool initiator) {
    Side s{role, sock};
    CHECK(open_side(s, FI_RMA | FI_RMA_EVENT) == 0);
    const bool virt = (s.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    Target t{};
    if (!initiator) {
        std::vector<uint8_t> region(kMax, 0xEE), ro(64, 0xA5);
        fi_cntr_attr cattr{};
        cattr.events = FI_CNTR_EVENTS_COMP;
        fid_cntr *writes = nullptr, *reads = nullptr;
        CHECK(fi_cntr_open(s.domain, &cattr, &writes, nullptr) == 0);
        CHECK(fi_cntr_open(s.domain, &cattr, &reads, nullptr) == 0);
        fid_mr *mr = nullptr, *mro = nullptr;
        CHECK(fi_mr_reg(s.domain, region.data(), region.size(), FI_REMOTE_READ | FI_REMOTE_WRITE,
                        0, kKey, 0, &mr, nullptr) == 0);
        CHECK(fi_mr_reg(s.domain, ro.data(), ro.size(), FI_REMOTE_READ, 0, kKey + 1, 0, &mro,
                        nullptr) == 0);
        CHECK(fi_mr_bind(mr, &writes->fid, FI_REMOTE_WRITE) == 0);
        CHECK(fi_mr_bind(mr, &reads->fid, FI_REMOTE_READ) == 0);
        t = {virt ? reinterpret_cast<uint64_t>(region.data()) : 0, fi_mr_key(mr), fi_mr_key(mro),
             virt ? reinterpret_cast<uint64_t>(ro.data()) : 0};
        CHECK(s.io(&t, sizeof t, true));
        // Each size: A wrote it (its completion says B has the bytes), B checks.
        for (size_t n : kSizes) {
            CHECK(s.sync());  // A's write completed
            const auto want = pattern(n, static_cast<uint8_t>(n));
            CHECK(same(region.data(), want.data(), n));
            CHECK(n == kMax || region[n] == 0xEE);  // sizes grow: never written yet
            CHECK(s.sync());  // A read it back
        }
        // fi_writedata: the entry with the data and A's address.
        fi_cq_tagged_entry e{};
        fi_addr_t src = FI_ADDR_NOTAVAIL;
        CHECK(s.wait(e, &src) == 1);
        CHECK(e.flags == (FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA));
        CHECK(e.data == 0xdada && e.len == 8 && src == s.peer);
        CHECK(std::memcmp(region.data() + 8, "datadata", 8) == 0);
        CHECK(s.sync());  // A's refused write completed with its error
        for (uint8_t b : ro) CHECK(b == 0xA5);
        // Counted: every size written once (and writedata), read once.
        const uint64_t accesses = sizeof kSizes / sizeof kSizes[0];
        CHECK(fi_cntr_read(writes) == accesses + 1);
        CHECK(fi_cntr_read(reads) == accesses);
        CHECK(s.sync());
        fi_close(&mr->fid);
        fi_close(&mro->fid);
        fi_close(&writes->fid);
        fi_close(&reads->fid);
    } else {
        CHECK(s.io(&t, sizeof t, false));
        int ctx = 0;
        fi_cq_tagged_entry e{};
        for (size_t n : kSizes) {
            const auto out = pattern(n, static_cast<uint8_t>(n));
            CHECK(s.retry([&] { return fi_write(s.ep, out.data(), n, nullptr, s.peer, t.base, t.key, &ctx); }) == 0);
            CHECK(s.wait(e) == 1 && e.flags == (FI_RMA | FI_WRITE) && e.op_context == &ctx);
            CHECK(s.sync());
            std::vector<uint8_t> back(n + 1, 0x11);
            CHECK(s.retry([&] { return fi_read(s.ep, back.data(), n, nullptr, s.peer, t.base, t.key, &ctx); }) == 0);
            CHECK(s.wait(e) == 1 && e.flags == (FI_RMA | FI_READ));
            CHECK(same(back.data(), out.data(), n) && back[n] == 0x11);
            CHECK(s.sync());
        }
        CHECK(s.retry([&] { return fi_writedata(s.ep, "datadata", 8, nullptr, 0xdada, s.peer, t.base + 8, t.key, &ctx); }) == 0);
        CHECK(s.wait(e) == 1 && e.flags == (FI_RMA | FI_WRITE));
        // B's read-only region refuses a write.
        CHECK(s.retry([&] { return fi_write(s.ep, "xxxxxxxx", 8, nullptr, s.peer, t.ro_base, t.ro_key, &ctx); }) == 0);
        CHECK(s.wait(e) == -FI_EAVAIL);
        fi_cq_err_entry err{};
        CHECK(fi_cq_readerr(s.cq, &err, 0) == 1 && err.err == FI_EACCES && err.op_context == &ctx);
        CHECK(s.sync());
        CHECK(s.sync());
    }
    close_side(s);
    return 0;
}

// Both processes fetch-add 1 to one counter in B, 2000 times each (B through its own address):
// no update is lost, and no value is fetched twice.
constexpr int kAdds = 2000;

int hammer(const char *role, int sock, bool a_side) {
    Side s{role, sock};
    CHECK(open_side(s, FI_ATOMIC) == 0);
    const bool virt = (s.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    uint64_t counter = 0;
    fid_mr *mr = nullptr;
    Target t{};
    fi_addr_t to = s.peer;
    if (!a_side) {
        CHECK(fi_mr_reg(s.domain, &counter, sizeof counter, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                        kKey, 0, &mr, nullptr) == 0);
        t.base = virt ? reinterpret_cast<uint64_t>(&counter) : 0;
        t.key = fi_mr_key(mr);
        CHECK(s.io(&t, sizeof t, true));
        // B's own address, for its own adds.
        size_t len = 0;
        CHECK(fi_getname(&s.ep->fid, nullptr, &len) == -FI_ETOOSMALL);
        std::vector<uint8_t> mine(len);
        CHECK(fi_getname(&s.ep->fid, mine.data(), &len) == 0);
        CHECK(fi_av_insert(s.av, mine.data(), 1, &to, 0, nullptr) == 1);
    } else {
        CHECK(s.io(&t, sizeof t, false));
    }
    CHECK(s.sync());
    std::vector<uint64_t> got(kAdds);
    const uint64_t one = 1;
    for (int i = 0; i < kAdds; ++i) {
        CHECK(s.retry([&] {
            return fi_fetch_atomic(s.ep, &one, 1, nullptr, &got[i], nullptr, to, t.base, t.key,
                                   FI_UINT64, FI_SUM, nullptr);
        }) == 0);
        fi_cq_tagged_entry e{};
        CHECK(s.wait(e) == 1 && e.flags == (FI_ATOMIC | FI_READ));
    }
    // A sends what it fetched; B checks the union and the counter.
    if (a_side) {
        CHECK(s.io(got.data(), got.size() * sizeof got[0], true));
        CHECK(s.sync());
    } else {
        std::vector<uint64_t> theirs(kAdds);
        CHECK(s.io(theirs.data(), theirs.size() * sizeof theirs[0], false));
        got.insert(got.end(), theirs.begin(), theirs.end());
        std::sort(got.begin(), got.end());
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == i);
        CHECK(counter == 2 * kAdds);
        CHECK(s.sync());
        fi_close(&mr->fid);
    }
    close_side(s);
    return 0;
}

TEST(RmaTwoProcesses, FetchAddFromBothSidesLosesNothing) {
    const PairResult r = run_pair(hammer, "A", "B");
    EXPECT_EQ(r.a, 0);
    EXPECT_EQ(r.b, 0);
}

// FI_MR_RAW's flow between processes: B sends its region's raw key (fi_mr_raw_attr), A maps
// it (fi_mr_map_raw) and writes and reads through the mapped key, then unmaps it.
int raw_key(const char *role, int sock, bool a_side) {
    Side s{role, sock};
    CHECK(open_side(s, FI_RMA) == 0);
    std::vector<uint8_t> region(100000, 0);
    if (!a_side) {
        fid_mr *mr = nullptr;
        CHECK(fi_mr_reg(s.domain, region.data(), region.size(), FI_REMOTE_READ | FI_REMOTE_WRITE,
                        0, kKey, 0, &mr, nullptr) == 0);
        uint64_t base = 0;
        size_t size = 0;
        CHECK(fi_mr_raw_attr(mr, &base, nullptr, &size, 0) == -FI_ETOOSMALL);
        std::vector<uint8_t> raw(size);
        CHECK(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0) == 0);
        const uint64_t n = size;
        CHECK(s.io(&base, sizeof base, true) && s.io(const_cast<uint64_t *>(&n), sizeof n, true) &&
              s.io(raw.data(), size, true));
        CHECK(s.sync());  // A wrote and read
        const auto want = pattern(region.size(), 61);
        CHECK(region == want);
        CHECK(s.sync());
        fi_close(&mr->fid);
    } else {
        uint64_t base = 0, n = 0;
        CHECK(s.io(&base, sizeof base, false) && s.io(&n, sizeof n, false) && n < 4096);
        std::vector<uint8_t> raw(n);
        CHECK(s.io(raw.data(), n, false));
        uint64_t mapped = 0;
        CHECK(fi_mr_map_raw(s.domain, base, raw.data(), raw.size(), &mapped, 0) == 0);
        const auto out = pattern(region.size(), 61);
        const bool virt = (s.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
        const uint64_t at = virt ? base : 0;
        fi_cq_tagged_entry e{};
        CHECK(s.retry([&] { return fi_write(s.ep, out.data(), out.size(), nullptr, s.peer, at, mapped, nullptr); }) == 0);
        CHECK(s.wait(e) == 1 && e.flags == (FI_RMA | FI_WRITE));
        std::vector<uint8_t> back(out.size());
        CHECK(s.retry([&] { return fi_read(s.ep, back.data(), back.size(), nullptr, s.peer, at, mapped, nullptr); }) == 0);
        CHECK(s.wait(e) == 1 && back == out);
        CHECK(fi_mr_unmap_key(s.domain, mapped) == 0);
        CHECK(s.sync());
        CHECK(s.sync());
    }
    close_side(s);
    return 0;
}

// Regions with authorization keys between processes: both domains hold the key "ufi-pair"
// (so the endpoints admit each other); B registers one region under that key and one under
// another. A's write, injected write, read and fetch-add reach the first; the second refuses
// each of them (FI_EACCES, the injected write's entry without a context) and keeps its bytes.
constexpr char kPairKey[] = "ufi-pair";

struct AuthTargets {
    uint64_t same_base, same_key;    // registered under the domains' key
    uint64_t other_base, other_key;  // under another key
};

fid_mr *reg_with_key(Side &s, std::vector<uint8_t> &buf, uint64_t key, const char *auth) {
    const char *role = s.role;
    iovec iov{buf.data(), buf.size()};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
    attr.requested_key = key;
    attr.auth_key = reinterpret_cast<uint8_t *>(const_cast<char *>(auth));
    attr.auth_key_size = std::strlen(auth);
    fid_mr *mr = nullptr;
    if (fi_mr_regattr(s.domain, &attr, 0, &mr) != 0) {
        std::fprintf(stderr, "[%s] fi_mr_regattr under key '%s' failed\n", role, auth);
        return nullptr;
    }
    return mr;
}

int auth_regions(const char *role, int sock, bool a_side) {
    Side s{role, sock};
    CHECK(open_side(s, FI_RMA | FI_ATOMIC, kPairKey, sizeof kPairKey - 1) == 0);
    const bool virt = (s.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    AuthTargets t{};
    if (!a_side) {
        std::vector<uint8_t> same(64, 0), other(64, 0x3C);
        fid_mr *ms = reg_with_key(s, same, kKey, kPairKey);
        fid_mr *mo = reg_with_key(s, other, kKey + 1, "another");
        CHECK(ms != nullptr && mo != nullptr);
        t = {virt ? reinterpret_cast<uint64_t>(same.data()) : 0, fi_mr_key(ms),
             virt ? reinterpret_cast<uint64_t>(other.data()) : 0, fi_mr_key(mo)};
        CHECK(s.io(&t, sizeof t, true));
        CHECK(s.sync());  // A is done
        uint64_t w[3];
        std::memcpy(w, same.data(), sizeof w);
        CHECK(w[0] == 0x1111 && w[1] == 0x2222 && w[2] == 5);  // written, injected, fetch-added
        for (uint8_t b : other) CHECK(b == 0x3C);
        CHECK(s.sync());
        fi_close(&ms->fid);
        fi_close(&mo->fid);
    } else {
        CHECK(s.io(&t, sizeof t, false));
        fi_cq_tagged_entry e{};
        int w_ctx = 0, r_ctx = 0, f_ctx = 0;
        const uint64_t a = 0x1111, b = 0x2222, add = 5;
        uint64_t old = 99, back[3] = {};
        CHECK(s.retry([&] { return fi_write(s.ep, &a, 8, nullptr, s.peer, t.same_base, t.same_key, &w_ctx); }) == 0);
        CHECK(s.wait(e) == 1 && e.op_context == &w_ctx);
        CHECK(s.retry([&] { return fi_inject_write(s.ep, &b, 8, s.peer, t.same_base + 8, t.same_key); }) == 0);
        CHECK(s.retry([&] { return fi_fetch_atomic(s.ep, &add, 1, nullptr, &old, nullptr, s.peer, t.same_base + 16, t.same_key, FI_UINT64, FI_SUM, &f_ctx); }) == 0);
        CHECK(s.wait(e) == 1 && e.op_context == &f_ctx && old == 0);
        CHECK(s.retry([&] { return fi_read(s.ep, back, sizeof back, nullptr, s.peer, t.same_base, t.same_key, &r_ctx); }) == 0);
        CHECK(s.wait(e) == 1 && e.op_context == &r_ctx);
        CHECK(back[0] == a && back[1] == b && back[2] == add);
        // The other key's region: each access refused, in order.
        CHECK(s.retry([&] { return fi_write(s.ep, &a, 8, nullptr, s.peer, t.other_base, t.other_key, &w_ctx); }) == 0);
        CHECK(s.retry([&] { return fi_inject_write(s.ep, &b, 8, s.peer, t.other_base + 8, t.other_key); }) == 0);
        CHECK(s.retry([&] { return fi_read(s.ep, back, 8, nullptr, s.peer, t.other_base, t.other_key, &r_ctx); }) == 0);
        CHECK(s.retry([&] { return fi_fetch_atomic(s.ep, &add, 1, nullptr, &old, nullptr, s.peer, t.other_base + 16, t.other_key, FI_UINT64, FI_SUM, &f_ctx); }) == 0);
        void *const expected[] = {&w_ctx, nullptr, &r_ctx, &f_ctx};
        for (void *ctx : expected) {
            CHECK(s.wait(e) == -FI_EAVAIL);
            fi_cq_err_entry err{};
            CHECK(fi_cq_readerr(s.cq, &err, 0) == 1);
            if (err.err != FI_EACCES || err.op_context != ctx) {
                std::fprintf(stderr, "[%s] error entry %s for %p, want FI_EACCES for %p\n", role,
                             fi_strerror(err.err), err.op_context, ctx);
                return 1;
            }
        }
        CHECK(s.sync());
        CHECK(s.sync());
    }
    close_side(s);
    return 0;
}

TEST(RmaTwoProcesses, RegionsWithAuthKeysAdmitOnlyTheirKeysHolders) {
    const PairResult r = run_pair(auth_regions, "A", "B");
    EXPECT_EQ(r.a, 0);
    EXPECT_EQ(r.b, 0);
}

TEST(RmaTwoProcesses, RawKeyRoundTrip) {
    const PairResult r = run_pair(raw_key, "A", "B");
    EXPECT_EQ(r.a, 0);
    EXPECT_EQ(r.b, 0);
}

TEST(RmaTwoProcesses, WritesReadsDataAndRefusals) {
    const PairResult r = run_pair(run, "A", "B");
    EXPECT_EQ(r.a, 0);
    EXPECT_EQ(r.b, 0);
}

}  // namespace
