// FI_SOCKADDR_IN on RDM endpoints, between two processes: each side's name is its tcp
// listener's IP and port (16 bytes); each inserts the other's socket address, and messages
// flow both ways with directed receives and the sender reported by fi_cq_readfrom. The
// handshake gives each side the other's full address: on one host both move to shared memory.
// fi_av_lookup and fi_av_straddr speak socket addresses; a wrong family is refused.
#include "two_process.h"

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_domain.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

namespace {

using namespace ufi::two_process;

int open_sockaddr(Side &s) {
    const char *role = s.role;
    fi_info *hints = fi_allocinfo();
    hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
    hints->ep_attr->type = FI_EP_RDM;
    hints->addr_format = FI_SOCKADDR_IN;
    hints->fabric_attr->prov_name = strdup("ufi");
    const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &s.info);
    fi_freeinfo(hints);
    CHECK(rc == 0);
    CHECK(s.info->addr_format == FI_SOCKADDR_IN);
    CHECK(s.info->src_addrlen == sizeof(sockaddr_in));
    CHECK(open_objects(s) == 0);
    sockaddr_in mine{}, theirs{};
    size_t len = sizeof mine;
    CHECK(fi_getname(&s.ep->fid, &mine, &len) == 0);
    CHECK(len == sizeof(sockaddr_in) && mine.sin_family == AF_INET && mine.sin_port != 0);
    CHECK(s.io(&mine, sizeof mine, true) && s.io(&theirs, sizeof theirs, false));
    // A socket address of the wrong family is refused; the peer's is taken.
    sockaddr_in6 wrong{};
    wrong.sin6_family = AF_INET6;
    int status = 0;
    fi_addr_t none = FI_ADDR_NOTAVAIL;
    CHECK(fi_av_insert(s.av, &wrong, 1, &none, FI_SYNC_ERR, &status) == 0 && status == FI_EINVAL);
    CHECK(fi_av_insert(s.av, &theirs, 1, &s.peer, 0, nullptr) == 1);
    sockaddr_in back{};
    len = sizeof back;
    CHECK(fi_av_lookup(s.av, s.peer, &back, &len) == 0 && len == sizeof back);
    CHECK(std::memcmp(&back, &theirs, sizeof back) == 0);
    char text[64];
    size_t tl = sizeof text;
    CHECK(fi_av_straddr(s.av, &theirs, text, &tl) == text);
    const std::string expected = "fi_sockaddr_in://127.0.0.1:" + std::to_string(ntohs(theirs.sin_port));
    if (std::string(text) != expected) std::fprintf(stderr, "[%s] straddr %s\n", role, text);
    CHECK(std::string(text) == expected);
    return 0;
}

int run(const char *role, int sock, bool a) {
    Side s;
    s.role = role;
    s.sock = sock;
    int rc = open_sockaddr(s);
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
    const PairResult r = run_pair(run, "A", "B");
    EXPECT_EQ(r.a, 0) << "A";
    EXPECT_EQ(r.b, 0) << "B";
}

}  // namespace
