// A failed peer's error names its cause, and the log line and the completions agree (issue 30,
// item 8): a peer process that dies is a reset (FI_ECONNRESET), over tcp (whose transport
// reports every failure as an endpoint timeout) and over shared memory (found by the liveness
// check); a host-and-port address where nothing listens is refused (FI_ECONNREFUSED, not
// "no route to host"). Every wait is bounded.
#include "two_process.h"

#include "base/config/config.h"
#include "base/log/testing.h"

#include <netinet/in.h>

#include <algorithm>

#include <string>

#include <gtest/gtest.h>

namespace {

using namespace ufi::two_process;

bool over_tcp() {
    const auto &tls = ufi::config::registry().get_list("UFI_TLS");
    return std::find(tls.begin(), tls.end(), "tcp") != tls.end();
}

// Whether a captured line mentions all of `words`.
bool logged(const ufi::log::ScopedCapture &cap, std::initializer_list<const char *> words) {
    for (const auto &l : cap.lines()) {
        bool all = true;
        for (const char *w : words) all = all && l.find(w) != std::string::npos;
        if (all) return true;
    }
    return false;
}

// B connects, answers one round trip, then exits without closing anything (as a crash or
// kill -9 would leave it). A's large send towards it (rendezvous: it needs B) fails with
// FI_ECONNRESET, and the warning that named the failure says "connection reset" too.
int dies(const char *role, int sock, bool survivor) {
    ufi::log::ScopedCapture cap;
    Side s{role, sock};
    CHECK(open_side(s) == 0);
    uint64_t v = 1, in = 0;
    fi_cq_tagged_entry e{};
    CHECK(fi_trecv(s.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr) == 0);
    CHECK(s.sync());
    CHECK(s.retry([&] { return fi_tsend(s.ep, &v, 8, nullptr, s.peer, 1, nullptr); }) == 0);
    CHECK(s.wait(e) == 1 && s.wait(e) == 1);  // the send and the receive
    CHECK(s.sync());
    if (!survivor) {
        std::fflush(stderr);
        _exit(0);  // no fi_close: the kernel closes its sockets, its FIFOs are left unread
    }
    // Its socket end closes when it exits: then it is gone.
    uint8_t b = 0;
    while (::read(sock, &b, 1) > 0) {
    }
    std::vector<uint8_t> big(4 << 20, 7);
    int ctx = 0;
    ssize_t rc = s.retry([&] { return fi_tsend(s.ep, big.data(), big.size(), nullptr, s.peer, 2, &ctx); });
    if (rc == 0) {  // (else the failure was found already, and the call says it)
        CHECK(s.wait(e) == -FI_EAVAIL);
        fi_cq_err_entry err{};
        CHECK(fi_cq_readerr(s.cq, &err, 0) == 1);
        CHECK(err.op_context == &ctx);
        rc = -err.err;
    }
    if (rc != -FI_ECONNRESET) {
        std::fprintf(stderr, "[%s] the send failed with %s, want %s\n", role,
                     fi_strerror(static_cast<int>(-rc)), fi_strerror(FI_ECONNRESET));
        return 1;
    }
    if (!logged(cap, {"failed", "connection reset", fi_strerror(FI_ECONNRESET)})) {
        std::fprintf(stderr, "[%s] no warning names the reset; the log:\n", role);
        for (const auto &l : cap.lines()) std::fprintf(stderr, "  %s\n", l.c_str());
        return 1;
    }
    close_side(s);
    return 0;
}

TEST(FailureCause, PeerThatDiesIsAResetInTheLogAndTheCompletion) {
    // B is reaped first, as soon as it exits: a zombie still counts as a living process to
    // the shared-memory liveness check.
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const pid_t a = spawn(dies, sv[0], sv[1], "A", true);
    const pid_t b = spawn(dies, sv[1], sv[0], "B", false);
    ::close(sv[0]);
    ::close(sv[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kChildTimeoutS + 10);
    EXPECT_EQ(wait_bounded(b, deadline), 0);
    EXPECT_EQ(wait_bounded(a, deadline), 0);
}

// A tcp port nobody listens on (taken and released here): the connection is refused, and the
// send says FI_ECONNREFUSED, not FI_EHOSTUNREACH.
TEST(FailureCause, PortNobodyListensOnIsRefused) {
    if (!over_tcp()) GTEST_SKIP() << "a host-and-port address needs tcp";
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa), 0);
    socklen_t len = sizeof sa;
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len), 0);
    ::close(fd);  // bound, never listened on, now free: nothing listens there
    const std::string port = std::to_string(ntohs(sa.sin_port));

    ufi::log::ScopedCapture cap;
    Side s{"client", -1};
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED;
    hints->ep_attr->type = FI_EP_RDM;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &s.info), 0);
    fi_freeinfo(hints);
    ASSERT_EQ(open_objects(s), 0);
    ASSERT_EQ(fi_av_insertsvc(s.av, "127.0.0.1", port.c_str(), &s.peer, 0, nullptr), 1);
    uint64_t v = 5;
    int ctx = 0;
    ssize_t rc = s.retry([&] { return fi_tsend(s.ep, &v, 8, nullptr, s.peer, 1, &ctx); });
    if (rc == 0) {  // refused after the call: an error completion
        fi_cq_tagged_entry e{};
        ASSERT_EQ(s.wait(e), -FI_EAVAIL);
        fi_cq_err_entry err{};
        ASSERT_EQ(fi_cq_readerr(s.cq, &err, 0), 1);
        rc = -err.err;
    }
    EXPECT_EQ(rc, -FI_ECONNREFUSED) << fi_strerror(static_cast<int>(-rc));
    EXPECT_TRUE(logged(cap, {"connection refused"})) << "the warning names the cause";
    close_side(s);
}

}  // namespace
