// Raw keys across processes: A registers, sends fi_mr_raw_attr's key (and, as the future key
// request will, build_key_reply's bytes for an 8-byte key) through a socketpair; B maps them
// with fi_mr_map_raw in its own domain, which unpacks A's UCT rkeys here, and checks what it
// got. Every wait is bounded (poll timeouts and alarm()).
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/mr/binding.h"
#include "runtime/mr/mapped_keys.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kTimeoutMs = 20000;

bool send_all(int fd, const void *p, size_t n) {
    const char *c = static_cast<const char *>(p);
    while (n > 0) {
        pollfd pfd{fd, POLLOUT, 0};
        if (poll(&pfd, 1, kTimeoutMs) != 1) return false;
        const ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0) return false;
        c += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool recv_all(int fd, void *p, size_t n) {
    char *c = static_cast<char *>(p);
    while (n > 0) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, kTimeoutMs) != 1) return false;
        const ssize_t r = recv(fd, c, n, 0);
        if (r <= 0) return false;
        c += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

bool send_blob(int fd, const std::vector<uint8_t> &b) {
    const uint64_t n = b.size();
    return send_all(fd, &n, sizeof n) && send_all(fd, b.data(), b.size());
}

bool recv_blob(int fd, std::vector<uint8_t> &b) {
    uint64_t n = 0;
    if (!recv_all(fd, &n, sizeof n) || n > (1u << 20)) return false;
    b.resize(n);
    return recv_all(fd, b.data(), n);
}

struct Ufi {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    int open(int mr_mode) {
        fi_info *hints = fi_allocinfo();
        hints->domain_attr->mr_mode = mr_mode;
        int rc = fi_getinfo(fi_version(), nullptr, nullptr, 0, hints, &info);
        fi_freeinfo(hints);
        if (rc != 0) return rc;
        if ((rc = fi_fabric(info->fabric_attr, &fabric, nullptr)) != 0) return rc;
        return fi_domain(fabric, info, &domain, nullptr);
    }
    ~Ufi() {
        if (domain != nullptr) fi_close(&domain->fid);
        if (fabric != nullptr) fi_close(&fabric->fid);
        fi_freeinfo(info);
    }
};

// Process B: maps what A sends, reports a status line back. Returns the exit code.
int peer_b(int fd, int mr_mode) {
    alarm(30);
    Ufi u;
    std::string report;
    auto fail = [&](const std::string &why) {
        report = "B: " + why;
        const std::vector<uint8_t> b(report.begin(), report.end());
        send_blob(fd, b);
        return 1;
    };
    if (u.open(mr_mode) != 0) return fail("cannot open a domain");
    std::vector<uint8_t> hdr, raw, reply;
    if (!recv_blob(fd, hdr) || hdr.size() != 16 || !recv_blob(fd, raw) || !recv_blob(fd, reply)) {
        return fail("nothing received from A");
    }
    uint64_t base = 0, key = 0;
    std::memcpy(&base, hdr.data(), 8);
    std::memcpy(&key, hdr.data() + 8, 8);

    uint64_t mapped = 0;
    int rc = fi_mr_map_raw(u.domain, base, raw.data(), raw.size(), &mapped, 0);
    if (rc != 0) return fail("fi_mr_map_raw: " + std::to_string(rc));
    auto *d = ufi::runtime::object_of<ufi::runtime::Domain>(&u.domain->fid, FI_CLASS_DOMAIN);
    const ufi::runtime::mr::MappedKey *m = ufi::runtime::mr::find_mapped_key(d, mapped);
    if (m == nullptr) return fail("mapped key not found");
    if (m->bundle.key != key) return fail("bundle key differs from A's fi_mr_key");
    if (m->bundle.mds.empty()) return fail("no memory domain in A's key");
    for (size_t i = 0; i < m->bundle.mds.size(); ++i) {
        if (!m->rkeys.at(0, i).usable())
            return fail("rkey of " + m->bundle.mds[i].md + " unusable: " + m->rkeys.at(0, i).why);
    }
    std::string mds;
    for (const auto &md : m->bundle.mds) mds += md.md + " ";
    // A corrupted key is refused, the good one unmaps once.
    std::vector<uint8_t> bad = raw;
    bad[bad.size() / 2] ^= 1;
    uint64_t junk = 0;
    if (fi_mr_map_raw(u.domain, base, bad.data(), bad.size(), &junk, 0) != -FI_EINVAL)
        return fail("corrupt key mapped");
    if (fi_mr_unmap_key(u.domain, mapped) != 0) return fail("fi_mr_unmap_key");
    // The key-request reply is the same format: it maps too.
    rc = fi_mr_map_raw(u.domain, base, reply.data(), reply.size(), &mapped, 0);
    if (rc != 0) return fail("mapping the key reply: " + std::to_string(rc));
    if (fi_mr_unmap_key(u.domain, mapped) != 0) return fail("fi_mr_unmap_key(reply)");
    report = "OK " + mds;
    send_blob(fd, std::vector<uint8_t>(report.begin(), report.end()));
    return 0;
}

void run_pair(int mr_mode) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(sv[0]);
        _exit(peer_b(sv[1], mr_mode));
    }
    close(sv[1]);
    const int fd = sv[0];
    {
        Ufi u;
        ASSERT_EQ(u.open(mr_mode), 0);
        std::vector<char> buf(1 << 20, 'a');
        fid_mr *mr = nullptr;
        ASSERT_EQ(fi_mr_reg(u.domain, buf.data(), buf.size(), FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                            77, 0, &mr, nullptr),
                  0);
        uint64_t base = 0;
        size_t size = 4096;
        std::vector<uint8_t> raw(size);
        ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
        raw.resize(size);
        const uint64_t key = fi_mr_key(mr);
        std::vector<uint8_t> hdr(16);
        std::memcpy(hdr.data(), &base, 8);
        std::memcpy(hdr.data() + 8, &key, 8);
        auto *d = ufi::runtime::object_of<ufi::runtime::Domain>(&u.domain->fid, FI_CLASS_DOMAIN);
        std::vector<uint8_t> reply;
        ASSERT_EQ(ufi::runtime::mr::build_key_reply(d, key, reply), 0);
        ASSERT_TRUE(send_blob(fd, hdr) && send_blob(fd, raw) && send_blob(fd, reply));
        std::vector<uint8_t> result;
        ASSERT_TRUE(recv_blob(fd, result)) << "no answer from B within the timeout";
        const std::string text(result.begin(), result.end());
        EXPECT_EQ(text.rfind("OK", 0), 0u) << text;
        std::printf("B unpacked the rkeys of: %s\n", text.c_str() + (text.size() > 3 ? 3 : 0));
        EXPECT_EQ(fi_close(&mr->fid), 0);
    }
    close(fd);
    int status = 0;
    for (int i = 0; i < 300 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(100000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        FAIL() << "B did not exit";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(MrExchange, RawKeyMapsInAnotherProcessOffsetAddressing) {
    alarm(50);
    run_pair(0);
    alarm(0);
}

TEST(MrExchange, RawKeyMapsInAnotherProcessVirtualAddressing) {
    alarm(50);
    run_pair(FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED);
    alarm(0);
}

}  // namespace
