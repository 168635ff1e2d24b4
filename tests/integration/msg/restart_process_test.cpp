// A client process that dies and comes back under its name: the first client process talks to
// the server, leaves a large send from the server half done and exits without closing
// anything (a crash); a second process opens its endpoint with the first one's name
// (fi_setname with the earlier fi_getname, as fabtests' fi_rdm_multi_client -R does through
// src_addr) and talks to the server through the server's old AV entry. The server's send to
// the dead process fails (FI_ECONNRESET when the new process's handshake told it, or the
// transport's error when tcp or the shared-memory peer check noticed the death first); then
// everything between the server and the new process works, both ways, eager and rendezvous.
#include "two_process.h"

#include <gtest/gtest.h>

namespace {

using namespace ufi::two_process;

constexpr size_t kBig = 4 << 20;
constexpr int kAddrInUse = 77;  // the second client could not listen on the name's tcp port

// One message each way with `tag` (`first` sends first), checked byte for byte; each side
// sees its receive and its send complete, in whichever order they come.
int exchange(Side &s, bool first, uint64_t tag, size_t len) {
    const char *role = s.role;
    const auto out = pattern(len, static_cast<uint8_t>(tag));
    std::vector<uint8_t> in(len, 0);
    CHECK(fi_trecv(s.ep, in.data(), len, nullptr, FI_ADDR_UNSPEC, tag, 0, &in) == 0);
    CHECK(s.sync());
    auto send = [&] { return s.retry([&] { return fi_tsend(s.ep, out.data(), len, nullptr, s.peer, tag, nullptr); }); };
    if (first) CHECK(send() == 0);
    bool received = false, sent = false;
    while (!received || !sent) {
        fi_cq_tagged_entry e{};
        fi_addr_t src = FI_ADDR_NOTAVAIL;
        CHECK(s.wait(e, &src) == 1);
        if (e.flags & FI_SEND) {
            CHECK(!sent);
            sent = true;
            continue;
        }
        CHECK(!received && e.op_context == &in && e.len == len && src == s.peer);
        CHECK(in == out);
        received = true;
        if (!first) CHECK(send() == 0);
    }
    return 0;
}

// The server: the first client, then the second under the same AV entry.
int server(const char *role, int sock) {
    Side s{role, sock};
    CHECK(open_side(s) == 0);
    CHECK(exchange(s, true, 1, 8) == 0);
    // A large send the first client never receives (by rendezvous it waits for the client).
    const auto big = pattern(kBig, 5);
    CHECK(s.retry([&] { return fi_tsend(s.ep, big.data(), kBig, nullptr, s.peer, 2, nullptr); }) == 0);
    CHECK(s.sync());  // the client has seen it (or its first part) and exits
    // The second client: it gets this side's name again, and speaks first.
    size_t len = 0;
    CHECK(fi_getname(&s.ep->fid, nullptr, &len) == -FI_ETOOSMALL);
    std::vector<uint8_t> mine(len);
    CHECK(fi_getname(&s.ep->fid, mine.data(), &len) == 0);
    CHECK(s.io(mine.data(), len, true));
    uint8_t ready = 0;
    CHECK(s.io(&ready, 1, false));
    if (ready == 0) return kAddrInUse;
    // Its message, and what became of the large send, in either order.
    const auto hello = pattern(8, 3);
    std::vector<uint8_t> in(8, 0);
    CHECK(fi_trecv(s.ep, in.data(), 8, nullptr, FI_ADDR_UNSPEC, 3, 0, &in) == 0);
    CHECK(s.sync());
    bool received = false, failed = false;
    while (!received || !failed) {
        fi_cq_tagged_entry e{};
        fi_addr_t src = FI_ADDR_NOTAVAIL;
        const ssize_t rc = s.wait(e, &src);
        if (rc == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            CHECK(fi_cq_readerr(s.cq, &err, 0) == 1);
            std::fprintf(stderr, "[%s] the send to the dead client: %s\n", role, fi_strerror(err.err));
            CHECK(!failed && err.op_context == nullptr && err.err != 0);
            failed = true;
            continue;
        }
        CHECK(rc == 1 && e.op_context == &in && src == s.peer);
        CHECK(in == hello);
        received = true;
    }
    CHECK(exchange(s, false, 4, 8) == 0);
    CHECK(exchange(s, true, 5, kBig) == 0);
    CHECK(exchange(s, false, 6, kBig) == 0);
    close_side(s);
    return 0;
}

// The first client: one round trip, sees the large send arrive, and dies.
int first_client(const char *role, int sock, std::vector<uint8_t> &name) {
    Side s{role, sock};
    CHECK(open_side(s) == 0);
    CHECK(exchange(s, false, 1, 8) == 0);
    size_t len = 0;
    CHECK(fi_getname(&s.ep->fid, nullptr, &len) == -FI_ETOOSMALL);
    name.resize(len);
    CHECK(fi_getname(&s.ep->fid, name.data(), &len) == 0);
    fi_cq_tagged_entry none;
    for (int i = 0; i < 2000; ++i) (void)fi_cq_read(s.cq, &none, 0);
    uint8_t b = 1;  // (sync() would progress the endpoint after the server's half)
    CHECK(::write(sock, &b, 1) == 1 && ::read(sock, &b, 1) == 1);
    return 0;  // exits without closing anything
}

// The second client: the first one's name, the server's name again, and round trips.
int second_client(const char *role, int sock, const std::vector<uint8_t> &name) {
    Side s{role, sock};
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
    hints->ep_attr->type = FI_EP_RDM;
    CHECK(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &s.info) == 0);
    fi_freeinfo(hints);
    CHECK(open_unenabled(s) == 0);
    CHECK(fi_setname(&s.ep->fid, const_cast<uint8_t *>(name.data()), name.size()) == 0);
    std::vector<uint8_t> server_name(name.size());
    CHECK(s.io(server_name.data(), server_name.size(), false));
    const int rc = fi_enable(s.ep);
    uint8_t ready = rc == 0;
    CHECK(s.io(&ready, 1, true));
    if (rc == -FI_EADDRINUSE) {
        // The name holds the first client's tcp port, which its death left in TIME_WAIT
        // (UCT's tcp iface listens without SO_REUSEADDR; docs/addresses.md).
        std::fprintf(stderr, "[%s] the first client's tcp port is still in TIME_WAIT\n", role);
        return kAddrInUse;
    }
    CHECK(rc == 0);
    CHECK(fi_av_insert(s.av, server_name.data(), 1, &s.peer, 0, nullptr) == 1);
    const auto hello = pattern(8, 3);
    CHECK(s.sync());  // the server has posted
    CHECK(s.retry([&] { return fi_tsend(s.ep, hello.data(), 8, nullptr, s.peer, 3, nullptr); }) == 0);
    fi_cq_tagged_entry e{};
    CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
    CHECK(exchange(s, true, 4, 8) == 0);
    CHECK(exchange(s, false, 5, kBig) == 0);
    CHECK(exchange(s, true, 6, kBig) == 0);
    close_side(s);
    return 0;
}

int client(const char *role, int sock) {
    std::vector<uint8_t> name;
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    const pid_t first = fork();
    if (first == 0) {
        std::vector<uint8_t> n;
        int rc = first_client("client-1", sock, n);
        uint32_t len = static_cast<uint32_t>(n.size());
        if (rc == 0 && (::write(pipefd[1], &len, sizeof len) != sizeof len ||
                        ::write(pipefd[1], n.data(), len) != static_cast<ssize_t>(len))) {
            rc = 1;
        }
        std::fflush(stderr);
        _exit(rc);
    }
    ::close(pipefd[1]);
    CHECK(wait_bounded(first, std::chrono::steady_clock::now() + std::chrono::seconds(kChildTimeoutS)) == 0);
    uint32_t len = 0;
    CHECK(::read(pipefd[0], &len, sizeof len) == sizeof len && len > 0 && len <= 4096);
    name.resize(len);
    CHECK(::read(pipefd[0], name.data(), len) == static_cast<ssize_t>(len));
    ::close(pipefd[0]);
    return second_client("client-2", sock, name);
}

int run(const char *role, int sock, bool is_server) {
    return is_server ? server(role, sock) : client(role, sock);
}

TEST(RestartedProcess, ComesBackUnderItsNameAndTheServersOldEntryReachesIt) {
    const PairResult r = run_pair(run, "server", "client");
    if (r.a == kAddrInUse && r.b == kAddrInUse) {
        GTEST_SKIP() << "the first client's tcp port is still in TIME_WAIT: the second could "
                        "not listen on it (UCT's tcp iface sets no SO_REUSEADDR)";
    }
    EXPECT_EQ(r.a, 0) << "server";
    EXPECT_EQ(r.b, 0) << "client";
}

}  // namespace
