// transports/iface: an endpoint's worker and ifaces opened on every domain ufi offers here,
// their address records against discovery's address lengths, the shared-memory filter,
// reachability, arming, and workers sharing a domain's memory domains. No AV needed.
#include "base/config/config.h"
#include "runtime/info/getinfo.h"
#include "transports/iface/discovery.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/lanes/am_lane.h"
#include "transports/memory/memory_domains.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace ufi::transports {
namespace {

// The resources of each domain fi_getinfo offers (the same lists open_domain copies).
std::vector<std::vector<const Resource *>> offered_domains() {
    std::vector<std::vector<const Resource *>> out;
    const auto &all = discovery().resources;
    for (const auto &offer : runtime::info::process_env().offers) {
        std::vector<const Resource *> rs;
        for (size_t idx : offer.resources) {
            if (idx < all.size()) rs.push_back(&all[idx]);
        }
        out.push_back(rs);
    }
    return out;
}

// A domain's memory domains for these resources (what Domain::memory_domains opens).
struct Mds : MemoryDomains {
    explicit Mds(const std::vector<const Resource *> &rs) {
        std::vector<MdName> names;
        for (const Resource *r : rs) names.push_back({r->component, r->md});
        open(names);
    }
};

std::unique_ptr<EndpointWorker> open_worker(const MemoryDomains &mds, const std::vector<const Resource *> &rs,
                                            WorkerOptions opts = {}) {
    std::unique_ptr<EndpointWorker> w;
    std::vector<SkippedResource> skipped;
    EXPECT_EQ(EndpointWorker::open(mds, rs, opts, w, skipped), UCS_OK);
    for (const auto &s : skipped) ADD_FAILURE() << s.resource->label() << ": " << s.why;
    return w;
}

TEST(EndpointWorker, OneRecordPerResourceWithDiscoveryLengths) {
    const auto domains = offered_domains();
    ASSERT_FALSE(domains.empty());
    for (const auto &rs : domains) {
        Mds mds(rs);
        auto w = open_worker(mds, rs);
        ASSERT_TRUE(w);
        const auto records = w->records();
        ASSERT_EQ(records.size(), rs.size());
        for (size_t i = 0; i < rs.size(); ++i) {
            SCOPED_TRACE(rs[i]->label());
            EXPECT_EQ(records[i].tl, rs[i]->tl);
            EXPECT_EQ(records[i].device_addr.size(), rs[i]->device_addr_len);
            const size_t iface_len =
                rs[i]->has(UCT_IFACE_FLAG_CONNECT_TO_IFACE) ? rs[i]->iface_addr_len : 0;
            EXPECT_EQ(records[i].iface_addr.size(), iface_len);
        }
        // The whole address packs (names, lengths and record count fit).
        address::EndpointAddress a{1, 1, records};
        EXPECT_FALSE(address::pack(a).empty());
    }
}

TEST(EndpointWorker, KnownTransportsHaveTheBriefsAddressSizes) {
    // uct-brief section 3: self 0+8, posix 8+8, sysv 8+8, cma 8+4, tcp/eth0 6+2, lo 18+2;
    // posix and sysv records add the 1-byte fingerprint of their FIFO's geometry
    // (transports/iface/fifo_tuning.h).
    const std::vector<std::pair<std::string, std::pair<size_t, size_t>>> sizes = {
        {"self", {0, 8}}, {"posix", {8, 8 + 1}}, {"sysv", {8, 8 + 1}}, {"cma", {8, 4}}};
    for (const auto &rs : offered_domains()) {
        Mds mds(rs);
        auto w = open_worker(mds, rs);
        ASSERT_TRUE(w);
        for (const auto &r : w->records()) {
            for (const auto &[tl, len] : sizes) {
                if (r.tl != tl) continue;
                EXPECT_EQ(r.device_addr.size(), len.first) << tl;
                EXPECT_EQ(r.iface_addr.size(), len.second) << tl;
            }
            if (r.tl == "tcp") {
                EXPECT_EQ(r.iface_addr.size(), 2U);
            }
        }
    }
}

TEST(EndpointWorker, SharedMemoryNotPermittedSkipsShmTransports) {
    for (const auto &rs : offered_domains()) {
        Mds mds(rs);
        std::unique_ptr<EndpointWorker> w;
        std::vector<SkippedResource> skipped;
        WorkerOptions opts;
        opts.shared_memory = false;
        size_t shm = 0;
        for (const Resource *r : rs) shm += r->type == DeviceType::SharedMemory;
        const Status st = EndpointWorker::open(mds, rs, opts, w, skipped);
        EXPECT_EQ(skipped.size(), shm);
        if (shm == rs.size()) {
            EXPECT_EQ(st, UCS_ERR_NO_DEVICE);
            continue;
        }
        ASSERT_EQ(st, UCS_OK);
        for (const auto &i : w->ifaces()) {
            EXPECT_NE(i->resource->type, DeviceType::SharedMemory) << i->resource->label();
        }
        EXPECT_EQ(w->ifaces().size(), rs.size() - shm);
    }
}

TEST(EndpointWorker, NoResourceIsNoDevice) {
    Mds mds({});
    std::unique_ptr<EndpointWorker> w;
    std::vector<SkippedResource> skipped;
    EXPECT_EQ(EndpointWorker::open(mds, {}, {}, w, skipped), UCS_ERR_NO_DEVICE);
    EXPECT_FALSE(w);
}

TEST(EndpointWorker, UnknownResourceIsSkipped) {
    Resource bogus;
    bogus.component = "no-such-component";
    bogus.md = "nothing";
    bogus.tl = "bogus";
    bogus.dev = "none";
    std::vector<const Resource *> rs = {&bogus};
    Mds mds(rs);  // the bogus md does not open
    std::unique_ptr<EndpointWorker> w;
    std::vector<SkippedResource> skipped;
    EXPECT_EQ(EndpointWorker::open(mds, rs, {}, w, skipped), UCS_ERR_NO_DEVICE);
    ASSERT_EQ(skipped.size(), 1U);
    EXPECT_NE(skipped[0].why.find("nothing"), std::string::npos) << skipped[0].why;

    // Next to a good resource it is left out and the rest opens.
    const auto domains = offered_domains();
    ASSERT_FALSE(domains.empty());
    rs.insert(rs.end(), domains[0].begin(), domains[0].end());
    skipped.clear();
    Mds all(rs);
    EXPECT_EQ(EndpointWorker::open(all, rs, {}, w, skipped), UCS_OK);
    EXPECT_EQ(skipped.size(), 1U);
    EXPECT_EQ(w->ifaces().size(), domains[0].size());
    w.reset();  // ifaces close before the memory domains they were opened on
}

TEST(EndpointWorker, Reachability) {
    const auto domains = offered_domains();
    ASSERT_FALSE(domains.empty());
    const auto &rs = domains[0];
    Mds mds(rs);
    auto a = open_worker(mds, rs);
    auto b = open_worker(mds, rs);
    ASSERT_TRUE(a && b);
    // Both workers are opened on the same memory domains, each opened once.
    std::set<std::string> md_names;
    for (const Resource *r : rs) md_names.insert(r->md);
    EXPECT_EQ(mds.size(), md_names.size());

    for (const auto &rec : a->records()) {
        SCOPED_TRACE(rec.tl);
        EXPECT_TRUE(a->is_reachable(rec)) << "an iface reaches its own address";
        // self reaches only itself; every other transport here reaches same-host peers.
        EXPECT_EQ(b->is_reachable(rec), rec.tl != "self");
        // Malformed records never reach UCT.
        auto shorter = rec;
        if (!shorter.device_addr.empty()) {
            shorter.device_addr.pop_back();
            EXPECT_FALSE(b->is_reachable(shorter));
        }
        auto longer = rec;
        longer.iface_addr.push_back(0);
        EXPECT_FALSE(b->is_reachable(longer));
        auto other = rec;
        other.tl = "no_such_tl";
        EXPECT_FALSE(b->is_reachable(other));
    }
}

// A connected endpoint accepting a request knows its one peer before it opens (only_peer):
// where shared memory reaches that peer, the network transports stay closed (with the reason
// among the skipped); where it does not (a peer of another host: only its tcp record), they
// open as always.
TEST(EndpointWorker, AnOnlyPeerOnThisHostOpensNoNetworkTransport) {
    int tried = 0;
    for (const auto &rs : offered_domains()) {
        size_t shm = 0, net = 0;
        for (const Resource *r : rs) {
            shm += r->type == DeviceType::SharedMemory;
            net += r->type == DeviceType::Network;
        }
        if (shm == 0 || net == 0) continue;  // (a domain of one kind: nothing to leave out)
        ++tried;
        Mds mds(rs);
        auto peer = open_worker(mds, rs);
        ASSERT_TRUE(peer);
        const auto peer_records = peer->records();

        WorkerOptions local;
        local.only_peer = peer_records;
        std::unique_ptr<EndpointWorker> w;
        std::vector<SkippedResource> skipped;
        ASSERT_EQ(EndpointWorker::open(mds, rs, local, w, skipped), UCS_OK);
        for (const auto &i : w->ifaces()) {
            EXPECT_NE(i->resource->type, DeviceType::Network) << i->resource->label();
        }
        EXPECT_EQ(skipped.size(), net);
        for (const auto &sk : skipped) {
            EXPECT_EQ(sk.resource->type, DeviceType::Network);
            EXPECT_NE(sk.why.find("reached over shared memory"), std::string::npos) << sk.why;
        }
        EXPECT_TRUE(w->reaches_over_shared_memory(peer_records));
        w.reset();

        // A peer known only by its network records (shared memory cannot reach it).
        WorkerOptions remote;
        for (const auto &rec : peer_records) {
            for (const Resource *r : rs) {
                if (r->tl == rec.tl && r->type == DeviceType::Network) remote.only_peer.push_back(rec);
            }
        }
        ASSERT_FALSE(remote.only_peer.empty());
        skipped.clear();
        ASSERT_EQ(EndpointWorker::open(mds, rs, remote, w, skipped), UCS_OK);
        EXPECT_TRUE(skipped.empty()) << skipped.front().why;
        EXPECT_EQ(w->ifaces().size(), rs.size());
        EXPECT_FALSE(w->reaches_over_shared_memory(remote.only_peer));
        w.reset();
        peer.reset();  // ifaces close before the memory domains they were opened on
    }
    if (tried == 0) GTEST_SKIP() << "no domain here has both shared memory and a network transport";
}

TEST(EndpointWorker, ProgressArmAndEventFds) {
    for (const auto &rs : offered_domains()) {
        Mds mds(rs);
        auto w = open_worker(mds, rs);
        ASSERT_TRUE(w);
        size_t with_fd = 0;
        for (const auto &i : w->ifaces()) {
            const bool has_fd = i->caps.event_flags & UCT_IFACE_FLAG_EVENT_FD;
            with_fd += has_fd;
            EXPECT_EQ(i->event_fd >= 0, has_fd) << i->resource->label();
            if (i->resource->tl == "self") {
                EXPECT_EQ(i->arm_events, 0U) << "self has no events and is never armed";
                EXPECT_LT(i->event_fd, 0);
            }
        }
        EXPECT_EQ(w->event_fds().size(), with_fd);
        for (int k = 0; k < 10; ++k) w->progress();
        EXPECT_EQ(w->arm(), UCS_OK) << "an idle worker can sleep";
    }
}

// ufi's FIFO element size (UFI_SHM_FIFO_ELEM_SIZE, 576 unless the environment says otherwise)
// is what the worker's shared-memory ifaces carry inline, and what discovery reported.
TEST(EndpointWorker, SharedMemoryFifosHaveUfisElementSize) {
    const int64_t elem = config::registry().get_int("UFI_SHM_FIFO_ELEM_SIZE");
    for (const auto &rs : offered_domains()) {
        Mds mds(rs);
        auto w = open_worker(mds, rs);
        ASSERT_TRUE(w);
        for (const auto &i : w->ifaces()) {
            if (i->resource->tl != "posix" && i->resource->tl != "sysv") continue;
            SCOPED_TRACE(i->resource->label());
            EXPECT_EQ(i->fifo_geometry.size(), 1u);
            if (elem != 0) {
                EXPECT_EQ(i->caps.limits.am.max_short, static_cast<size_t>(elem) - 28);
            }
            EXPECT_EQ(i->caps.limits.am.max_short, i->resource->limits.am.max_short);
        }
    }
}

// A peer whose FIFO is shaped otherwise (another element size, another ufi: its record's
// fingerprint differs, or it has none) is not reachable over that transport; the same record
// with this process's fingerprint is. Other transports' records are untouched.
TEST(EndpointWorker, ARecordOfAnotherFifoGeometryIsNotReachable) {
    bool checked = false;
    for (const auto &rs : offered_domains()) {
        Mds mds(rs);
        auto w = open_worker(mds, rs);
        ASSERT_TRUE(w);
        for (const auto &rec : w->records()) {
            if (rec.tl != "posix" && rec.tl != "sysv") continue;
            SCOPED_TRACE(rec.tl);
            EXPECT_TRUE(w->is_reachable(rec));
            address::TransportRecord other = rec;
            other.iface_addr.back() ^= 0x5a;  // another geometry's fingerprint
            EXPECT_FALSE(w->is_reachable(other));
            address::TransportRecord old = rec;
            old.iface_addr.pop_back();  // no fingerprint at all
            EXPECT_FALSE(w->is_reachable(old));
            checked = true;
        }
    }
    EXPECT_TRUE(checked) << "no posix or sysv record in any domain";
}

// Choosing a lane to such a peer says why shared memory was left out: as the reason there is
// no lane (shared memory alone), or beside the network lane chosen instead.
TEST(EndpointWorker, ALaneChoiceNamesAFifoOfAnotherShape) {
    bool checked = false;
    for (const auto &rs : offered_domains()) {
        Mds mds(rs);
        auto w = open_worker(mds, rs);
        ASSERT_TRUE(w);
        address::EndpointAddress peer{7, 1, {}};
        bool has_fifo = false, has_net = false;
        for (auto rec : w->records()) {
            if (rec.tl == "self") continue;
            if (rec.tl == "posix" || rec.tl == "sysv") {
                rec.iface_addr.back() ^= 0x5a;
                has_fifo = true;
            }
            has_net = has_net || rec.tl == "tcp";
            peer.records.push_back(rec);
        }
        if (!has_fifo) continue;
        const LaneChoice c = choose_am_lane(*w, peer, LanePolicy{});
        EXPECT_NE(c.fifo_mismatch.find("shaped otherwise"), std::string::npos);
        if (has_net) {
            ASSERT_NE(c.iface, SIZE_MAX);
            EXPECT_EQ(w->ifaces()[c.iface]->resource->tl, "tcp");
        } else {
            EXPECT_EQ(c.iface, SIZE_MAX);
            EXPECT_NE(c.why.find("shaped otherwise"), std::string::npos) << c.why;
        }
        // The same peer as it really is: shared memory, nothing to say.
        peer.records = w->records();
        std::erase_if(peer.records, [](const auto &r) { return r.tl == "self"; });
        const LaneChoice alike = choose_am_lane(*w, peer, LanePolicy{});
        ASSERT_NE(alike.iface, SIZE_MAX);
        EXPECT_TRUE(alike.fifo_mismatch.empty()) << alike.fifo_mismatch;
        checked = true;
    }
    EXPECT_TRUE(checked) << "no domain with a shared-memory FIFO";
}

}  // namespace
}  // namespace ufi::transports
