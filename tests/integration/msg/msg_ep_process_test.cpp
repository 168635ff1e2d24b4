// Connected endpoints (FI_EP_MSG) between two processes: a server listens on a passive
// endpoint, a client connects; messages, tagged messages and RMA of every size both ways;
// atomics; fi_shutdown gives the peer FI_SHUTDOWN and cancels what was posted, while the sends
// completed before it arrive, a slow receiver notwithstanding; a peer that dies gives
// FI_SHUTDOWN and error completions for what was in flight, within a bound; a server killed
// while its client is connected is replaced at once by one listening on the same port
// (the connection manager's listener sets SO_REUSEADDR). Run over each transport set
// meson.build names; every wait is bounded. Without an FI_EP_MSG entry (no tcp for the
// connection manager), skipped.
#include "two_process.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>
#include <thread>

namespace ufi::msg_process_test {
namespace {

using two_process::kFailureBoundMs;
using two_process::kSizes;
using two_process::pattern;
using two_process::Side;

constexpr int kNoMsgEntry = 77;  // a child's exit status: no FI_EP_MSG entry here

// What the server's accept data tells the client: its RMA window.
struct Window {
    uint64_t addr = 0;
    uint64_t key = 0;
};
constexpr size_t kWindow = (2 << 20) + 4096;

struct MsgSide {
    MsgSide(const char *role, int sock) {
        s.role = role;
        s.sock = sock;
    }
    Side s;
    fid_eq *eq = nullptr;
    fid_pep *pep = nullptr;
    fid_mr *mr = nullptr;
    fi_info *listen_info = nullptr;

    // The next event of the EQ (its type in `event`, its bytes in `buf`), progressing the
    // CQ meanwhile: the event's type (> 0), -FI_EAVAIL with `err` filled, -FI_ETIMEDOUT.
    ssize_t next_event(uint32_t &event, std::vector<uint8_t> &buf, fi_eq_err_entry &err,
                       int bound_ms = two_process::kWaitMs) {
        buf.assign(4096, 0);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(bound_ms);
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_eq_read(eq, &event, buf.data(), buf.size(), 0);
            if (rc > 0) {
                buf.resize(static_cast<size_t>(rc));
                return rc;
            }
            if (rc == -FI_EAVAIL) {
                err = fi_eq_err_entry{};
                return fi_eq_readerr(eq, &err, 0) == 1 ? -FI_EAVAIL : -FI_EIO;
            }
            if (rc != -FI_EAGAIN) return rc;
            if (s.cq != nullptr) {
                fi_cq_tagged_entry none;
                (void)fi_cq_read(s.cq, &none, 0);
            }
            sched_yield();
        }
        return -FI_ETIMEDOUT;
    }

    void close_all() {
        if (mr) fi_close(&mr->fid);
        mr = nullptr;
        if (s.ep) fi_close(&s.ep->fid);
        s.ep = nullptr;
        if (pep) fi_close(&pep->fid);
        pep = nullptr;
        if (s.cq) fi_close(&s.cq->fid);
        s.cq = nullptr;
        if (eq) fi_close(&eq->fid);
        eq = nullptr;
        if (listen_info) fi_freeinfo(listen_info);
        listen_info = nullptr;
        two_process::close_side(s);  // (domain, fabric, info)
    }
};

fi_info *msg_hints() {
    fi_info *hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    return hints;
}

// getinfo for a listener on 127.0.0.1:`port` (0: the kernel picks), fabric, EQ, passive
// endpoint bound and listening; the port it listens on in `port`. kNoMsgEntry without MSG.
int listen_on(MsgSide &m, uint16_t &port) {
    const char *role = m.s.role;
    fi_info *hints = msg_hints();
    const int rc = fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", std::to_string(port).c_str(), FI_SOURCE,
                              hints, &m.listen_info);
    fi_freeinfo(hints);
    if (rc == -FI_ENODATA) return kNoMsgEntry;
    CHECK(rc == 0);
    CHECK(fi_fabric(m.listen_info->fabric_attr, &m.s.fabric, nullptr) == 0);
    fi_eq_attr eq_attr{};
    eq_attr.wait_obj = FI_WAIT_UNSPEC;
    CHECK(fi_eq_open(m.s.fabric, &eq_attr, &m.eq, nullptr) == 0);
    CHECK(fi_passive_ep(m.s.fabric, m.listen_info, &m.pep, nullptr) == 0);
    CHECK(fi_pep_bind(m.pep, &m.eq->fid, 0) == 0);
    const int listened = fi_listen(m.pep);
    if (listened != 0) std::fprintf(stderr, "[%s] fi_listen on port %u: %s\n", role, port, fi_strerror(-listened));
    CHECK(listened == 0);
    sockaddr_in sa{};
    size_t len = sizeof sa;
    CHECK(fi_getname(&m.pep->fid, &sa, &len) == 0 && sa.sin_family == AF_INET);
    port = ntohs(sa.sin_port);
    CHECK(port != 0);
    return 0;
}

// listen_on(), then the port goes to the client over the socket.
int serve(MsgSide &m, uint16_t port) {
    const char *role = m.s.role;
    const int listened = listen_on(m, port);
    if (listened == kNoMsgEntry) return kNoMsgEntry;
    CHECK(listened == 0);
    CHECK(m.s.io(&port, sizeof port, true));
    return 0;
}

// Domain, CQ and endpoint of `info`, bound to the EQ (opened here when there is none).
int open_endpoint(MsgSide &m, fi_info *info) {
    const char *role = m.s.role;
    if (m.s.fabric == nullptr) CHECK(fi_fabric(info->fabric_attr, &m.s.fabric, nullptr) == 0);
    if (m.eq == nullptr) {
        fi_eq_attr eq_attr{};
        eq_attr.wait_obj = FI_WAIT_UNSPEC;
        CHECK(fi_eq_open(m.s.fabric, &eq_attr, &m.eq, nullptr) == 0);
    }
    if (m.s.domain == nullptr) CHECK(fi_domain(m.s.fabric, info, &m.s.domain, nullptr) == 0);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 4096;
    CHECK(fi_cq_open(m.s.domain, &cq_attr, &m.s.cq, nullptr) == 0);
    CHECK(fi_endpoint(m.s.domain, info, &m.s.ep, nullptr) == 0);
    CHECK(fi_ep_bind(m.s.ep, &m.eq->fid, 0) == 0);
    CHECK(fi_ep_bind(m.s.ep, &m.s.cq->fid, FI_TRANSMIT | FI_RECV) == 0);
    CHECK(fi_enable(m.s.ep) == 0);
    return 0;
}

// Server: waits for a connection request carrying `hello`, accepts it with the RMA window
// `buf` (registered here), waits for FI_CONNECTED.
int accept_one(MsgSide &m, const std::vector<uint8_t> &hello, std::vector<uint8_t> &buf) {
    const char *role = m.s.role;
    uint32_t event = 0;
    std::vector<uint8_t> bytes;
    fi_eq_err_entry err{};
    CHECK(m.next_event(event, bytes, err) > 0 && event == FI_CONNREQ);
    fi_eq_cm_entry entry;
    CHECK(bytes.size() == sizeof entry + hello.size());
    std::memcpy(&entry, bytes.data(), sizeof entry);
    CHECK(std::equal(hello.begin(), hello.end(), bytes.begin() + sizeof entry));
    CHECK(entry.info != nullptr && entry.info->handle != nullptr);
    CHECK(open_endpoint(m, entry.info) == 0);
    fi_freeinfo(entry.info);
    CHECK(fi_mr_reg(m.s.domain, buf.data(), buf.size(), FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &m.mr,
                    nullptr) == 0);
    Window w{reinterpret_cast<uint64_t>(buf.data()), fi_mr_key(m.mr)};
    CHECK(fi_accept(m.s.ep, &w, sizeof w) == 0);
    CHECK(m.next_event(event, bytes, err) > 0 && event == FI_CONNECTED);
    std::memcpy(&entry, bytes.data(), sizeof entry);
    CHECK(entry.fid == &m.s.ep->fid);
    return 0;
}

// Client: connects to 127.0.0.1:`port` with `hello`; the server's window in `w`.
int connect_to(MsgSide &m, uint16_t port, const std::vector<uint8_t> &hello, Window &w) {
    const char *role = m.s.role;
    fi_info *hints = msg_hints();
    const int rc = fi_getinfo(FI_VERSION(2, 0), "127.0.0.1", std::to_string(port).c_str(), 0, hints, &m.s.info);
    fi_freeinfo(hints);
    if (rc == -FI_ENODATA) return kNoMsgEntry;
    CHECK(rc == 0 && m.s.info->dest_addr != nullptr);
    CHECK(open_endpoint(m, m.s.info) == 0);
    CHECK(fi_connect(m.s.ep, m.s.info->dest_addr, hello.data(), hello.size()) == 0);
    uint32_t event = 0;
    std::vector<uint8_t> bytes;
    fi_eq_err_entry err{};
    const ssize_t got = m.next_event(event, bytes, err);
    if (got == -FI_EAVAIL) std::fprintf(stderr, "[%s] fi_connect failed: %s\n", role, fi_strerror(err.err));
    CHECK(got > 0 && event == FI_CONNECTED);
    fi_eq_cm_entry entry;
    CHECK(bytes.size() == sizeof entry + sizeof w);
    std::memcpy(&w, bytes.data() + sizeof entry, sizeof w);
    return 0;
}

// One message of `n` bytes from one side to the other (`sender` says which this is), tagged
// or not, checked at the receiver.
int message(MsgSide &m, bool sender, size_t n, bool tagged) {
    const char *role = m.s.role;
    const auto out = pattern(n, static_cast<uint8_t>(n * 3 + tagged));
    fi_cq_tagged_entry e{};
    if (sender) {
        CHECK(m.s.sync());  // the receive is posted
        CHECK(m.s.retry([&] {
            return tagged ? fi_tsend(m.s.ep, out.data(), n, nullptr, FI_ADDR_NOTAVAIL, 0x77, nullptr)
                          : fi_send(m.s.ep, out.data(), n, nullptr, FI_ADDR_NOTAVAIL, nullptr);
        }) == 0);
        CHECK(m.s.wait(e) == 1 && (e.flags & FI_SEND));
        return 0;
    }
    std::vector<uint8_t> in(n + 64, 0);
    CHECK((tagged ? fi_trecv(m.s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 0x77, 0, nullptr)
                  : fi_recv(m.s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr)) == 0);
    CHECK(m.s.sync());
    CHECK(m.s.wait(e) == 1 && (e.flags & FI_RECV) && e.len == n);
    CHECK(!tagged || e.tag == 0x77);
    CHECK(std::equal(out.begin(), out.end(), in.begin()));
    return 0;
}

// Every size both ways, untagged and tagged (`first`: whether this side sends first).
int all_sizes(MsgSide &m, bool first) {
    const char *role = m.s.role;
    for (size_t n : kSizes) {
        for (bool tagged : {false, true}) {
            CHECK(message(m, first, n, tagged) == 0);
            CHECK(message(m, !first, n, tagged) == 0);
        }
    }
    return 0;
}

// A completion with an error, read within kFailureBoundMs while progressing the EQ too.
int expect_error_completion(MsgSide &m, void *ctx, int &err_out) {
    const char *role = m.s.role;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailureBoundMs);
    while (std::chrono::steady_clock::now() < deadline) {
        fi_cq_tagged_entry e{};
        const ssize_t rc = fi_cq_read(m.s.cq, &e, 1);
        if (rc == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            CHECK(fi_cq_readerr(m.s.cq, &err, 0) == 1);
            CHECK(err.op_context == ctx);
            err_out = err.err;
            return 0;
        }
        CHECK(rc == -FI_EAGAIN);  // (no success expected)
        uint32_t event;
        uint8_t peek[256];
        (void)fi_eq_read(m.eq, &event, peek, sizeof peek, FI_PEEK);
        sched_yield();
    }
    std::fprintf(stderr, "[%s] no error completion within %d ms\n", role, kFailureBoundMs);
    return 1;
}

// Runs the two sides; each must exit 0 (the client `client_status`); skipped without MSG.
void expect_pair(int (*run)(const char *, int, bool), const char *server, const char *client,
                 int client_status = 0) {
    const two_process::PairResult r = two_process::run_pair(run, server, client);
    if (r.a == kNoMsgEntry) GTEST_SKIP() << "no FI_EP_MSG entry in this transport set";
    EXPECT_EQ(r.a, 0) << server;
    EXPECT_EQ(r.b, client_status) << client;
}

// ---- connect, every size both ways, RMA, shutdown ----

int transfers_server(const char *role, int sock) {
    MsgSide m(role, sock);
    if (const int rc = serve(m, 0); rc != 0) return rc;
    std::vector<uint8_t> window(kWindow, 0);
    const auto hello = pattern(300, 5);
    CHECK(accept_one(m, hello, window) == 0);
    CHECK(all_sizes(m, false) == 0);
    // RMA: the client wrote its pattern at 0 and read ours back from 1 MiB.
    const auto ours = pattern(1 << 20, 9);
    std::copy(ours.begin(), ours.end(), window.begin() + (1 << 20));
    CHECK(m.s.sync());  // our half is in place
    CHECK(m.s.sync());  // the client wrote and read
    const auto theirs = pattern(1 << 20, 8);
    CHECK(std::equal(theirs.begin(), theirs.end(), window.begin()));
    uint64_t counter = 0;
    std::memcpy(&counter, window.data() + (2 << 20), sizeof counter);
    CHECK(counter == 5);  // the client's atomics: 2 + 3
    // A receive posted, then the client shuts down: FI_SHUTDOWN, and the receive canceled.
    std::vector<uint8_t> in(64);
    int ctx = 0;
    CHECK(fi_recv(m.s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &ctx) == 0);
    CHECK(m.s.sync());
    uint32_t event = 0;
    std::vector<uint8_t> bytes;
    fi_eq_err_entry err{};
    CHECK(m.next_event(event, bytes, err, kFailureBoundMs) > 0 && event == FI_SHUTDOWN);
    int cq_err = 0;
    CHECK(expect_error_completion(m, &ctx, cq_err) == 0);
    CHECK(cq_err == FI_ECANCELED);
    CHECK(fi_recv(m.s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &ctx) == -FI_ENOTCONN);
    CHECK(fi_send(m.s.ep, in.data(), 8, nullptr, FI_ADDR_NOTAVAIL, &ctx) < 0);
    m.close_all();
    return 0;
}

int transfers_client(const char *role, int sock) {
    MsgSide m(role, sock);
    uint16_t port = 0;
    if (!m.s.io(&port, sizeof port, false)) return 1;  // (the server found no MSG entry)
    Window w;
    const auto hello = pattern(300, 5);
    const int connected = connect_to(m, port, hello, w);
    if (connected == kNoMsgEntry) return kNoMsgEntry;
    CHECK(connected == 0);
    CHECK(all_sizes(m, true) == 0);
    CHECK(m.s.sync());  // the server's half is in place
    const auto mine = pattern(1 << 20, 8);
    std::vector<uint8_t> back(1 << 20, 0);
    fi_cq_tagged_entry e{};
    CHECK(m.s.retry([&] {
        return fi_write(m.s.ep, mine.data(), mine.size(), nullptr, FI_ADDR_NOTAVAIL, w.addr, w.key, nullptr);
    }) == 0);
    CHECK(m.s.wait(e) == 1 && (e.flags & FI_WRITE));
    CHECK(m.s.retry([&] {
        return fi_read(m.s.ep, back.data(), back.size(), nullptr, FI_ADDR_NOTAVAIL, w.addr + (1 << 20), w.key,
                       nullptr);
    }) == 0);
    CHECK(m.s.wait(e) == 1 && (e.flags & FI_READ));
    const auto theirs = pattern(1 << 20, 9);
    CHECK(back == theirs);
    // Atomics on a counter at 2 MiB (zero): add 2, then fetch-and-add 3 (fetching 2).
    uint64_t two = 2, three = 3, fetched = 0;
    CHECK(m.s.retry([&] {
        return fi_atomic(m.s.ep, &two, 1, nullptr, FI_ADDR_NOTAVAIL, w.addr + (2 << 20), w.key, FI_UINT64,
                         FI_SUM, nullptr);
    }) == 0);
    CHECK(m.s.wait(e) == 1 && (e.flags & FI_ATOMIC));
    CHECK(m.s.retry([&] {
        return fi_fetch_atomic(m.s.ep, &three, 1, nullptr, &fetched, nullptr, FI_ADDR_NOTAVAIL,
                               w.addr + (2 << 20), w.key, FI_UINT64, FI_SUM, nullptr);
    }) == 0);
    CHECK(m.s.wait(e) == 1 && (e.flags & FI_ATOMIC));
    CHECK(fetched == 2);
    CHECK(m.s.sync());
    // Our own posted receive is canceled by fi_shutdown, before it returns.
    std::vector<uint8_t> in(64);
    int ctx = 0;
    CHECK(fi_trecv(m.s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 5, 0, &ctx) == 0);
    CHECK(m.s.sync());  // the server's receive is posted
    CHECK(fi_shutdown(m.s.ep, 0) == 0);
    fi_cq_err_entry err{};
    CHECK(fi_cq_read(m.s.cq, &e, 1) == -FI_EAVAIL && fi_cq_readerr(m.s.cq, &err, 0) == 1);
    CHECK(err.op_context == &ctx && err.err == FI_ECANCELED);
    CHECK(fi_trecv(m.s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, 5, 0, &ctx) == -FI_ENOTCONN);
    m.close_all();
    return 0;
}

int run_transfers(const char *role, int sock, bool server) {
    return server ? transfers_server(role, sock) : transfers_client(role, sock);
}

TEST(MsgProcess, EverySizeBothWaysRmaAndShutdown) {
    expect_pair(run_transfers, "server", "client");
}

// ---- the client dies: FI_SHUTDOWN and error completions at the server ----

int death_server(const char *role, int sock) {
    MsgSide m(role, sock);
    if (const int rc = serve(m, 0); rc != 0) return rc;
    std::vector<uint8_t> window(4096, 0);
    CHECK(accept_one(m, {1, 2, 3}, window) == 0);
    CHECK(message(m, false, 8, false) == 0);  // (both sides' data lanes up)
    // In flight when the client dies: a posted receive, and a send of 2 MiB that no receive
    // at the client takes (it waits for one, announced).
    std::vector<uint8_t> in(64);
    const auto big = pattern(2 << 20, 1);
    int recv_ctx = 0, send_ctx = 0;
    CHECK(fi_recv(m.s.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &recv_ctx) == 0);
    CHECK(m.s.retry([&] { return fi_send(m.s.ep, big.data(), big.size(), nullptr, FI_ADDR_NOTAVAIL, &send_ctx); }) == 0);
    CHECK(m.s.sync());  // the client dies now
    const auto start = std::chrono::steady_clock::now();
    bool shutdown_seen = false, recv_failed = false, send_failed = false;
    const auto deadline = start + std::chrono::milliseconds(kFailureBoundMs);
    while (!(shutdown_seen && recv_failed && send_failed) && std::chrono::steady_clock::now() < deadline) {
        uint32_t event = 0;
        uint8_t buf[256];
        const ssize_t rc = fi_eq_read(m.eq, &event, buf, sizeof buf, 0);
        if (rc > 0) {
            CHECK(event == FI_SHUTDOWN);
            shutdown_seen = true;
        }
        CHECK(rc > 0 || rc == -FI_EAGAIN);
        fi_cq_tagged_entry e{};
        const ssize_t got = fi_cq_read(m.s.cq, &e, 1);
        if (got == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            CHECK(fi_cq_readerr(m.s.cq, &err, 0) == 1);
            std::fprintf(stderr, "[%s] error completion (%s): %s\n", role,
                         err.op_context == &recv_ctx ? "receive" : "send", fi_strerror(err.err));
            CHECK(err.op_context == &recv_ctx || err.op_context == &send_ctx);
            (err.op_context == &recv_ctx ? recv_failed : send_failed) = true;
        } else {
            CHECK(got == -FI_EAGAIN);  // (neither may succeed: the client received nothing)
        }
        sched_yield();
    }
    std::fprintf(stderr, "[%s] shutdown %d, receive failed %d, send failed %d, after %lld ms\n", role,
                 shutdown_seen, recv_failed, send_failed,
                 static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - start).count()));
    CHECK(shutdown_seen && recv_failed && send_failed);
    m.close_all();
    return 0;
}

int death_client(const char *role, int sock) {
    MsgSide m(role, sock);
    uint16_t port = 0;
    if (!m.s.io(&port, sizeof port, false)) return 1;
    Window w;
    const int connected = connect_to(m, port, {1, 2, 3}, w);
    if (connected == kNoMsgEntry) return kNoMsgEntry;
    CHECK(connected == 0);
    CHECK(message(m, true, 8, false) == 0);
    CHECK(m.s.sync());
    raise(SIGKILL);  // with the connection up and a rendezvous announced to it
    return 1;
}

int run_death(const char *role, int sock, bool server) {
    return server ? death_server(role, sock) : death_client(role, sock);
}

TEST(MsgProcess, APeerThatDiesGivesShutdownAndErrorCompletions) {
    expect_pair(run_death, "server", "client", 128 + SIGKILL);
}

// ---- sends completed before fi_shutdown are delivered, though the receiver is slow ----

// A send of kStreamLen bytes completes once its bytes are copied; over tcp the last one may
// still wait in the transport's buffer behind a full socket when the sender calls fi_shutdown.
// The client sends until a send stays incomplete (the server does not progress for a while:
// the sockets fill), shuts down at once, and tells the server how many of its sends completed
// successfully: exactly those arrive, whole and in order; the other receives are canceled.
constexpr size_t kStreamCount = 4096;
constexpr size_t kStreamLen = 8192;
constexpr int kStreamSleepMs = 300;

int stream_server(const char *role, int sock) {
    MsgSide m(role, sock);
    if (const int rc = serve(m, 0); rc != 0) return rc;
    std::vector<uint8_t> window(4096, 0);
    CHECK(accept_one(m, {3}, window) == 0);
    CHECK(message(m, false, 8, false) == 0);  // (the lanes up both ways)
    CHECK(message(m, true, 8, false) == 0);
    std::vector<std::vector<uint8_t>> in(kStreamCount, std::vector<uint8_t>(kStreamLen, 0));
    for (size_t i = 0; i < kStreamCount; ++i) {
        CHECK(m.s.retry([&] { return fi_recv(m.s.ep, in[i].data(), kStreamLen, nullptr, FI_ADDR_UNSPEC, &in[i]); }) == 0);
    }
    CHECK(m.s.sync());  // the receives are posted
    // Not progressed for a while: the client's sends fill the sockets, then wait.
    std::this_thread::sleep_for(std::chrono::milliseconds(kStreamSleepMs));
    size_t received = 0, failed = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(two_process::kWaitMs);
    while (received + failed < kStreamCount && std::chrono::steady_clock::now() < deadline) {
        fi_cq_tagged_entry e{};
        const ssize_t rc = fi_cq_read(m.s.cq, &e, 1);
        if (rc == 1) {
            CHECK(failed == 0 && (e.flags & FI_RECV) && e.len == kStreamLen && e.op_context == &in[received]);
            CHECK(in[received] == pattern(kStreamLen, static_cast<uint8_t>(received)));
            ++received;
        } else if (rc == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            CHECK(fi_cq_readerr(m.s.cq, &err, 0) == 1);
            ++failed;
        } else {
            CHECK(rc == -FI_EAGAIN);
            uint32_t event;
            uint8_t peek[256];
            (void)fi_eq_read(m.eq, &event, peek, sizeof peek, FI_PEEK);  // (FI_SHUTDOWN cancels the rest)
            sched_yield();
        }
    }
    uint64_t completed = 0;
    CHECK(m.s.io(&completed, sizeof completed, false));
    std::fprintf(stderr, "[%s] %zu received, %zu canceled; the client saw %llu sends complete\n", role,
                 received, failed, static_cast<unsigned long long>(completed));
    CHECK(completed > 0 && completed < kStreamCount);  // (the sockets filled: the test tested)
    CHECK(received == completed);
    CHECK(received + failed == kStreamCount);
    m.close_all();
    return 0;
}

int stream_client(const char *role, int sock) {
    MsgSide m(role, sock);
    uint16_t port = 0;
    if (!m.s.io(&port, sizeof port, false)) return 1;
    Window w;
    const int connected = connect_to(m, port, {3}, w);
    if (connected == kNoMsgEntry) return kNoMsgEntry;
    CHECK(connected == 0);
    CHECK(message(m, true, 8, false) == 0);
    CHECK(message(m, false, 8, false) == 0);
    std::vector<std::vector<uint8_t>> out;
    for (size_t i = 0; i < kStreamCount; ++i) out.push_back(pattern(kStreamLen, static_cast<uint8_t>(i)));
    CHECK(m.s.sync());
    uint64_t completed = 0;
    const auto read_completions = [&] {
        fi_cq_tagged_entry e{};
        ssize_t rc;
        while ((rc = fi_cq_read(m.s.cq, &e, 1)) == 1) ++completed;
        if (rc == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            (void)fi_cq_readerr(m.s.cq, &err, 0);
            return false;
        }
        return true;
    };
    for (size_t i = 0; i < kStreamCount; ++i) {
        CHECK(fi_send(m.s.ep, out[i].data(), kStreamLen, nullptr, FI_ADDR_NOTAVAIL, nullptr) == 0);
        const auto stuck = std::chrono::steady_clock::now() + std::chrono::milliseconds(kStreamSleepMs / 3);
        while (completed <= i && std::chrono::steady_clock::now() < stuck) {
            CHECK(read_completions());
            sched_yield();
        }
        if (completed <= i) break;  // the sockets are full: shut down now
    }
    CHECK(fi_shutdown(m.s.ep, 0) == 0);
    // The send left waiting: canceled by the shutdown, or sent while it waited for the lane.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (std::chrono::steady_clock::now() < until) {
        if (read_completions()) sched_yield();
    }
    CHECK(m.s.io(&completed, sizeof completed, true));
    m.close_all();
    return 0;
}

int run_stream(const char *role, int sock, bool server) {
    return server ? stream_server(role, sock) : stream_client(role, sock);
}

TEST(MsgProcess, SendsCompletedBeforeShutdownAreDelivered) {
    expect_pair(run_stream, "server", "client");
}

// ---- a server killed with its client connected; another listens on its port at once ----

// Runs a server process: listens on `port` (0: any; the port goes over the socket), accepts
// one client, answers one message, then kills itself if `die`, or waits for the client's
// shutdown.
int one_server(const char *role, int sock, uint16_t port, bool die) {
    MsgSide m(role, sock);
    if (const int rc = serve(m, port); rc != 0) return rc;
    std::vector<uint8_t> window(4096, 0);
    CHECK(accept_one(m, {die ? uint8_t(1) : uint8_t(2)}, window) == 0);
    CHECK(message(m, false, 100, true) == 0);
    if (die) {
        CHECK(m.s.sync());
        raise(SIGKILL);
    }
    uint32_t event = 0;
    std::vector<uint8_t> bytes;
    fi_eq_err_entry err{};
    CHECK(m.next_event(event, bytes, err, kFailureBoundMs) > 0 && event == FI_SHUTDOWN);
    m.close_all();
    return 0;
}

int restart_servers(const char *role, int sock) {
    const pid_t first = fork();
    if (first == 0) _exit(one_server("server-1", sock, 0, true));
    const int first_rc = two_process::wait_bounded(
        first, std::chrono::steady_clock::now() + std::chrono::seconds(two_process::kChildTimeoutS));
    if (first_rc == kNoMsgEntry) return kNoMsgEntry;
    CHECK(first_rc == 128 + SIGKILL);
    // At once, on the port the first one had (the client sent it back).
    uint16_t port = 0;
    Side s;
    s.role = role;
    s.sock = sock;
    CHECK(s.io(&port, sizeof port, false) && port != 0);
    return one_server("server-2", sock, port, false);
}

int restart_client(const char *role, int sock) {
    uint16_t port = 0;
    {
        MsgSide m(role, sock);
        if (!m.s.io(&port, sizeof port, false)) return 1;
        Window w;
        const int connected = connect_to(m, port, {1}, w);
        if (connected == kNoMsgEntry) return kNoMsgEntry;
        CHECK(connected == 0);
        CHECK(message(m, true, 100, true) == 0);
        CHECK(m.s.sync());  // the server dies now
        uint32_t event = 0;
        std::vector<uint8_t> bytes;
        fi_eq_err_entry err{};
        CHECK(m.next_event(event, bytes, err, kFailureBoundMs) > 0 && event == FI_SHUTDOWN);
        m.close_all();
    }
    MsgSide m(role, sock);
    const uint16_t old_port = port;
    CHECK(m.s.io(&port, sizeof port, true));          // for the second server
    CHECK(m.s.io(&port, sizeof port, false));         // it listens
    CHECK(port == old_port);
    Window w;
    CHECK(connect_to(m, port, {2}, w) == 0);
    CHECK(message(m, true, 100, true) == 0);
    CHECK(fi_shutdown(m.s.ep, 0) == 0);
    m.close_all();
    return 0;
}

int run_restart(const char *role, int sock, bool server) {
    return server ? restart_servers(role, sock) : restart_client(role, sock);
}

TEST(MsgProcess, AServerKilledWithClientsConnectedListensAgainAtOnce) {
    expect_pair(run_restart, "servers", "client");
}

}  // namespace
}  // namespace ufi::msg_process_test
