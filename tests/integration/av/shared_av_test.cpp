// Named (shared) AVs across processes, through the public API (libufi.so): one process fills
// an AV that another reads (same bytes at the same indices), and two processes inserting into
// one AV at the same time (every index handed out once, each entry holding its inserter's
// address). Processes coordinate over a socketpair; every wait is bounded (poll timeouts and
// alarm()).
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kTimeoutMs = 20000;

// The domain's address length, as an application learns it: fi_getname of an endpoint
// (every address of a domain has that length). Set by Ufi::open.
size_t g_addr_len = 0;

// A ufi address blob (transports/address.h layout), written independently of ufi's code:
// "uf", version 3, record count, u64 uuid, u32 endpoint id, u32 checksum, then records
// (u8 transport code: 1 posix, 7 tcp; u8 device length, u8 iface length, device bytes, iface
// bytes), then zeros up to the domain's address length.
std::vector<uint8_t> make_blob(uint64_t n) {
    std::vector<uint8_t> b = {'u', 'f', 3, 2};
    for (int i = 0; i < 8; ++i)
        b.push_back(static_cast<uint8_t>((n | 0x4200000000000000ULL) >> (8 * i)));
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(n >> (8 * i)));
    for (int i = 0; i < 4; ++i) b.push_back(0);  // checksum, below
    b.push_back(1);  // posix
    b.push_back(8);
    b.push_back(8);
    for (int i = 0; i < 16; ++i) b.push_back(static_cast<uint8_t>(n * 31 + i));
    const size_t extra = n % 3;  // vary the length
    b.push_back(7);  // tcp
    b.push_back(static_cast<uint8_t>(6 + extra));
    b.push_back(2);
    for (size_t i = 0; i < 8 + extra; ++i) b.push_back(static_cast<uint8_t>(n >> i));
    // The checksum at 16: FNV-1a 32 over header and records, the field itself as zeros.
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < b.size(); ++i) h = (h ^ (i >= 16 && i < 20 ? 0 : b[i])) * 16777619u;
    for (int i = 0; i < 4; ++i) b[16 + i] = static_cast<uint8_t>(h >> (8 * i));
    if (b.size() < g_addr_len) b.resize(g_addr_len, 0);
    return b;
}

bool send_all(int fd, const void *p, size_t n) {
    const auto *c = static_cast<const char *>(p);
    while (n > 0) {
        const ssize_t w = write(fd, c, n);
        if (w <= 0) return false;
        c += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool recv_all(int fd, void *p, size_t n) {
    auto *c = static_cast<char *>(p);
    while (n > 0) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, kTimeoutMs) != 1) return false;  // bounded wait
        const ssize_t r = read(fd, c, n);
        if (r <= 0) return false;
        c += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

struct Ufi {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    bool open() {
        return fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, &info) == 0 &&
               fi_fabric(info->fabric_attr, &fabric, nullptr) == 0 &&
               fi_domain(fabric, info, &domain, nullptr) == 0 && learn_addr_len();
    }
    // fi_getname's length for an enabled endpoint of this domain.
    bool learn_addr_len() {
        fi_av_attr av_attr{};
        fi_cq_attr cq_attr{};
        fid_av *av = nullptr;
        fid_cq *cq = nullptr;
        fid_ep *ep = nullptr;
        bool ok = fi_av_open(domain, &av_attr, &av, nullptr) == 0 &&
                  fi_cq_open(domain, &cq_attr, &cq, nullptr) == 0 &&
                  fi_endpoint(domain, info, &ep, nullptr) == 0 &&
                  fi_ep_bind(ep, &av->fid, 0) == 0 &&
                  fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) == 0 && fi_enable(ep) == 0;
        size_t len = 0;
        ok = ok && fi_getname(&ep->fid, nullptr, &len) == -FI_ETOOSMALL && len > 0;
        if (ok) g_addr_len = len;
        if (ep) fi_close(&ep->fid);
        if (cq) fi_close(&cq->fid);
        if (av) fi_close(&av->fid);
        return ok;
    }
    ~Ufi() {
        if (domain) fi_close(&domain->fid);
        if (fabric) fi_close(&fabric->fid);
        if (info) fi_freeinfo(info);
    }
};

fid_av *open_named(Ufi &u, const std::string &name, uint64_t flags) {
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.name = name.c_str();
    attr.flags = flags;
    attr.count = 64;  // small first chunks: the tests grow the table across several
    fid_av *av = nullptr;
    return fi_av_open(u.domain, &attr, &av, nullptr) == 0 ? av : nullptr;
}

bool shm_file_exists(const std::string &name) {
    struct stat st;
    return stat(("/dev/shm/ufi-av-" + name).c_str(), &st) == 0;
}

std::string unique(const char *what) {
    return std::string("itest-") + what + "-" + std::to_string(getpid());
}

int wait_child(pid_t pid) {
    int st = 0;
    for (int i = 0; i < kTimeoutMs / 10; ++i) {
        const pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

constexpr uint32_t kFillCount = 5000;

// Child: creates the AV, fills it, reports the fi_addrs, keeps it open until the reader has it.
int writer(int sock, const std::string &name) {
    alarm(30);
    Ufi u;
    if (!u.open()) return 10;
    fid_av *av = open_named(u, name, 0);
    if (av == nullptr) return 11;
    std::vector<fi_addr_t> out;
    for (uint32_t done = 0; done < kFillCount;) {
        const uint32_t batch = std::min<uint32_t>(kFillCount - done, 700);
        std::vector<uint8_t> laid;
        for (uint32_t i = 0; i < batch; ++i) {
            const auto b = make_blob(done + i);
            laid.insert(laid.end(), b.begin(), b.end());
        }
        std::vector<fi_addr_t> part(batch);
        if (fi_av_insert(av, laid.data(), batch, part.data(), 0, nullptr) !=
            static_cast<int>(batch))
            return 12;
        out.insert(out.end(), part.begin(), part.end());
        done += batch;
    }
    const uint32_t n = kFillCount;
    if (!send_all(sock, &n, sizeof n) || !send_all(sock, out.data(), n * sizeof(fi_addr_t)))
        return 13;
    char opened = 0;
    if (!recv_all(sock, &opened, 1)) return 14;  // the reader has it open now
    if (fi_close(&av->fid) != 0) return 15;
    return 0;
}

TEST(SharedAv, OneProcessFillsAnotherReads) {
    const std::string name = unique("fill");
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(sv[0]);
        _exit(writer(sv[1], name));
    }
    close(sv[1]);
    uint32_t n = 0;
    ASSERT_TRUE(recv_all(sv[0], &n, sizeof n)) << "the writer did not report";
    ASSERT_EQ(n, kFillCount);
    std::vector<fi_addr_t> theirs(n);
    ASSERT_TRUE(recv_all(sv[0], theirs.data(), n * sizeof(fi_addr_t)));
    Ufi u;
    ASSERT_TRUE(u.open());
    fid_av *av = open_named(u, name, FI_READ);
    ASSERT_NE(av, nullptr) << "FI_READ open of the writer's AV";
    const char opened = 1;
    ASSERT_TRUE(send_all(sv[0], &opened, 1));
    EXPECT_EQ(wait_child(child), 0);
    // The writer closed; the reader keeps the AV alive.
    EXPECT_TRUE(shm_file_exists(name));
    std::vector<uint8_t> buf(256);
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(theirs[i], i) << "FI_AV_TABLE indices in insertion order";
        size_t len = buf.size();
        ASSERT_EQ(fi_av_lookup(av, theirs[i], buf.data(), &len), 0) << i;
        const auto expect = make_blob(i);
        ASSERT_EQ(len, expect.size()) << i;
        ASSERT_EQ(std::memcmp(buf.data(), expect.data(), len), 0) << i;
    }
    size_t len = buf.size();
    EXPECT_EQ(fi_av_lookup(av, n, buf.data(), &len), -FI_EINVAL);
    const auto b = make_blob(1);
    EXPECT_EQ(fi_av_insert(av, b.data(), 1, nullptr, 0, nullptr), -FI_EACCES) << "read-only";
    EXPECT_EQ(fi_close(&av->fid), 0);
    EXPECT_FALSE(shm_file_exists(name)) << "the last close removes the AV";
    close(sv[0]);
}

constexpr uint32_t kPerInserter = 3000;

// Child: joins the AV, inserts its own addresses one call at a time (maximal interleaving
// with the other inserter), reports them, and keeps the AV open until told to close.
int inserter(int sock, const std::string &name, uint64_t base) {
    alarm(30);
    Ufi u;
    if (!u.open()) return 20;
    char go = 0;
    fid_av *av = open_named(u, name, 0);
    if (av == nullptr) return 21;
    if (!send_all(sock, &go, 1) || !recv_all(sock, &go, 1)) return 22;  // start together
    std::vector<fi_addr_t> out(kPerInserter);
    for (uint32_t i = 0; i < kPerInserter; ++i) {
        const auto b = make_blob(base + i);
        if (fi_av_insert(av, b.data(), 1, &out[i], 0, nullptr) != 1) return 23;
    }
    if (!send_all(sock, out.data(), out.size() * sizeof(fi_addr_t))) return 24;
    if (!recv_all(sock, &go, 1)) return 25;
    return fi_close(&av->fid) == 0 ? 0 : 26;
}

TEST(SharedAv, TwoProcessesInsertConcurrently) {
    const std::string name = unique("concurrent");
    int sv[2][2];
    pid_t kids[2];
    const uint64_t base[2] = {100000, 200000};
    for (int k = 0; k < 2; ++k) {
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[k]), 0);
        kids[k] = fork();
        ASSERT_GE(kids[k], 0);
        if (kids[k] == 0) {
            close(sv[k][0]);
            _exit(inserter(sv[k][1], name, base[k]));
        }
        close(sv[k][1]);
    }
    char c = 0;
    for (int k = 0; k < 2; ++k)
        ASSERT_TRUE(recv_all(sv[k][0], &c, 1)) << "inserter " << k << " did not join";
    for (int k = 0; k < 2; ++k) ASSERT_TRUE(send_all(sv[k][0], &c, 1));
    std::vector<fi_addr_t> got[2];
    for (int k = 0; k < 2; ++k) {
        got[k].resize(kPerInserter);
        ASSERT_TRUE(recv_all(sv[k][0], got[k].data(), kPerInserter * sizeof(fi_addr_t)))
            << "inserter " << k;
    }
    Ufi u;
    ASSERT_TRUE(u.open());
    fid_av *av = open_named(u, name, FI_READ);
    ASSERT_NE(av, nullptr);
    for (int k = 0; k < 2; ++k) ASSERT_TRUE(send_all(sv[k][0], &c, 1));
    for (int k = 0; k < 2; ++k) EXPECT_EQ(wait_child(kids[k]), 0) << "inserter " << k;
    std::vector<int> owner(2 * kPerInserter, -1);
    std::vector<uint8_t> buf(256);
    for (int k = 0; k < 2; ++k) {
        for (uint32_t i = 0; i < kPerInserter; ++i) {
            const fi_addr_t a = got[k][i];
            ASSERT_LT(a, 2 * kPerInserter) << "indices stay dense";
            ASSERT_EQ(owner[a], -1) << "index " << a << " handed out twice";
            owner[a] = k;
            size_t len = buf.size();
            ASSERT_EQ(fi_av_lookup(av, a, buf.data(), &len), 0);
            const auto expect = make_blob(base[k] + i);
            ASSERT_EQ(len, expect.size());
            ASSERT_EQ(std::memcmp(buf.data(), expect.data(), len), 0) << "index " << a;
        }
    }
    EXPECT_EQ(fi_close(&av->fid), 0);
    EXPECT_FALSE(shm_file_exists(name));
    for (int k = 0; k < 2; ++k) close(sv[k][0]);
}

}  // namespace

namespace {

// Inserts one address into `av`; its fi_addr, or FI_ADDR_NOTAVAIL.
fi_addr_t insert_one(fid_av *av, uint64_t n) {
    const auto b = make_blob(n);
    fi_addr_t a = FI_ADDR_NOTAVAIL;
    return fi_av_insert(av, b.data(), 1, &a, 0, nullptr) == 1 ? a : FI_ADDR_NOTAVAIL;
}

// A process that forks while it has a named AV open: each side's fi_close counts only
// itself. A lock belongs to an open file description, which fork shares: without the child
// taking its own, a child's close looked like the last user and deleted the parent's AV.
TEST(SharedAv, ForkedChildClosingKeepsTheParentsAv) {
    const std::string name = unique("fork-child-closes");
    Ufi u;
    ASSERT_TRUE(u.open());
    fid_av *av = open_named(u, name, 0);
    ASSERT_NE(av, nullptr);
    const fi_addr_t a = insert_one(av, 7);
    ASSERT_NE(a, FI_ADDR_NOTAVAIL);
    ASSERT_TRUE(shm_file_exists(name));

    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(20);
        _exit(fi_close(&av->fid) == 0 ? 0 : 1);  // the inherited handle, closed in the child
    }
    ASSERT_EQ(wait_child(pid), 0);
    EXPECT_TRUE(shm_file_exists(name)) << "the child's close must not delete the parent's AV";
    // Another opener still finds it, with the entry.
    fid_av *again = open_named(u, name, FI_READ);
    ASSERT_NE(again, nullptr);
    const auto want = make_blob(7);
    std::vector<uint8_t> got(want.size() + 16);
    size_t len = got.size();
    ASSERT_EQ(fi_av_lookup(again, a, got.data(), &len), 0);
    ASSERT_EQ(len, want.size());
    EXPECT_EQ(memcmp(got.data(), want.data(), len), 0);
    EXPECT_EQ(fi_close(&again->fid), 0);
    EXPECT_EQ(fi_close(&av->fid), 0);
    EXPECT_FALSE(shm_file_exists(name)) << "the last close removes it";
}

TEST(SharedAv, ParentClosingFirstLeavesTheChildsAv) {
    const std::string name = unique("fork-parent-closes");
    Ufi u;
    ASSERT_TRUE(u.open());
    fid_av *av = open_named(u, name, 0);
    ASSERT_NE(av, nullptr);
    const fi_addr_t a = insert_one(av, 9);
    ASSERT_NE(a, FI_ADDR_NOTAVAIL);
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);

    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(20);
        close(sv[0]);
        char go = 0;
        if (!recv_all(sv[1], &go, 1)) _exit(2);  // the parent has closed its handle
        if (!shm_file_exists(name)) _exit(3);   // still there: the child uses it
        const auto want = make_blob(9);
        std::vector<uint8_t> got(want.size());
        size_t len = got.size();
        if (fi_av_lookup(av, a, got.data(), &len) != 0 || memcmp(got.data(), want.data(), len) != 0)
            _exit(4);
        if (fi_close(&av->fid) != 0) _exit(5);
        _exit(shm_file_exists(name) ? 6 : 0);  // the child was the last user
    }
    close(sv[1]);
    EXPECT_EQ(fi_close(&av->fid), 0);
    const char go = 1;
    ASSERT_TRUE(send_all(sv[0], &go, 1));
    EXPECT_EQ(wait_child(pid), 0);
    close(sv[0]);
    EXPECT_FALSE(shm_file_exists(name));
}

}  // namespace
