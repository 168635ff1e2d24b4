// Two processes (fork, a socketpair for the address exchange) each enable an endpoint on every
// domain fi_getinfo offers under the test's UFI_TLS (shm or tcp, set by meson), swap their
// fi_getname blobs, insert the peer's into their AV, and check that fi_av_lookup returns it,
// that fi_av_straddr prints fi_ufi://, and that each transport's iface reports the peer's
// record reachable (uct_iface_is_reachable; self never reaches another process). Every wait
// is bounded: alarm() in the children, a timed waitpid loop in the parent.
#include "runtime/ep/endpoint.h"
#include "runtime/fid_cast.h"
#include "transports/address.h"

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace address = ufi::transports::address;

constexpr int kChildTimeoutS = 30;
constexpr int kSocketTimeoutMs = 20000;
// Child exit codes.
constexpr int kOk = 0;

#define CHILD_CHECK(cond)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::fprintf(stderr, "[child %d] %s:%d: check failed: %s\n", int(getpid()), __FILE__, \
                         __LINE__, #cond);                                                        \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

bool io_all(int fd, void *buf, size_t len, bool write_side) {
    auto *p = static_cast<uint8_t *>(buf);
    while (len > 0) {
        pollfd pfd{fd, short(write_side ? POLLOUT : POLLIN), 0};
        if (poll(&pfd, 1, kSocketTimeoutMs) != 1) return false;
        const ssize_t n = write_side ? ::write(fd, p, len) : ::read(fd, p, len);
        if (n <= 0) return false;
        p += n;
        len -= size_t(n);
    }
    return true;
}

bool send_blob(int fd, const std::vector<uint8_t> &b) {
    uint32_t n = uint32_t(b.size());
    return io_all(fd, &n, sizeof n, true) &&
           io_all(fd, const_cast<uint8_t *>(b.data()), b.size(), true);
}

bool recv_blob(int fd, std::vector<uint8_t> &b) {
    uint32_t n = 0;
    if (!io_all(fd, &n, sizeof n, false) || n > 65536) return false;
    b.resize(n);
    return io_all(fd, b.data(), n, false);
}

// One side: every domain in turn.
int run_side(int sock, const char *who) {
    fi_info *info = nullptr;
    CHILD_CHECK(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, nullptr, &info) == 0);
    fid_fabric *fabric = nullptr;
    CHILD_CHECK(fi_fabric(info->fabric_attr, &fabric, nullptr) == 0);
    int result = kOk;
    for (fi_info *cur = info; cur != nullptr && result == kOk; cur = cur->next) {
        // (Connected entries exchange no addresses through an AV: msg_ep_process_test.)
        if (cur->ep_attr->type == FI_EP_MSG) continue;
        fid_domain *domain = nullptr;
        CHILD_CHECK(fi_domain(fabric, cur, &domain, nullptr) == 0);
        fi_av_attr attr{};
        attr.type = FI_AV_TABLE;
        fid_av *av = nullptr;
        CHILD_CHECK(fi_av_open(domain, &attr, &av, nullptr) == 0);
        fi_cq_attr cq_attr{};
        fid_cq *cq = nullptr;
        CHILD_CHECK(fi_cq_open(domain, &cq_attr, &cq, nullptr) == 0);
        fid_ep *ep = nullptr;
        CHILD_CHECK(fi_endpoint(domain, cur, &ep, nullptr) == 0);
        CHILD_CHECK(fi_ep_bind(ep, &av->fid, 0) == 0);
        CHILD_CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) == 0);
        CHILD_CHECK(fi_enable(ep) == 0);

        size_t len = 0;
        CHILD_CHECK(fi_getname(&ep->fid, nullptr, &len) == -FI_ETOOSMALL);
        std::vector<uint8_t> mine(len);
        CHILD_CHECK(fi_getname(&ep->fid, mine.data(), &len) == 0);
        std::vector<uint8_t> peer;
        CHILD_CHECK(send_blob(sock, mine));
        CHILD_CHECK(recv_blob(sock, peer));
        CHILD_CHECK(peer != mine);

        address::EndpointAddress pa, ma;
        std::string why;
        CHILD_CHECK(address::unpack(peer.data(), peer.size(), pa, &why));
        CHILD_CHECK(address::unpack(mine.data(), mine.size(), ma, &why));
        CHILD_CHECK(pa.uuid != ma.uuid);

        fi_addr_t fa = FI_ADDR_NOTAVAIL;
        CHILD_CHECK(fi_av_insert(av, peer.data(), 1, &fa, 0, nullptr) == 1);
        CHILD_CHECK(fa != FI_ADDR_NOTAVAIL);
        std::vector<uint8_t> looked(peer.size() + 16);
        size_t looked_len = looked.size();
        CHILD_CHECK(fi_av_lookup(av, fa, looked.data(), &looked_len) == 0);
        CHILD_CHECK(looked_len == peer.size());
        looked.resize(looked_len);
        CHILD_CHECK(looked == peer);
        char text[1024];
        size_t text_len = sizeof text;
        CHILD_CHECK(fi_av_straddr(av, peer.data(), text, &text_len) != nullptr);
        CHILD_CHECK(std::strncmp(text, "fi_ufi://", 9) == 0);

        auto *e = ufi::runtime::object_of<ufi::runtime::ep::Endpoint>(ep);
        for (const auto &rec : pa.records) {
            const bool reachable = e->peer_reachable(rec);
            std::fprintf(stderr, "[%s] domain %s: peer's %s record %s\n", who,
                         cur->domain_attr->name, rec.tl.c_str(),
                         reachable ? "reachable" : "not reachable");
            // self reaches only its own iface; shared memory and tcp reach a same-host peer.
            CHILD_CHECK(reachable == (rec.tl != "self"));
        }
        // Both sides finish this domain before either closes it.
        uint8_t done = 1;
        CHILD_CHECK(io_all(sock, &done, 1, true) && io_all(sock, &done, 1, false));
        CHILD_CHECK(fi_close(&ep->fid) == 0);
        CHILD_CHECK(fi_close(&cq->fid) == 0);
        CHILD_CHECK(fi_close(&av->fid) == 0);
        CHILD_CHECK(fi_close(&domain->fid) == 0);
    }
    CHILD_CHECK(fi_close(&fabric->fid) == 0);
    fi_freeinfo(info);
    return result;
}

pid_t spawn(int sock, int other, const char *who) {
    const pid_t pid = fork();
    if (pid == 0) {
        ::close(other);
        alarm(kChildTimeoutS);
        const int rc = run_side(sock, who);
        std::fflush(stderr);
        _exit(rc);
    }
    return pid;
}

// The child's exit status, or -1 after `deadline` (the child is killed).
int wait_bounded(pid_t pid, std::chrono::steady_clock::time_point deadline) {
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

TEST(EpExchange, TwoProcessesSwapAndReachAddresses) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const pid_t a = spawn(sv[0], sv[1], "a");
    ASSERT_GT(a, 0);
    const pid_t b = spawn(sv[1], sv[0], "b");
    ASSERT_GT(b, 0);
    ::close(sv[0]);
    ::close(sv[1]);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(kChildTimeoutS + 5);
    const int ra = wait_bounded(a, deadline);
    const int rb = wait_bounded(b, deadline);
    EXPECT_EQ(ra, kOk);
    EXPECT_EQ(rb, kOk);
}

}  // namespace
