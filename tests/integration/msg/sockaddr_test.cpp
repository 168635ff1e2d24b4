// FI_SOCKADDR_IN on RDM endpoints, between two processes: each side's name is its tcp
// listener's IP and port (16 bytes); each inserts the other's socket address, and messages
// flow both ways with directed receives and the sender reported by fi_cq_readfrom. The
// handshake gives each side the other's full address: on one host both move to shared memory.
// fi_av_lookup and fi_av_straddr speak socket addresses; a wrong family is refused.
//
// FI_SOCKADDR_IN6 the same way, with the two processes in two network namespaces the test
// makes (a veth pair with fd00:: addresses; UCX's tcp does not listen on ::1), which needs
// root and ip(8): skipped, saying why, without them. Across namespaces the pair still shares
// /dev/shm, and the shared-memory lane must work although UCT's wake-up signal (an abstract
// unix socket) does not cross namespaces.
#include "two_process.h"

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_domain.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
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
    if (!g_setup.netns.empty() && !a) {
        const std::string path = "/var/run/netns/" + g_setup.netns;
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0 && setns(fd, CLONE_NEWNET) == 0);
        close(fd);
        // As `ip netns exec` does: a private /sys showing this namespace's devices (UCX lists
        // network devices from /sys/class/net).
        CHECK(unshare(CLONE_NEWNS) == 0);
        CHECK(mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) == 0);
        CHECK(umount2("/sys", MNT_DETACH) == 0);
        CHECK(mount(g_setup.netns.c_str(), "/sys", "sysfs", 0, nullptr) == 0);
    }
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
    const ufi::runtime::proto::DataPath *dp = ufi::runtime::ep::endpoint_of(&s.ep->fid)->data_path();
    CHECK(dp != nullptr && dp->peer_count() == 1);
    CHECK(dp->stats().dropped_unknown_src == 0 && dp->stats().dropped_malformed == 0);
    const std::string tl = dp->peer(0)->lane.resource().tl;
    if (tl != "posix") std::fprintf(stderr, "[%s] lane %s\n", role, tl.c_str());
    CHECK(tl == "posix");  // the default domain on one host: shared memory after the handshake
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

// A network namespace with one end of a veth pair, the other end here; removed at the end.
class NetnsPair {
  public:
    NetnsPair() {
        const std::string id = std::to_string(getpid() % 100000);
        ns_ = "ufi_test_" + id;
        dev_a_ = "ufi" + id + "a";
        dev_b_ = "ufi" + id + "b";
        const std::string cmds[] = {
            "ip netns add " + ns_,
            "ip link add " + dev_a_ + " type veth peer name " + dev_b_,
            "ip link set " + dev_b_ + " netns " + ns_,
            "ip -6 addr add " + addr_a_ + "/64 dev " + dev_a_ + " nodad",
            "ip link set " + dev_a_ + " up",
            "ip netns exec " + ns_ + " ip -6 addr add " + addr_b_ + "/64 dev " + dev_b_ + " nodad",
            "ip netns exec " + ns_ + " ip link set " + dev_b_ + " up",
        };
        for (const std::string &c : cmds) {
            if (std::system((c + " 2>/dev/null").c_str()) != 0) {
                why_ = "`" + c + "` failed (root and ip(8) are needed)";
                return;
            }
        }
    }
    ~NetnsPair() {
        (void)!std::system(("ip link del " + dev_a_ + " 2>/dev/null").c_str());
        (void)!std::system(("ip netns del " + ns_ + " 2>/dev/null").c_str());
    }
    const std::string &why_not() const { return why_; }
    PairSetup setup() const {
        PairSetup s;
        s.format = FI_SOCKADDR_IN6;
        s.netns = ns_;
        s.dev_a = dev_a_;
        s.dev_b = dev_b_;
        s.addr_a = addr_a_;
        s.addr_b = addr_b_;
        return s;
    }

  private:
    std::string ns_, dev_a_, dev_b_, why_;
    const std::string addr_a_ = "fd00:75f1::1", addr_b_ = "fd00:75f1::2";
};

TEST(Sockaddr, IPv6AcrossNetworkNamespaces) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make a network namespace";
    NetnsPair pair;
    if (!pair.why_not().empty()) GTEST_SKIP() << pair.why_not();
    g_setup = pair.setup();
    const PairResult r = run_pair(run, "A", "B");
    g_setup = PairSetup{};
    EXPECT_EQ(r.a, 0) << "A";
    EXPECT_EQ(r.b, 0) << "B";
}

}  // namespace
