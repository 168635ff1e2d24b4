// FI_SOCKADDR_IN on RDM endpoints, between two processes: each side's name is its tcp
// listener's IP and port (16 bytes); each inserts the other's socket address, and messages
// flow both ways with directed receives and the sender reported by fi_cq_readfrom. The
// handshake gives each side the other's full address: on one host both move to shared memory.
// fi_av_lookup and fi_av_straddr speak socket addresses; a wrong family is refused.
//
// FI_SOCKADDR_IN6 the same way, with the two processes in two network namespaces the test
// makes (a veth pair with fd00:: addresses; UCX's tcp does not listen on ::1), which needs
// root and ip(8): skipped, saying why, without them. Across namespaces the pair still shares
// /dev/shm, but stays on tcp: UCT's shared-memory wake-up (an abstract unix socket) does not
// cross namespaces, so ufi keeps FIFO transports to peers of its own namespace.
#include "netns_pair.h"
#include "two_process.h"

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_domain.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

using namespace ufi::two_process;

// What the current test runs: the address family, and for IPv6 the namespace B enters and
// each side's device (set before the pair forks; the children inherit it).
struct PairSetup {
    int format = FI_SOCKADDR_IN;
    std::string netns;              // empty: both in this namespace
    std::string dev_a, dev_b;       // UFI_NET_DEVICES per side (empty: the environment's)
    std::string addr_a, addr_b;     // the IPs each side listens on (IPv6)
};
PairSetup g_setup;

bool is_v6() { return g_setup.format == FI_SOCKADDR_IN6; }

int open_sockaddr(Side &s, bool a) {
    const char *role = s.role;
    if (!g_setup.netns.empty() && !a) CHECK(enter_netns(g_setup.netns));
    const std::string &dev = a ? g_setup.dev_a : g_setup.dev_b;
    if (!dev.empty()) setenv("UFI_NET_DEVICES", dev.c_str(), 1);  // before ufi reads it
    const size_t len_expected = is_v6() ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
    hints->ep_attr->type = FI_EP_RDM;
    hints->addr_format = static_cast<uint32_t>(g_setup.format);
    hints->fabric_attr->prov_name = strdup("ufi");
    const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &s.info);
    fi_freeinfo(hints);
    CHECK(rc == 0);
    CHECK(s.info->addr_format == static_cast<uint32_t>(g_setup.format));
    CHECK(s.info->src_addrlen == len_expected);
    CHECK(open_objects(s) == 0);
    sockaddr_storage mine{}, theirs{};
    size_t len = sizeof mine;
    CHECK(fi_getname(&s.ep->fid, &mine, &len) == 0);
    CHECK(len == len_expected && mine.ss_family == (is_v6() ? AF_INET6 : AF_INET));
    const uint16_t port = is_v6() ? reinterpret_cast<const sockaddr_in6 &>(mine).sin6_port
                                  : reinterpret_cast<const sockaddr_in &>(mine).sin_port;
    CHECK(port != 0);
    CHECK(s.io(&mine, len_expected, true) && s.io(&theirs, len_expected, false));
    // A socket address of the other family is refused; the peer's is taken.
    sockaddr_storage wrong{};
    wrong.ss_family = is_v6() ? AF_INET : AF_INET6;
    int status = 0;
    fi_addr_t none = FI_ADDR_NOTAVAIL;
    CHECK(fi_av_insert(s.av, &wrong, 1, &none, FI_SYNC_ERR, &status) == 0 && status == FI_EINVAL);
    CHECK(fi_av_insert(s.av, &theirs, 1, &s.peer, 0, nullptr) == 1);
    sockaddr_storage back{};
    len = sizeof back;
    CHECK(fi_av_lookup(s.av, s.peer, &back, &len) == 0 && len == len_expected);
    CHECK(std::memcmp(&back, &theirs, len_expected) == 0);
    char text[96];
    size_t tl = sizeof text;
    CHECK(fi_av_straddr(s.av, &theirs, text, &tl) == text);
    const std::string expected =
        is_v6() ? "fi_sockaddr_in6://[" + (a ? g_setup.addr_b : g_setup.addr_a) + "]:" +
                      std::to_string(ntohs(reinterpret_cast<const sockaddr_in6 &>(theirs).sin6_port))
                : "fi_sockaddr_in://127.0.0.1:" +
                      std::to_string(ntohs(reinterpret_cast<const sockaddr_in &>(theirs).sin_port));
    if (std::string(text) != expected) std::fprintf(stderr, "[%s] straddr %s\n", role, text);
    CHECK(std::string(text) == expected);
    return 0;
}

int run(const char *role, int sock, bool a) {
    Side s;
    s.role = role;
    s.sock = sock;
    int rc = open_sockaddr(s, a);
    if (rc != 0) {
        close_side(s);
        return rc;
    }
    // 100 round trips, A first; B's receives name A (directed), both check the source.
    for (uint32_t i = 0; i < 100 && rc == 0; ++i) {
        uint32_t in = UINT32_MAX, out = i;
        fi_cq_tagged_entry e{};
        fi_addr_t from = FI_ADDR_NOTAVAIL;
        const auto recv = [&] { return fi_trecv(s.ep, &in, sizeof in, nullptr, s.peer, i, 0, nullptr); };
        const auto send = [&] { return fi_tsend(s.ep, &out, sizeof out, nullptr, s.peer, i, nullptr); };
        if (a) {
            CHECK(recv() == 0);
            CHECK(s.retry(send) == 0);
        } else {
            CHECK(recv() == 0);
        }
        for (int got = 0; got < (a ? 2 : 1);) {
            CHECK(s.wait(e, &from) == 1);
            if (e.flags & FI_RECV) {
                CHECK(in == i && from == s.peer);
                if (!a) CHECK(s.retry(send) == 0);
            }
            ++got;
        }
        if (!a) CHECK(s.wait(e) == 1 && (e.flags & FI_SEND));
    }
    // A message of several MiB each way: the rendezvous (zero copy between processes of one
    // host, namespaces or not) beside whichever lane carries the control messages.
    const size_t big_len = (4 << 20) + 5;
    const std::vector<uint8_t> big_out = pattern(big_len, a ? 0x3c : 0xc3);
    std::vector<uint8_t> big_in(big_len, 0);
    CHECK(fi_trecv(s.ep, big_in.data(), big_len, nullptr, s.peer, 1000, 0, nullptr) == 0);
    CHECK(s.retry([&] {
        return fi_tsend(s.ep, big_out.data(), big_len, nullptr, s.peer, 1000, nullptr);
    }) == 0);
    for (int got = 0; got < 2; ++got) {
        fi_cq_tagged_entry e{};
        CHECK(s.wait(e) == 1);
        if (e.flags & FI_RECV) CHECK(e.len == big_len);
    }
    CHECK(big_in == pattern(big_len, a ? 0xc3 : 0x3c));
    const ufi::runtime::proto::DataPath *dp = ufi::runtime::ep::endpoint_of(&s.ep->fid)->data_path();
    CHECK(dp != nullptr && dp->peer_count() == 1);
    CHECK(dp->stats().dropped_unknown_src == 0 && dp->stats().dropped_malformed == 0);
    // The default domain on one host: shared memory after the handshake; between network
    // namespaces tcp (shared memory's wake-up does not cross them: net_namespace.h).
    const std::string tl = dp->peer(0)->lane.resource().tl;
    const char *want = g_setup.netns.empty() ? "posix" : "tcp";
    if (tl != want) std::fprintf(stderr, "[%s] lane %s\n", role, tl.c_str());
    CHECK(tl == want);
    const bool synced = s.sync();
    close_side(s);
    return synced ? 0 : 1;
}

TEST(Sockaddr, TwoProcessesBySocketAddress) {
    g_setup = PairSetup{};
    const PairResult r = run_pair(run, "A", "B");
    EXPECT_EQ(r.a, 0) << "A";
    EXPECT_EQ(r.b, 0) << "B";
}

// The IPv6 setup over a namespace pair: B enters the namespace.
PairSetup v6_setup(const NetnsPair &pair) {
    PairSetup s;
    s.format = FI_SOCKADDR_IN6;
    s.netns = pair.netns();
    s.dev_a = pair.dev_a();
    s.dev_b = pair.dev_b();
    s.addr_a = pair.addr_a();
    s.addr_b = pair.addr_b();
    return s;
}

TEST(Sockaddr, IPv6AcrossNetworkNamespaces) {
    NetnsPair pair;
    if (!pair.why_not().empty()) GTEST_SKIP() << pair.why_not();
    g_setup = v6_setup(pair);
    const PairResult r = run_pair(run, "A", "B");
    g_setup = PairSetup{};
    EXPECT_EQ(r.a, 0) << "A";
    EXPECT_EQ(r.b, 0) << "B";
}

}  // namespace
