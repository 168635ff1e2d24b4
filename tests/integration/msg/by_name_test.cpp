// libfabric's usual client/server flow, by host and port (as fabtests and most applications
// do it): the server's fi_getinfo(node, service, FI_SOURCE) names where it listens; the client's
// fi_getinfo(node, service) gives a dest_addr that, inserted into its AV, reaches the server
// (and so does fi_av_insertsvc); the client then sends its own address, which the server
// inserts to answer. Over tcp on loopback (meson sets UFI_NET_DEVICES=lo), two processes; the
// server's reply carries its full address, and the client moves to shared memory. A server
// that closes first, or is killed with its client connected, is replaced on its port at once.
#include "two_process.h"

#include "base/config/config.h"
#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_domain.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include <netinet/in.h>

namespace {

using namespace ufi::two_process;

uint16_t g_port = 0;
bool g_insertsvc = false;

// A port nobody listens on now (the kernel's choice).
uint16_t free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        ::close(fd);
        return 0;
    }
    ::close(fd);
    return ntohs(a.sin_port);
}

// Whether this run lets shared memory carry traffic (UFI_TLS unset, or naming it).
bool shm_offered() {
    const auto &tls = ufi::config::registry().get_list("UFI_TLS");
    if (tls.empty()) return true;
    for (const auto &t : tls) {
        if (t == "all" || t == "shm" || t == "sm" || t == "mm" || t == "posix") return true;
    }
    return false;
}

int open_named(Side &s, bool server) {
    const char *role = s.role;
    const std::string service = std::to_string(g_port);
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
    hints->ep_attr->type = FI_EP_RDM;
    hints->fabric_attr->prov_name = strdup("ufi");
    const int rc = fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", service.c_str(),
                              server ? FI_SOURCE : 0, hints, &s.info);
    fi_freeinfo(hints);
    CHECK(rc == 0);
    CHECK(s.info->src_addr != nullptr && s.info->src_addrlen != 0);
    if (!server) CHECK(s.info->dest_addr != nullptr && s.info->dest_addrlen != 0);
    CHECK(open_objects(s) == 0);
    return 0;
}

int run(const char *role, int sock, bool server) {
    Side s;
    s.role = role;
    s.sock = sock;
    if (server) {
        CHECK(open_named(s, true) == 0);
        // A second endpoint cannot take the same port.
        fid_ep *twin = nullptr;
        CHECK(fi_endpoint(s.domain, s.info, &twin, nullptr) == 0);
        CHECK(fi_ep_bind(twin, &s.av->fid, 0) == 0);
        CHECK(fi_ep_bind(twin, &s.cq->fid, FI_TRANSMIT | FI_RECV) == 0);
        CHECK(fi_enable(twin) == -FI_EADDRINUSE);
        fi_close(&twin->fid);
        std::vector<uint8_t> name(512);
        CHECK(fi_trecv(s.ep, name.data(), name.size(), nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr) == 0);
        CHECK(s.sync());  // listening, receive posted: the client may start
        fi_cq_tagged_entry e{};
        fi_addr_t from = 0;
        CHECK(s.wait(e, &from) == 1 && e.tag == 1);
        CHECK(from == FI_ADDR_NOTAVAIL);  // not in the AV yet
        CHECK(fi_av_insert(s.av, name.data(), 1, &s.peer, 0, nullptr) == 1);
        const uint64_t reply = 0x5e7be7;
        CHECK(s.retry([&] { return fi_tsend(s.ep, &reply, 8, nullptr, s.peer, 2, nullptr); }) == 0);
        CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
        // The client's next message names it by the entry just inserted.
        uint64_t in = 0;
        CHECK(fi_trecv(s.ep, &in, 8, nullptr, s.peer, 3, 0, nullptr) == 0);
        CHECK(s.wait(e, &from) == 1 && e.tag == 3 && in == 42);
        CHECK(from == s.peer);
    } else {
        CHECK(open_named(s, false) == 0);
        CHECK(s.sync());
        if (g_insertsvc) {
            const std::string service = std::to_string(g_port);
            CHECK(fi_av_insertsvc(s.av, "127.0.0.1", service.c_str(), &s.peer, 0, nullptr) == 1);
        } else {
            CHECK(fi_av_insert(s.av, s.info->dest_addr, 1, &s.peer, 0, nullptr) == 1);
        }
        size_t len = 0;
        CHECK(fi_getname(&s.ep->fid, nullptr, &len) == -FI_ETOOSMALL);
        std::vector<uint8_t> mine(len);
        CHECK(fi_getname(&s.ep->fid, mine.data(), &len) == 0);
        uint64_t in = 0;
        CHECK(fi_trecv(s.ep, &in, 8, nullptr, s.peer, 2, 0, nullptr) == 0);
        CHECK(s.retry([&] { return fi_tsend(s.ep, mine.data(), len, nullptr, s.peer, 1, nullptr); }) == 0);
        fi_cq_tagged_entry e{};
        fi_addr_t from = 0;
        for (int i = 0; i < 2; ++i) {
            CHECK(s.wait(e, &from) == 1);
            if (e.flags & FI_RECV) CHECK(e.tag == 2 && in == 0x5e7be7 && from == s.peer);
        }
        const uint64_t out = 42;
        CHECK(s.retry([&] { return fi_tsend(s.ep, &out, 8, nullptr, s.peer, 3, nullptr); }) == 0);
        CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
        // Reached over tcp by host and port, the server answered with its full address: on
        // one host the client's traffic moved to shared memory before its first message.
        const ufi::runtime::proto::DataPath *dp =
            ufi::runtime::ep::endpoint_of(&s.ep->fid)->data_path();
        CHECK(dp != nullptr && dp->peer_count() == 1);
        const std::string tl = dp->peer(0)->lane.resource().tl;
        if (shm_offered()) {
            CHECK(dp->stats().lane_upgrades == 1);
            CHECK(tl == "posix" || tl == "sysv" || tl == "self");
        }
        CHECK(dp->stats().dropped_unknown_src == 0 && dp->stats().dropped_malformed == 0);
    }
    const bool synced = s.sync();  // neither closes while the other still works
    close_side(s);
    return synced ? 0 : 1;
}

// The server closes first, while its client is still connected to its port, and at once
// listens there again: its close waits for the client's (UFI_NAMED_CLOSE_WAIT), so the port
// is not left in TIME_WAIT (UCT's tcp listener sets no SO_REUSEADDR: a server that closed
// first could not listen there for a minute, and fabtests' next server on 9228 failed).
int close_first(const char *role, int sock, bool server) {
    Side s;
    s.role = role;
    s.sock = sock;
    CHECK(open_named(s, server) == 0);
    fi_cq_tagged_entry e{};
    uint8_t byte = 1;
    if (server) {
        uint64_t in = 0;
        CHECK(fi_trecv(s.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr) == 0);
        CHECK(s.sync());
        CHECK(s.wait(e) == 1 && in == 77);
        CHECK(s.io(&byte, 1, true));  // "closing now": the client closes a little later
        close_side(s);
        Side again;
        again.role = role;
        again.sock = sock;
        if (open_named(again, true) != 0) {
            std::fprintf(stderr, "[%s] could not listen on port %u again after closing first\n",
                         role, g_port);
            return 1;
        }
        close_side(again);
        CHECK(s.io(&byte, 1, true));
        return 0;
    }
    CHECK(s.sync());
    CHECK(fi_av_insert(s.av, s.info->dest_addr, 1, &s.peer, 0, nullptr) == 1);
    const uint64_t out = 77;
    CHECK(s.retry([&] { return fi_tsend(s.ep, &out, 8, nullptr, s.peer, 7, nullptr); }) == 0);
    CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
    CHECK(s.io(&byte, 1, false));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the server's close began
    close_side(s);
    CHECK(s.io(&byte, 1, false));  // the server listened again (or failed)
    return 0;
}

// The server is killed while its client is connected to its port, and another server listens
// there at once (within kRelistenBoundMs): the killed process's connections on that port end
// without TIME_WAIT on its side (abortive_close.h), which would otherwise hold the port for a
// minute (UCT's tcp listener sets no SO_REUSEADDR). The client, told, inserts the server's
// host and port again and reaches the new one.
constexpr int kRelistenBoundMs = 1000;

int killed_server(const char *role, int sock) {
    Side s;
    s.role = role;
    s.sock = sock;
    CHECK(open_named(s, true) == 0);
    uint64_t in = 0;
    fi_cq_tagged_entry e{};
    CHECK(fi_trecv(s.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr) == 0);
    CHECK(s.sync());
    CHECK(s.wait(e) == 1 && in == 77);
    CHECK(s.sync());  // the client's connection is up and idle: die with it
    raise(SIGKILL);
    return 1;
}

// The second server: listens on the port within kRelistenBoundMs of `killed_at`, then takes
// the client's next message.
int relisten(const char *role, int sock, std::chrono::steady_clock::time_point killed_at) {
    Side again;
    again.role = role;
    again.sock = sock;
    // fi_enable binds the port or fails with -FI_EADDRINUSE (open_named's CHECK says which).
    int rc = open_named(again, true);
    while (rc != 0 && std::chrono::steady_clock::now() - killed_at < std::chrono::milliseconds(kRelistenBoundMs)) {
        close_side(again);
        again = Side();
        again.role = role;
        again.sock = sock;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        rc = open_named(again, true);
    }
    if (rc != 0) {
        std::fprintf(stderr, "[%s] could not listen on port %u within %d ms of the kill\n", role, g_port,
                     kRelistenBoundMs);
        return 1;
    }
    std::fprintf(stderr, "[%s] listening on port %u again %lld ms after the kill\n", role, g_port,
                 static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - killed_at)
                                            .count()));
    uint64_t in = 0;
    fi_cq_tagged_entry e{};
    uint8_t byte = 1;
    CHECK(fi_trecv(again.ep, &in, 8, nullptr, FI_ADDR_UNSPEC, 8, 0, nullptr) == 0);
    CHECK(again.io(&byte, 1, true));  // listening, receive posted
    CHECK(again.wait(e) == 1 && in == 78);
    const bool synced = again.sync();
    close_side(again);
    return synced ? 0 : 1;
}

int killed_first(const char *role, int sock, bool server) {
    fi_cq_tagged_entry e{};
    uint8_t byte = 1;
    if (server) {
        const pid_t first = fork();
        if (first == 0) _exit(killed_server("server-1", sock));
        const int first_rc =
            wait_bounded(first, std::chrono::steady_clock::now() + std::chrono::seconds(kChildTimeoutS));
        CHECK(first_rc == 128 + SIGKILL);
        return relisten("server-2", sock, std::chrono::steady_clock::now());
    }
    Side s;
    s.role = role;
    s.sock = sock;
    CHECK(open_named(s, false) == 0);
    CHECK(s.sync());
    CHECK(fi_av_insert(s.av, s.info->dest_addr, 1, &s.peer, 0, nullptr) == 1);
    const uint64_t out = 77;
    CHECK(s.retry([&] { return fi_tsend(s.ep, &out, 8, nullptr, s.peer, 7, nullptr); }) == 0);
    CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
    CHECK(s.sync());                 // the server dies now
    CHECK(s.io(&byte, 1, false));    // another listens on its port
    fi_addr_t again = FI_ADDR_NOTAVAIL;
    CHECK(fi_av_insert(s.av, s.info->dest_addr, 1, &again, 0, nullptr) == 1);
    const uint64_t next = 78;
    const ssize_t posted = s.retry([&] { return fi_tsend(s.ep, &next, 8, nullptr, again, 8, nullptr); });
    if (posted != 0) std::fprintf(stderr, "[%s] fi_tsend to the new server: %s\n", role, fi_strerror(int(-posted)));
    CHECK(posted == 0);
    // (an error completion may come first: the killed server's peer failing)
    bool sent = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (!sent && std::chrono::steady_clock::now() < deadline) {
        const ssize_t rc = fi_cq_read(s.cq, &e, 1);
        if (rc == 1) {
            sent = (e.flags & FI_SEND) != 0;
        } else if (rc == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            CHECK(fi_cq_readerr(s.cq, &err, 0) == 1);
            std::fprintf(stderr, "[%s] error completion: %s\n", role, fi_strerror(err.err));
            return 1;
        } else {
            sched_yield();
        }
    }
    CHECK(sent);
    const bool synced = s.sync();
    close_side(s);
    return synced ? 0 : 1;
}

void run_pair(int (*body)(const char *, int, bool) = run) {
    g_port = free_port();
    ASSERT_NE(g_port, 0);
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const pid_t server = spawn(body, sv[0], sv[1], "server", true);
    const pid_t client = spawn(body, sv[1], sv[0], "client", false);
    ::close(sv[0]);
    ::close(sv[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kChildTimeoutS + 10);
    EXPECT_EQ(wait_bounded(server, deadline), 0) << "server";
    EXPECT_EQ(wait_bounded(client, deadline), 0) << "client";
}

TEST(ByName, ClientReachesServerByGetinfoDestAddr) {
    g_insertsvc = false;
    run_pair();
}

TEST(ByName, ClientReachesServerByInsertsvc) {
    g_insertsvc = true;
    run_pair();
}

TEST(ByName, ServerClosingFirstListensOnItsPortAgainAtOnce) {
    run_pair(close_first);
}

TEST(ByName, ServerKilledWithAClientConnectedListensAgainAtOnce) {
    run_pair(killed_first);
}

}  // namespace
