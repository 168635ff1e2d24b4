// Two processes over ufi (fork; a socketpair carries the addresses and the steps'
// synchronisation): each side's objects, socket I/O that keeps the endpoint progressed, and
// bounded waits. Shared by the two-process messaging tests.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace ufi::two_process {


inline constexpr int kChildTimeoutS = 60;
inline constexpr int kWaitMs = 20000;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::fprintf(stderr, "[%s %d] %s:%d: check failed: %s\n", role, int(getpid()),        \
                         __FILE__, __LINE__, #cond);                                              \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

inline const size_t kSizes[] = {0, 1, 64, 76, 77, 4000, 8192, 8300, 65536, 300000, (2 << 20) + 5};

inline std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
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
    fi_wait_obj wait_obj = FI_WAIT_NONE;  // FI_WAIT_UNSPEC: fi_cq_sread may be used
    // FI_PROGRESS_AUTO: open_side asks for it (data and control progress; a progress thread).
    fi_progress progress = FI_PROGRESS_UNSPEC;
    // Called by open_objects between binding and fi_enable (what binds only then: counters).
    int (*before_enable)(Side &) = nullptr;

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
                    sched_yield();
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
            // Both processes poll: on a machine with fewer cores than pollers (CI runs tests
            // side by side), give the peer the core instead of spinning out the time slice.
            sched_yield();
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
            sched_yield();
        }
    }
};

// Opens the fabric, domain, AV, CQ and an endpoint bound to them from s.info (set by the
// caller), not enabled yet (fi_setname may still name it).
inline int open_unenabled(Side &s) {
    const char *role = s.role;
    CHECK(fi_fabric(s.info->fabric_attr, &s.fabric, nullptr) == 0);
    CHECK(fi_domain(s.fabric, s.info, &s.domain, nullptr) == 0);
    fi_av_attr av_attr{};
    CHECK(fi_av_open(s.domain, &av_attr, &s.av, nullptr) == 0);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 4096;
    cq_attr.wait_obj = s.wait_obj;
    CHECK(fi_cq_open(s.domain, &cq_attr, &s.cq, nullptr) == 0);
    CHECK(fi_endpoint(s.domain, s.info, &s.ep, nullptr) == 0);
    CHECK(fi_ep_bind(s.ep, &s.av->fid, 0) == 0);
    CHECK(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV) == 0);
    return 0;
}

// open_unenabled(), then fi_enable.
inline int open_objects(Side &s) {
    const char *role = s.role;
    CHECK(open_unenabled(s) == 0);
    if (s.before_enable != nullptr) CHECK(s.before_enable(s) == 0);
    CHECK(fi_enable(s.ep) == 0);
    return 0;
}

// Sends this side's name over the socket, reads the peer's and inserts it (s.peer).
inline int exchange_names(Side &s) {
    const char *role = s.role;
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

// The usual side: tagged and untagged messages (and `extra_caps`), the default address
// format, and the peer's name exchanged over the socket and inserted.
// `domain_key` (with its length): the domain's authorization key (domain_attr->auth_key),
// which the endpoint presents and needs its peers to hold.
inline int open_side(Side &s, uint64_t extra_caps = 0, const void *domain_key = nullptr,
                     size_t domain_key_len = 0) {
    const char *role = s.role;
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV | extra_caps;
    hints->ep_attr->type = FI_EP_RDM;
    if (s.progress != FI_PROGRESS_UNSPEC) {
        hints->domain_attr->data_progress = s.progress;
        hints->domain_attr->control_progress = s.progress;
    }
    if (domain_key_len != 0) {  // (fi_freeinfo frees it)
        hints->domain_attr->auth_key = static_cast<uint8_t *>(std::malloc(domain_key_len));
        std::memcpy(hints->domain_attr->auth_key, domain_key, domain_key_len);
        hints->domain_attr->auth_key_size = domain_key_len;
    }
    CHECK(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &s.info) == 0);
    fi_freeinfo(hints);
    CHECK(open_objects(s) == 0);
    return exchange_names(s);
}

// Closes what the side opened; the handles are cleared (io() then only moves bytes).
inline void close_side(Side &s) {
    if (s.ep) fi_close(&s.ep->fid);
    if (s.cq) fi_close(&s.cq->fid);
    if (s.av) fi_close(&s.av->fid);
    if (s.domain) fi_close(&s.domain->fid);
    if (s.fabric) fi_close(&s.fabric->fid);
    if (s.info) fi_freeinfo(s.info);
    s.ep = nullptr;
    s.cq = nullptr;
    s.av = nullptr;
    s.domain = nullptr;
    s.fabric = nullptr;
    s.info = nullptr;
}

// One tagged round trip (tag 1) with s.peer: both sides are connected afterwards.
inline int round_trip(Side &s) {
    const char *role = s.role;
    uint64_t v = 1, in = 0;
    fi_cq_tagged_entry e{};
    CHECK(fi_trecv(s.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr) == 0);
    CHECK(s.sync());
    CHECK(s.retry([&] { return fi_tsend(s.ep, &v, 8, nullptr, s.peer, 1, nullptr); }) == 0);
    for (int i = 0; i < 2; ++i) CHECK(s.wait(e) == 1);
    return 0;
}

// Opens this side (fi_cq_sread allowed, `caps` beyond messaging), then one round trip, so
// both sides are connected before what the test does to them.
inline int open_connected(Side &s, const char *role, int sock, uint64_t caps = 0) {
    s.role = role;
    s.sock = sock;
    s.wait_obj = FI_WAIT_UNSPEC;
    CHECK(open_side(s, caps) == 0);
    return round_trip(s);
}

// How long a peer's failure or close may take to reach the operations towards it.
inline constexpr int kFailureBoundMs = 10000;

// Reads completions with fi_cq_sread until `want` arrived (successes and errors); counts the
// errors and remembers whether `ctx` failed. False when kFailureBoundMs passed first.
inline bool collect(Side &s, size_t want, void *ctx, size_t &errors, bool &ctx_failed) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailureBoundMs);
    size_t got = 0;
    errors = 0;
    ctx_failed = false;
    while (got < want && std::chrono::steady_clock::now() < deadline) {
        fi_cq_tagged_entry e{};
        const ssize_t rc = fi_cq_sread(s.cq, &e, 1, nullptr, 1000);
        if (rc == 1) {
            ++got;
        } else if (rc == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            if (fi_cq_readerr(s.cq, &err, 0) == 1) {
                ++got;
                ++errors;
                if (err.op_context == ctx) ctx_failed = err.err != 0;
                std::fprintf(stderr, "[%s] error completion: %s\n", s.role, fi_strerror(err.err));
            }
        } else if (rc != -FI_EAGAIN && rc != -FI_ETIMEDOUT) {
            std::fprintf(stderr, "[%s] fi_cq_sread: %s\n", s.role, fi_strerror(int(-rc)));
            return false;
        }
    }
    return got == want;
}

// Forks a child that runs `run(role, sock, a)` under alarm(kChildTimeoutS) and exits with
// its result.
inline pid_t spawn(int (*run)(const char *, int, bool), int sock, int other, const char *role,
                   bool a) {
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

inline int wait_bounded(pid_t pid, std::chrono::steady_clock::time_point deadline) {
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

// Runs run(role, sock, true) and run(role, sock, false) in two children joined by a socket
// pair; the children's exit statuses (0: passed), within a bound.
struct PairResult {
    int a = -1;
    int b = -1;
};
inline PairResult run_pair(int (*run)(const char *, int, bool), const char *role_a,
                           const char *role_b) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return {};
    const pid_t a = spawn(run, sv[0], sv[1], role_a, true);
    const pid_t b = spawn(run, sv[1], sv[0], role_b, false);
    ::close(sv[0]);
    ::close(sv[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kChildTimeoutS + 10);
    PairResult r;
    r.a = wait_bounded(a, deadline);
    r.b = wait_bounded(b, deadline);
    return r;
}

}  // namespace ufi::two_process
