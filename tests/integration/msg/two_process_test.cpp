// Messaging between two processes (fork; a socketpair carries the addresses and the steps'
// synchronisation): tagged messages of every size class, posted first and unexpected, checked
// byte for byte; untagged messages with remote CQ data and the sender's fi_addr; directed
// receives; a thousand round trips; a burst of messages in order. Meson runs it over shared
// memory and over tcp on loopback. Every wait is bounded (alarm() in the children, a timed
// waitpid loop in the parent).
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kChildTimeoutS = 60;
constexpr int kWaitMs = 20000;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::fprintf(stderr, "[%s %d] %s:%d: check failed: %s\n", role, int(getpid()),        \
                         __FILE__, __LINE__, #cond);                                              \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

const size_t kSizes[] = {0, 1, 64, 76, 77, 4000, 8192, 8300, 65536, 300000, (2 << 20) + 5};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed ^ (i * 13 + (i >> 8)));
    return v;
}

struct Side {
    const char *role;
    int sock;
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_ep *ep = nullptr;
    fi_addr_t peer = FI_ADDR_NOTAVAIL;

    // Socket I/O that keeps the endpoint progressed meanwhile (the peer's sends may need this
    // side's progress to complete: a shared-memory FIFO holds only so much).
    bool io(void *buf, size_t len, bool out) {
        auto *p = static_cast<uint8_t *>(buf);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (len > 0) {
            pollfd pfd{sock, short(out ? POLLOUT : POLLIN), 0};
            const int ready = poll(&pfd, 1, 0);
            if (ready == 0) {
                if (std::chrono::steady_clock::now() > deadline) return false;
                if (cq != nullptr) {
                    fi_cq_tagged_entry none;
                    (void)fi_cq_read(cq, &none, 0);  // progress only: reads no entry
                }
                continue;
            }
            if (ready != 1) return false;
            const ssize_t n = out ? ::write(sock, p, len) : ::read(sock, p, len);
            if (n <= 0) return false;
            p += n;
            len -= size_t(n);
        }
        return true;
    }
    // A step both sides reach (the socket, not the fabric).
    bool sync() {
        uint8_t b = 1;
        return io(&b, 1, true) && io(&b, 1, false);
    }
    // Reads one completion, progressing; -FI_ETIMEDOUT after kWaitMs.
    ssize_t wait(fi_cq_tagged_entry &e, fi_addr_t *src = nullptr) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_cq_readfrom(cq, &e, 1, src);
            if (rc != -FI_EAGAIN) return rc;
        }
        return -FI_ETIMEDOUT;
    }
    template <typename Post>
    ssize_t retry(Post &&post) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        for (;;) {
            const ssize_t rc = post();
            if (rc != -FI_EAGAIN || std::chrono::steady_clock::now() > deadline) return rc;
            fi_cq_tagged_entry none;
            (void)fi_cq_read(cq, &none, 0);
        }
    }
};

int open_side(Side &s) {
    const char *role = s.role;
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
    hints->ep_attr->type = FI_EP_RDM;
    CHECK(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &s.info) == 0);
    fi_freeinfo(hints);
    CHECK(fi_fabric(s.info->fabric_attr, &s.fabric, nullptr) == 0);
    CHECK(fi_domain(s.fabric, s.info, &s.domain, nullptr) == 0);
    fi_av_attr av_attr{};
    CHECK(fi_av_open(s.domain, &av_attr, &s.av, nullptr) == 0);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 4096;
    CHECK(fi_cq_open(s.domain, &cq_attr, &s.cq, nullptr) == 0);
    CHECK(fi_endpoint(s.domain, s.info, &s.ep, nullptr) == 0);
    CHECK(fi_ep_bind(s.ep, &s.av->fid, 0) == 0);
    CHECK(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV) == 0);
    CHECK(fi_enable(s.ep) == 0);
    size_t len = 0;
    CHECK(fi_getname(&s.ep->fid, nullptr, &len) == -FI_ETOOSMALL);
    std::vector<uint8_t> mine(len), theirs(len);
    CHECK(fi_getname(&s.ep->fid, mine.data(), &len) == 0);
    uint32_t n = static_cast<uint32_t>(len), m = 0;
    CHECK(s.io(&n, sizeof n, true) && s.io(mine.data(), len, true));
    CHECK(s.io(&m, sizeof m, false) && m == n && s.io(theirs.data(), m, false));
    CHECK(fi_av_insert(s.av, theirs.data(), 1, &s.peer, 0, nullptr) == 1);
    return 0;
}

void close_side(Side &s) {
    if (s.ep) fi_close(&s.ep->fid);
    if (s.cq) fi_close(&s.cq->fid);
    if (s.av) fi_close(&s.av->fid);
    if (s.domain) fi_close(&s.domain->fid);
    if (s.fabric) fi_close(&s.fabric->fid);
    if (s.info) fi_freeinfo(s.info);
}

// A sends, B receives: every size, B's receive posted first, then every size unexpected.
int sizes(Side &s, bool sender) {
    const char *role = s.role;
    for (int unexpected = 0; unexpected < 2; ++unexpected) {
        for (size_t n : kSizes) {
            const auto out = pattern(n, static_cast<uint8_t>(n + unexpected));
            fi_cq_tagged_entry e{};
            if (sender) {
                if (!unexpected) CHECK(s.sync());  // B has posted
                CHECK(s.retry([&] { return fi_tsend(s.ep, out.data(), n, nullptr, s.peer, 42 + n, nullptr); }) == 0);
                if (unexpected) CHECK(s.sync());  // sent (or announced) before B posts
                // Eager sends complete at once, rendezvous ones once B took the data.
                CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
            } else {
                std::vector<uint8_t> in(n + 1, 0xee);
                if (!unexpected) {
                    CHECK(fi_trecv(s.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 42 + n, 0, nullptr) == 0);
                    CHECK(s.sync());
                } else {
                    CHECK(s.sync());
                    // Let it all arrive first.
                    for (int i = 0; i < 1000; ++i) {
                        fi_cq_tagged_entry none;
                        (void)fi_cq_read(s.cq, &none, 0);
                    }
                    CHECK(fi_trecv(s.ep, in.data(), n, nullptr, FI_ADDR_UNSPEC, 42 + n, 0, nullptr) == 0);
                }
                fi_addr_t src = 0;
                CHECK(s.wait(e, &src) == 1);
                CHECK(e.flags == (FI_RECV | FI_TAGGED) && e.len == n && e.tag == 42 + n);
                CHECK(src == s.peer);
                CHECK(std::equal(out.begin(), out.end(), in.begin()));
                CHECK(in[n] == 0xee);
            }
        }
    }
    return 0;
}

// A thousand untagged round trips with remote CQ data, both directions checked.
int round_trips(Side &s, bool first) {
    const char *role = s.role;
    for (uint64_t i = 0; i < 1000; ++i) {
        uint64_t in = 0, out = i * 3 + (first ? 1 : 2);
        fi_cq_tagged_entry e{};
        fi_addr_t src = 0;
        CHECK(fi_recv(s.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, nullptr) == 0);
        if (first) CHECK(s.retry([&] { return fi_injectdata(s.ep, &out, sizeof out, i, s.peer); }) == 0);
        CHECK(s.wait(e, &src) == 1);
        CHECK(e.flags == (FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA) && e.data == i && src == s.peer);
        CHECK(in == i * 3 + (first ? 2 : 1));
        if (!first) CHECK(s.retry([&] { return fi_injectdata(s.ep, &out, sizeof out, i, s.peer); }) == 0);
    }
    return 0;
}

// A burst of 3,000 messages of mixed sizes arrives in the order sent (FI_ORDER_SAS); a
// directed receive takes only its source's messages.
int burst(Side &s, bool sender) {
    const char *role = s.role;
    constexpr uint32_t kCount = 3000;
    if (sender) {
        std::vector<std::vector<uint32_t>> bodies;
        bodies.reserve(kCount);
        for (uint32_t i = 0; i < kCount; ++i) {
            bodies.emplace_back(1 + (i % 11 == 0 ? 5000 : i % 40), i);
            const auto &b = bodies.back();
            CHECK(s.retry([&] { return fi_tsend(s.ep, b.data(), b.size() * 4, nullptr, s.peer, 7, nullptr); }) == 0);
        }
        size_t done = 0;
        fi_cq_tagged_entry e[32];
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (done < kCount && std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_cq_read(s.cq, e, 32);
            CHECK(rc > 0 || rc == -FI_EAGAIN);
            if (rc > 0) done += size_t(rc);
        }
        CHECK(done == kCount);
        CHECK(s.sync());
    } else {
        std::vector<uint32_t> in(6000);
        for (uint32_t i = 0; i < kCount; ++i) {
            CHECK(fi_trecv(s.ep, in.data(), in.size() * 4, nullptr, s.peer, 7, 0, nullptr) == 0);
            fi_cq_tagged_entry e{};
            CHECK(s.wait(e) == 1);
            CHECK(in[0] == i);
            CHECK(e.len == (1 + (i % 11 == 0 ? 5000 : i % 40)) * 4);
        }
        CHECK(s.sync());
    }
    return 0;
}

int run(const char *role, int sock, bool a) {
    Side s;
    s.role = role;
    s.sock = sock;
    int rc = open_side(s);
    if (rc == 0) rc = sizes(s, a);
    if (rc == 0) rc = round_trips(s, a);
    if (rc == 0) rc = burst(s, a);
    if (rc == 0 && !s.sync()) rc = 1;  // neither closes while the other still works
    close_side(s);
    return rc;
}

pid_t spawn(int sock, int other, const char *role, bool a) {
    const pid_t pid = fork();
    if (pid == 0) {
        ::close(other);
        alarm(kChildTimeoutS);
        const int rc = run(role, sock, a);
        std::fflush(stderr);
        _exit(rc);
    }
    return pid;
}

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

TEST(TwoProcesses, MessagesOfEverySizeOrderAndSource) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const pid_t a = spawn(sv[0], sv[1], "A", true);
    const pid_t b = spawn(sv[1], sv[0], "B", false);
    ::close(sv[0]);
    ::close(sv[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kChildTimeoutS + 10);
    EXPECT_EQ(wait_bounded(a, deadline), 0) << "sender";
    EXPECT_EQ(wait_bounded(b, deadline), 0) << "receiver";
}

}  // namespace
