// Messaging between two processes (fork; a socketpair carries the addresses and the steps'
// synchronisation): tagged messages of every size class, posted first and unexpected, checked
// byte for byte; untagged messages with remote CQ data and the sender's fi_addr; directed
// receives; a thousand round trips; a burst of messages in order. Meson runs it over shared
// memory and over tcp on loopback. Every wait is bounded (alarm() in the children, a timed
// waitpid loop in the parent).
#include "two_process.h"

#include "base/config/config.h"
#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <gtest/gtest.h>

#include <string>

extern char **environ;

namespace {

using namespace ufi::two_process;

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
            else sched_yield();  // the receiver may need this core
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

// With UFI_CONNECT_TO_EP set (the *_p2p runs), B forgets it: A offers an endpoint-to-endpoint
// lane, B declines (in its reply, or in its ack when the handshakes cross), both stay on the
// handshake lane, and everything still arrives.
int run_declining(const char *role, int sock, bool a) {
    if (!a) {
        std::vector<std::string> keep;
        for (char **e = environ; *e != nullptr; ++e) {
            if (std::strncmp(*e, "UFI_CONNECT_TO_EP=", 18) != 0) keep.emplace_back(*e);
        }
        std::vector<const char *> env;
        for (const auto &k : keep) env.push_back(k.c_str());
        env.push_back(nullptr);
        // A test-only swap (in this forked child, before any ufi object): B reads this environment.
        ufi::config::registry_mutable() = ufi::config::Registry::from_environ(env.data());
    }
    Side s;
    s.role = role;
    s.sock = sock;
    int rc = open_side(s);
    if (rc == 0) rc = round_trips(s, a);
    if (rc == 0) rc = burst(s, a);
    if (rc == 0) rc = sizes(s, a);
    if (rc == 0) {
        const ufi::runtime::proto::DataPath *dp =
            ufi::runtime::ep::endpoint_of(&s.ep->fid)->data_path();
        CHECK(dp != nullptr && dp->stats().p2p_lanes == 0);
        CHECK(dp->peer_count() == 1 && !dp->peer(0)->lane.p2p());
        CHECK(dp->stats().dropped_unknown_src == 0 && dp->stats().dropped_malformed == 0);
    }
    if (rc == 0 && !s.sync()) rc = 1;
    close_side(s);
    return rc;
}

TEST(TwoProcesses, OneSideDeclinesTheEndpointToEndpointLane) {
    const PairResult r = run_pair(run_declining, "A", "B");
    EXPECT_EQ(r.a, 0) << "offers";
    EXPECT_EQ(r.b, 0) << "declines";
}

TEST(TwoProcesses, MessagesOfEverySizeOrderAndSource) {
    const PairResult r = run_pair(run, "A", "B");
    EXPECT_EQ(r.a, 0) << "sender";
    EXPECT_EQ(r.b, 0) << "receiver";
}

}  // namespace
