// The threading models (runtime/threading.h), each driven with the concurrency fi_domain(3)
// allows it:
// - FI_THREAD_SAFE, FI_THREAD_FID and FI_THREAD_ENDPOINT: two endpoints, each driven by its
//   own thread, share one AV, one transmit CQ and one send counter. Each thread's reads of its
//   receive CQ progress its endpoint, which writes into the shared CQ beside the other
//   thread's; reads of the shared CQ (serialized by the application, as the models ask)
//   progress both endpoints beside their owners' calls. Every message arrives once, in order,
//   and every completion and count is there.
// - FI_THREAD_COMPLETION: two isolated groups (an endpoint and its own CQ and counter), each
//   driven by its thread, on the lock-free tables, sharing only the domain and its AV.
// - The endpoint's data tables are the lock-free ones exactly where the policy says so.
// The two threads start at once, so the endpoints' handshakes cross; in the p2p sets a peer's
// first messages can then arrive on the new lane before this side finished connecting (they
// were dropped once, Peer::held keeps them now).
#include "msg_fixture.h"

#include "api/ep_data.h"
#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"
#include "runtime/threading.h"

#include <rdma/fi_domain.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace ufi::msg_test {
namespace {

constexpr uint64_t kTag = 0x5a;
constexpr uint64_t kMessages = 4000;  // per thread
constexpr uint64_t kWindow = 32;      // sends and receives in flight per thread

TEST(ThreadingPolicy, EachModelLocksWhatItsApplicationsShare) {
    using ufi::runtime::ThreadingPolicy;
    const ThreadingPolicy all{true, true, true};
    EXPECT_EQ(ThreadingPolicy::for_model(FI_THREAD_SAFE, false), all);
    EXPECT_EQ(ThreadingPolicy::for_model(FI_THREAD_UNSPEC, false), all);
    // A CQ read beside a transfer on the same endpoint is allowed: endpoints and CQs lock.
    EXPECT_EQ(ThreadingPolicy::for_model(FI_THREAD_FID, false), all);
    EXPECT_EQ(ThreadingPolicy::for_model(FI_THREAD_ENDPOINT, false), all);
    // Completion groups are serialized, but two of them share the domain's tables.
    EXPECT_EQ(ThreadingPolicy::for_model(FI_THREAD_COMPLETION, false),
              (ThreadingPolicy{false, false, true}));
    EXPECT_EQ(ThreadingPolicy::for_model(FI_THREAD_DOMAIN, false),
              (ThreadingPolicy{false, false, false}));
    // A progress thread runs beside the application whatever it serializes.
    for (int t : {FI_THREAD_DOMAIN, FI_THREAD_COMPLETION, FI_THREAD_ENDPOINT}) {
        EXPECT_EQ(ThreadingPolicy::for_model(t, true), all) << t;
    }
}

// One endpoint, the thread that drives it, and what it checks.
struct Driver {
    fid_ep *ep = nullptr;
    fid_cq *rx_cq = nullptr;  // its own (receive, or everything in the isolated case)
    fi_addr_t peer = FI_ADDR_NOTAVAIL;
    uint64_t id = 0;
    std::vector<uint64_t> out;  // the payloads it sends (valid until their completions)
    uint64_t rbuf[kWindow] = {};
    uint64_t sent = 0, posted = 0, received = 0;
    std::string failure;
};

class ThreadingTest : public ::testing::TestWithParam<int> {
  protected:
    void open(int threading) {
        fi_info *hints = fi_allocinfo();
        hints->caps = FI_MSG | FI_TAGGED;
        hints->ep_attr->type = FI_EP_RDM;
        hints->domain_attr->threading = static_cast<fi_threading>(threading);
        hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
        const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info_);
        fi_freeinfo(hints);
        ASSERT_EQ(rc, 0) << fi_strerror(-rc);
        ASSERT_EQ(info_->domain_attr->threading, threading);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
        fi_av_attr av_attr{};
        ASSERT_EQ(fi_av_open(domain_, &av_attr, &av_, nullptr), 0);
    }

    fid_cq *new_cq() {
        fi_cq_attr attr{};
        attr.format = FI_CQ_FORMAT_TAGGED;
        attr.size = 4 * kMessages;  // never full: the test reads the shared CQ only now and then
        fid_cq *cq = nullptr;
        EXPECT_EQ(fi_cq_open(domain_, &attr, &cq, nullptr), 0);
        cqs_.push_back(cq);
        return cq;
    }
    fid_cntr *new_cntr() {
        fi_cntr_attr attr{};
        attr.events = FI_CNTR_EVENTS_COMP;
        fid_cntr *c = nullptr;
        EXPECT_EQ(fi_cntr_open(domain_, &attr, &c, nullptr), 0);
        cntrs_.push_back(c);
        return c;
    }

    // Opens d's endpoint bound to the shared AV, `tx` for transmits, d.rx_cq for receives and
    // `cntr` for sends; checks that fi_enable installed the tables the policy chose.
    void open_ep(Driver &d, fid_cq *tx, fid_cntr *cntr, bool expect_locked) {
        ASSERT_EQ(fi_endpoint(domain_, info_, &d.ep, nullptr), 0);
        ASSERT_EQ(fi_ep_bind(d.ep, &av_->fid, 0), 0);
        if (tx == d.rx_cq) {
            ASSERT_EQ(fi_ep_bind(d.ep, &tx->fid, FI_TRANSMIT | FI_RECV), 0);
        } else {
            ASSERT_EQ(fi_ep_bind(d.ep, &tx->fid, FI_TRANSMIT), 0);
            ASSERT_EQ(fi_ep_bind(d.ep, &d.rx_cq->fid, FI_RECV), 0);
        }
        ASSERT_EQ(fi_ep_bind(d.ep, &cntr->fid, FI_SEND), 0);
        ASSERT_EQ(fi_enable(d.ep), 0);
        EXPECT_EQ(d.ep->tagged, ufi::api::tagged_ops(expect_locked));
        EXPECT_EQ(d.ep->msg, ufi::api::msg_ops(expect_locked));
        EXPECT_EQ(d.ep->rma, ufi::api::rma_ops(expect_locked));
        EXPECT_EQ(d.ep->atomic, ufi::api::atomic_ops(expect_locked));
    }

    std::vector<uint8_t> name_of(fid_ep *ep) {
        size_t len = 0;
        EXPECT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_ETOOSMALL);
        std::vector<uint8_t> name(len);
        EXPECT_EQ(fi_getname(&ep->fid, name.data(), &len), 0);
        return name;
    }
    fi_addr_t insert(const std::vector<uint8_t> &name) {
        fi_addr_t a = FI_ADDR_NOTAVAIL;
        EXPECT_EQ(fi_av_insert(av_, name.data(), 1, &a, 0, nullptr), 1);
        return a;
    }

    // Moves kMessages each way between a and b, each endpoint driven by its own thread.
    // `shared_tx`: the CQ both endpoints' sends complete in (read under `tx_mutex`, as the
    // models that share it ask); nullptr when each endpoint's CQ takes everything.
    void run(Driver &a, Driver &b, fid_cq *shared_tx) {
        std::mutex tx_mutex;
        uint64_t tx_done[2] = {0, 0};
        // Which sends completed (completions of one endpoint's sends may come in any order:
        // a rendezvous send completes when its receiver took it).
        std::vector<std::vector<bool>> tx_seen(2, std::vector<bool>(kMessages + 1, false));
        std::atomic<int> started{0};

        // A send completion: its context names the thread and the send; each comes once.
        auto account_send = [&](const fi_cq_tagged_entry &e, std::string &failure) {
            const uint64_t ctx = reinterpret_cast<uintptr_t>(e.op_context);
            const uint64_t who = ctx >> 32, seq = ctx & 0xffffffffu;
            if (who > 1 || !(e.flags & FI_SEND) || seq == 0 || seq > kMessages ||
                tx_seen[who][seq]) {
                failure = "unexpected send completion " + std::to_string(ctx);
                return;
            }
            tx_seen[who][seq] = true;
            ++tx_done[who];
        };
        auto reap_shared = [&](std::string &failure) {
            std::lock_guard<std::mutex> lock(tx_mutex);
            fi_cq_tagged_entry e[16];
            const ssize_t n = fi_cq_read(shared_tx, e, 16);
            if (n < 0 && n != -FI_EAGAIN) failure = "shared CQ: " + std::string(fi_strerror(-n));
            for (ssize_t i = 0; i < n; ++i) account_send(e[i], failure);
        };
        auto sends_done = [&](uint64_t id) {
            std::lock_guard<std::mutex> lock(tx_mutex);
            return tx_done[id];
        };

        auto drive = [&](Driver &d) {
            started.fetch_add(1);
            while (started.load() < 2) std::this_thread::yield();  // start together
            const auto deadline =
                std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
            for (uint64_t i = 0; i < kMessages; ++i) d.out.push_back((d.id << 32) | i);
            while (d.failure.empty() &&
                   (d.received < kMessages || sends_done(d.id) < kMessages)) {
                if (std::chrono::steady_clock::now() > deadline) {
                    d.failure = "timed out: sent " + std::to_string(d.sent) + " received " +
                                std::to_string(d.received) + " send completions " +
                                std::to_string(sends_done(d.id));
                    break;
                }
                while (d.posted < kMessages && d.posted - d.received < kWindow) {
                    const ssize_t rc = fi_trecv(d.ep, &d.rbuf[d.posted % kWindow], sizeof(uint64_t),
                                                nullptr, FI_ADDR_UNSPEC, kTag, 0, nullptr);
                    if (rc == -FI_EAGAIN) break;
                    if (rc != 0) d.failure = "fi_trecv: " + std::string(fi_strerror(-rc));
                    ++d.posted;
                }
                while (d.sent < kMessages && d.sent - sends_done(d.id) < kWindow) {
                    void *ctx = reinterpret_cast<void *>(static_cast<uintptr_t>((d.id << 32) | (d.sent + 1)));
                    const ssize_t rc = fi_tsend(d.ep, &d.out[d.sent], sizeof(uint64_t), nullptr,
                                                d.peer, kTag, ctx);
                    if (rc == -FI_EAGAIN) break;
                    if (rc != 0) d.failure = "fi_tsend: " + std::string(fi_strerror(-rc));
                    ++d.sent;
                }
                fi_cq_tagged_entry e[16];
                const ssize_t n = fi_cq_read(d.rx_cq, e, 16);
                if (n < 0 && n != -FI_EAGAIN) d.failure = "CQ: " + std::string(fi_strerror(-n));
                for (ssize_t i = 0; i < n && d.failure.empty(); ++i) {
                    if (e[i].flags & FI_SEND) {  // the isolated case: one CQ per endpoint
                        std::lock_guard<std::mutex> lock(tx_mutex);
                        account_send(e[i], d.failure);
                        continue;
                    }
                    const uint64_t want = ((d.id ^ 1) << 32) | d.received;
                    if (!(e[i].flags & FI_RECV) || d.rbuf[d.received % kWindow] != want) {
                        char got[96];
                        std::snprintf(got, sizeof got, " (holds %#llx, completion len %zu)",
                                      static_cast<unsigned long long>(d.rbuf[d.received % kWindow]),
                                      e[i].len);
                        d.failure = "message " + std::to_string(d.received) +
                                    " lost or out of order" + got;
                    }
                    ++d.received;
                }
                if (shared_tx != nullptr) reap_shared(d.failure);
            }
        };
        std::thread ta(drive, std::ref(a));
        std::thread tb(drive, std::ref(b));
        ta.join();
        tb.join();
        EXPECT_EQ(a.failure, "");
        EXPECT_EQ(b.failure, "");
        EXPECT_EQ(a.received, kMessages);
        EXPECT_EQ(b.received, kMessages);
        EXPECT_EQ(tx_done[0], kMessages);
        EXPECT_EQ(tx_done[1], kMessages);
        if (shared_tx != nullptr) {
            fi_cq_tagged_entry e;
            EXPECT_EQ(fi_cq_read(shared_tx, &e, 1), -FI_EAGAIN) << "no completion twice";
        }
        // Both start at once, so the handshakes cross: what a peer sent before this side
        // finished connecting (p2p lanes: it can come on the new lane before the reply on the
        // old one) was held and handled, never dropped.
        for (const Driver *d : {&a, &b}) {
            const auto *dp = ufi::runtime::ep::endpoint_of(&d->ep->fid)->data_path();
            ASSERT_NE(dp, nullptr);
            EXPECT_EQ(dp->stats().dropped_unknown_src, 0u) << "endpoint " << d->id;
            EXPECT_EQ(dp->stats().dropped_malformed, 0u) << "endpoint " << d->id;
        }
    }

    void TearDown() override {
        std::vector<fid_t> fids;
        for (fid_ep *ep : eps_) fids.push_back(ep != nullptr ? &ep->fid : nullptr);
        for (fid_cq *cq : cqs_) fids.push_back(&cq->fid);
        for (fid_cntr *c : cntrs_) fids.push_back(&c->fid);
        for (fid_t f : {av_ ? &av_->fid : nullptr, domain_ ? &domain_->fid : nullptr,
                        fabric_ ? &fabric_->fid : nullptr}) {
            fids.push_back(f);
        }
        for (fid_t f : fids) {
            if (f != nullptr) {
                EXPECT_EQ(fi_close(f), 0);
            }
        }
        if (info_) fi_freeinfo(info_);
    }

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    fid_av *av_ = nullptr;
    std::vector<fid_cq *> cqs_;
    std::vector<fid_cntr *> cntrs_;
    std::vector<fid_ep *> eps_;
};

class SharedCompletionObjects : public ThreadingTest {};

TEST_P(SharedCompletionObjects, TwoThreadsDriveTwoEndpointsSharingACqAndACounter) {
    ASSERT_NO_FATAL_FAILURE(open(GetParam()));
    fid_cq *tx = new_cq();
    fid_cntr *sends = new_cntr();
    Driver a, b;
    a.id = 0;
    b.id = 1;
    a.rx_cq = new_cq();
    b.rx_cq = new_cq();
    ASSERT_NO_FATAL_FAILURE(open_ep(a, tx, sends, true));
    eps_.push_back(a.ep);
    ASSERT_NO_FATAL_FAILURE(open_ep(b, tx, sends, true));
    eps_.push_back(b.ep);
    insert(name_of(a.ep));  // one AV: a is fi_addr 0, b is 1
    b.peer = 0;
    a.peer = insert(name_of(b.ep));
    ASSERT_EQ(a.peer, 1u);
    run(a, b, tx);
    EXPECT_EQ(fi_cntr_read(sends), 2 * kMessages);
    EXPECT_EQ(fi_cntr_readerr(sends), 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, SharedCompletionObjects,
                         ::testing::Values(FI_THREAD_SAFE, FI_THREAD_FID, FI_THREAD_ENDPOINT),
                         [](const auto &info) {
                             return std::string(info.param == FI_THREAD_SAFE  ? "Safe"
                                                : info.param == FI_THREAD_FID ? "Fid"
                                                                              : "Endpoint");
                         });

TEST_F(ThreadingTest, CompletionGroupsRunConcurrentlyOnLockFreeTables) {
    ASSERT_NO_FATAL_FAILURE(open(FI_THREAD_COMPLETION));
    Driver a, b;
    a.id = 0;
    b.id = 1;
    a.rx_cq = new_cq();
    b.rx_cq = new_cq();
    fid_cntr *ca = new_cntr(), *cb = new_cntr();
    ASSERT_NO_FATAL_FAILURE(open_ep(a, a.rx_cq, ca, false));
    eps_.push_back(a.ep);
    ASSERT_NO_FATAL_FAILURE(open_ep(b, b.rx_cq, cb, false));
    eps_.push_back(b.ep);
    insert(name_of(a.ep));
    b.peer = 0;
    a.peer = insert(name_of(b.ep));
    run(a, b, nullptr);
    EXPECT_EQ(fi_cntr_read(ca), kMessages);
    EXPECT_EQ(fi_cntr_read(cb), kMessages);
}

TEST_F(ThreadingTest, DomainModelEndpointsUseTheLockFreeTables) {
    ASSERT_NO_FATAL_FAILURE(open(FI_THREAD_DOMAIN));
    Driver a;
    a.rx_cq = new_cq();
    fid_cntr *c = new_cntr();
    ASSERT_EQ(fi_endpoint(domain_, info_, &a.ep, nullptr), 0);
    eps_.push_back(a.ep);
    // Before fi_enable the (locked) tables refuse data calls.
    uint64_t v = 0;
    EXPECT_EQ(fi_tsend(a.ep, &v, sizeof v, nullptr, 0, kTag, nullptr), -FI_EOPBADSTATE);
    EXPECT_EQ(a.ep->tagged, ufi::api::tagged_ops(true));
    EXPECT_EQ(fi_close(&a.ep->fid), 0);
    eps_.clear();
    a.ep = nullptr;
    ASSERT_NO_FATAL_FAILURE(open_ep(a, a.rx_cq, c, false));
    eps_.push_back(a.ep);
    // It reaches itself through the lock-free tables.
    a.peer = insert(name_of(a.ep));
    uint64_t in = 0, out = 0x1234;
    ASSERT_EQ(fi_trecv(a.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, kTag, 0, nullptr), 0);
    ASSERT_EQ(fi_tsend(a.ep, &out, sizeof out, nullptr, a.peer, kTag, nullptr), 0);
    int got = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (got < 2 && std::chrono::steady_clock::now() < deadline) {
        fi_cq_tagged_entry e;
        const ssize_t n = fi_cq_read(a.rx_cq, &e, 1);
        ASSERT_TRUE(n == 1 || n == -FI_EAGAIN) << fi_strerror(static_cast<int>(-n));
        if (n == 1) ++got;
    }
    EXPECT_EQ(got, 2);
    EXPECT_EQ(in, out);
}

}  // namespace
}  // namespace ufi::msg_test
