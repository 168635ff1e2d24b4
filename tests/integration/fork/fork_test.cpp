// fork() with open ufi objects (docs/fork.md): a child may close what it inherited, and must
// release nothing the parent owns while doing so; the parent keeps using and then closes its
// objects. The parent opens one of everything (fabric, domain, AV, CQ, counter and EQ with fd
// wait objects whose fds it also takes with FI_GETWAIT, an enabled endpoint bound to all of
// them, a registered MR), forks, and the child closes each inherited object (every fi_close
// must return 0), then opens, enables and closes objects of its own. Neither may change the
// epoll sets the two processes share (ufi's wait objects, UCX's async thread; compared through
// /proc/self/fdinfo), and the parent's objects keep working. Every wait is bounded: alarm() in
// the child, a timed waitpid loop in the parent. Run over shared memory, tcp and every
// transport (meson sets UFI_TLS).
#include "runtime/ep/endpoint.h"
#include "runtime/fid_cast.h"
#include "transports/iface/endpoint_worker.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <gtest/gtest.h>

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kChildTimeoutS = 30;

#define CHILD_CHECK(cond)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            std::fprintf(stderr, "[child %d] %s:%d: check failed: %s\n", int(getpid()), __FILE__, \
                         __LINE__, #cond);                                                        \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

// Whether an enabled endpoint's transports poll their async events (white-box): they do in a
// fork() child of a process that had endpoints enabled, whose UCX async thread is the parent's.
bool polls_async(fid_ep *ep) {
    auto *e = ufi::runtime::object_of<ufi::runtime::ep::Endpoint>(ep);
    return e->worker() != nullptr && e->worker()->polls_async_events();
}

// The child's exit status (128 + signal when it was killed by one), or -1 after the deadline
// (the child is then killed).
int wait_bounded(pid_t pid, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

// The fds an epoll set watches, from /proc/self/fdinfo ("tfd: N ..." lines).
std::set<int> epoll_targets(int epfd) {
    std::set<int> out;
    std::ifstream in("/proc/self/fdinfo/" + std::to_string(epfd));
    std::string word;
    while (in >> word) {
        if (word == "tfd:") {
            int fd = -1;
            if (in >> fd) out.insert(fd);
        }
    }
    return out;
}

// Every epoll set of this process (ufi's wait objects, UCX's async thread) and what each
// watches: fd -> targets. A fork() child shares these sets with its parent.
std::map<int, std::set<int>> all_epoll_sets() {
    std::map<int, std::set<int>> out;
    DIR *dir = opendir("/proc/self/fd");
    if (dir == nullptr) return out;
    while (dirent *e = readdir(dir)) {
        if (e->d_name[0] == '.') continue;
        const int fd = std::atoi(e->d_name);
        char target[64] = {};
        const std::string link = std::string("/proc/self/fd/") + e->d_name;
        if (readlink(link.c_str(), target, sizeof target - 1) <= 0) continue;
        if (std::string(target) == "anon_inode:[eventpoll]") out[fd] = epoll_targets(fd);
    }
    closedir(dir);
    return out;
}

// One of every object, opened on the first domain fi_getinfo offers.
struct Objects {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_cntr *cntr = nullptr;
    fid_eq *eq = nullptr;
    fid_ep *ep = nullptr;
    fid_mr *mr = nullptr;
    int cq_fd = -1;
    int cntr_fd = -1;
    int eq_fd = -1;
    std::vector<char> buf = std::vector<char>(1 << 16);

    // 0, or the line number of the call that failed.
    int open() {
        fi_info *hints = fi_allocinfo();
        if (hints == nullptr) return __LINE__;
        hints->ep_attr->type = FI_EP_RDM;
        const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info);
        fi_freeinfo(hints);
        if (rc != 0) return __LINE__;
        if (fi_fabric(info->fabric_attr, &fabric, nullptr) != 0) return __LINE__;
        if (fi_domain(fabric, info, &domain, nullptr) != 0) return __LINE__;
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        if (fi_av_open(domain, &av_attr, &av, nullptr) != 0) return __LINE__;
        fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_CONTEXT;
        cq_attr.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(domain, &cq_attr, &cq, nullptr) != 0) return __LINE__;
        fi_cntr_attr cntr_attr{};
        cntr_attr.events = FI_CNTR_EVENTS_COMP;
        cntr_attr.wait_obj = FI_WAIT_FD;
        if (fi_cntr_open(domain, &cntr_attr, &cntr, nullptr) != 0) return __LINE__;
        fi_eq_attr eq_attr{};
        eq_attr.wait_obj = FI_WAIT_FD;
        eq_attr.flags = FI_WRITE;
        if (fi_eq_open(fabric, &eq_attr, &eq, nullptr) != 0) return __LINE__;
        if (fi_control(&cq->fid, FI_GETWAIT, &cq_fd) != 0) return __LINE__;
        if (fi_control(&cntr->fid, FI_GETWAIT, &cntr_fd) != 0) return __LINE__;
        if (fi_control(&eq->fid, FI_GETWAIT, &eq_fd) != 0) return __LINE__;
        if (fi_endpoint(domain, info, &ep, nullptr) != 0) return __LINE__;
        if (fi_ep_bind(ep, &av->fid, 0) != 0) return __LINE__;
        if (fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) != 0) return __LINE__;
        if (fi_ep_bind(ep, &cntr->fid, FI_SEND | FI_RECV) != 0) return __LINE__;
        if (fi_ep_bind(ep, &eq->fid, 0) != 0) return __LINE__;
        if (fi_enable(ep) != 0) return __LINE__;
        if (fi_mr_reg(domain, buf.data(), buf.size(), FI_SEND | FI_RECV | FI_REMOTE_READ, 0, 0, 0,
                      &mr, nullptr) != 0)
            return __LINE__;
        // Sleep once on the CQ and the counter, so that their epoll sets watch the endpoint's
        // transport fds (the state a fork most easily breaks).
        fi_cq_entry entry;
        if (fi_cq_sread(cq, &entry, 1, nullptr, 1) != -FI_EAGAIN) return __LINE__;
        if (fi_cntr_wait(cntr, 1, 1) != -FI_ETIMEDOUT) return __LINE__;
        return 0;
    }

    // Closes everything, children first: 0, or the line number of the close that failed.
    int close() {
        if (mr != nullptr && fi_close(&mr->fid) != 0) return __LINE__;
        mr = nullptr;
        if (ep != nullptr && fi_close(&ep->fid) != 0) return __LINE__;
        ep = nullptr;
        if (cq != nullptr && fi_close(&cq->fid) != 0) return __LINE__;
        cq = nullptr;
        if (cntr != nullptr && fi_close(&cntr->fid) != 0) return __LINE__;
        cntr = nullptr;
        if (av != nullptr && fi_close(&av->fid) != 0) return __LINE__;
        av = nullptr;
        if (eq != nullptr && fi_close(&eq->fid) != 0) return __LINE__;
        eq = nullptr;
        if (domain != nullptr && fi_close(&domain->fid) != 0) return __LINE__;
        domain = nullptr;
        if (fabric != nullptr && fi_close(&fabric->fid) != 0) return __LINE__;
        fabric = nullptr;
        fi_freeinfo(info);
        info = nullptr;
        return 0;
    }

    // The calls that touch each object's state (progress, arming, sleeping, events): what a
    // process does with objects it owns. 0, or the failing line.
    int use() {
        fi_cq_entry entry;
        if (fi_cq_read(cq, &entry, 1) != -FI_EAGAIN) return __LINE__;
        if (fi_cq_sread(cq, &entry, 1, nullptr, 5) != -FI_EAGAIN) return __LINE__;
        if (fi_cntr_wait(cntr, 1, 5) != -FI_ETIMEDOUT) return __LINE__;
        fi_eq_entry in{};
        in.data = 42;
        if (fi_eq_write(eq, FI_NOTIFY, &in, sizeof in, 0) != static_cast<ssize_t>(sizeof in))
            return __LINE__;
        uint32_t event = 0;
        fi_eq_entry out{};
        if (fi_eq_sread(eq, &event, &out, sizeof out, 1000, 0) != static_cast<ssize_t>(sizeof out))
            return __LINE__;
        if (event != FI_NOTIFY || out.data != 42) return __LINE__;
        char name[1024];
        size_t len = sizeof name;
        if (fi_getname(&ep->fid, name, &len) != 0) return __LINE__;
        return 0;
    }
};

bool sync_byte(int fd, bool write_side) {
    uint8_t b = 1;
    pollfd pfd{fd, short(write_side ? POLLOUT : POLLIN), 0};
    if (poll(&pfd, 1, kChildTimeoutS * 1000) != 1) return false;
    return (write_side ? ::write(fd, &b, 1) : ::read(fd, &b, 1)) == 1;
}

// The child: closes what it inherited (each fi_close returns 0), then opens, uses and closes
// objects of its own. With pipes (to_parent >= 0) it tells the parent when its own objects
// are open and waits for the parent's word before closing them.
int child_main(Objects &inherited, int to_parent = -1, int from_parent = -1) {
    // The parent had an endpoint enabled: UCX's async thread state is its, not ours.
    const bool parent_had_endpoints = inherited.ep != nullptr;
    const int close_line = inherited.close();
    if (close_line != 0) std::fprintf(stderr, "[child] closing failed at line %d\n", close_line);
    CHILD_CHECK(close_line == 0);

    Objects own;
    const int line = own.open();
    if (line != 0)
        std::fprintf(stderr, "[child] opening its own objects failed at line %d\n", line);
    CHILD_CHECK(line == 0);
    CHILD_CHECK(polls_async(own.ep) == parent_had_endpoints);
    CHILD_CHECK(own.use() == 0);
    if (to_parent >= 0) {
        CHILD_CHECK(sync_byte(to_parent, true));
        CHILD_CHECK(sync_byte(from_parent, false));
    }
    CHILD_CHECK(own.close() == 0);
    return 0;
}

pid_t fork_child(Objects &inherited, int to_parent = -1, int from_parent = -1) {
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(kChildTimeoutS);
        const int rc = child_main(inherited, to_parent, from_parent);
        std::fflush(stderr);
        _exit(rc);
    }
    return pid;
}

TEST(Fork, ChildClosesInheritedObjectsParentKeepsWorking) {
    Objects parent;
    ASSERT_EQ(parent.open(), 0) << "line of the call that failed";
    EXPECT_FALSE(polls_async(parent.ep)) << "UCX's async thread serves the parent";
    const std::set<int> cq_watch = epoll_targets(parent.cq_fd);
    EXPECT_GE(cq_watch.size(), 1u);
    const auto epoll_sets = all_epoll_sets();

    int to_parent[2], from_parent[2];
    ASSERT_EQ(pipe(to_parent), 0);
    ASSERT_EQ(pipe(from_parent), 0);
    const pid_t pid = fork_child(parent, to_parent[1], from_parent[0]);
    ASSERT_GT(pid, 0);
    // The child has closed what it inherited and opened objects of its own: neither shows
    // in the epoll sets the two processes share (ufi's wait objects, UCX's async thread).
    const bool child_ready = sync_byte(to_parent[0], false);
    EXPECT_TRUE(child_ready) << "the child did not get as far as opening its own objects";
    if (child_ready) {
        EXPECT_EQ(all_epoll_sets(), epoll_sets) << "while the child's objects are open";
    }
    sync_byte(from_parent[1], true);
    EXPECT_EQ(wait_bounded(pid, kChildTimeoutS + 5), 0)
        << "the child failed a check (1), was killed by a signal (128+n) or hung (-1)";
    for (int fd : {to_parent[0], to_parent[1], from_parent[0], from_parent[1]}) ::close(fd);

    // The child's closes changed nothing the parent shares with it: the epoll sets behind the
    // FI_GETWAIT fds still watch the endpoint's transports, and every object still works.
    EXPECT_EQ(all_epoll_sets(), epoll_sets) << "after the child exited";
    EXPECT_EQ(parent.use(), 0) << "line of the call that failed";
    EXPECT_EQ(parent.close(), 0) << "line of the close that failed";

    // And the parent opens, uses and closes new objects.
    Objects again;
    ASSERT_EQ(again.open(), 0) << "line of the call that failed";
    EXPECT_FALSE(polls_async(again.ep)) << "UCX's async thread still serves the parent";
    EXPECT_EQ(again.use(), 0) << "line of the call that failed";
    EXPECT_EQ(again.close(), 0) << "line of the close that failed";
}

// Two children in a row, the second forked after the first closed its copies: the parent's
// objects survive both (nothing a child does accumulates in shared state).
TEST(Fork, TwoChildrenInTurn) {
    Objects parent;
    ASSERT_EQ(parent.open(), 0) << "line of the call that failed";
    const std::set<int> cq_watch = epoll_targets(parent.cq_fd);
    for (int i = 0; i < 2; ++i) {
        const pid_t pid = fork_child(parent);
        ASSERT_GT(pid, 0);
        EXPECT_EQ(wait_bounded(pid, kChildTimeoutS + 5), 0) << "child " << i;
        EXPECT_EQ(epoll_targets(parent.cq_fd), cq_watch) << "after child " << i;
        EXPECT_EQ(parent.use(), 0) << "after child " << i << ": line of the call that failed";
    }
    EXPECT_EQ(parent.close(), 0) << "line of the close that failed";
}

// A child that exits without closing anything leaves the parent's objects working too.
TEST(Fork, ChildExitsWithoutClosing) {
    Objects parent;
    ASSERT_EQ(parent.open(), 0) << "line of the call that failed";
    std::fflush(stderr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(0);
    EXPECT_EQ(wait_bounded(pid, kChildTimeoutS), 0);
    EXPECT_EQ(parent.use(), 0) << "line of the call that failed";
    EXPECT_EQ(parent.close(), 0) << "line of the close that failed";
}

// A child of a process that had no endpoint enabled (fi_getinfo, a fabric and a domain only:
// the common launcher pattern) keeps UCX's async thread for its own endpoints.
TEST(Fork, ChildOfAProcessWithoutEndpointsKeepsTheAsyncThread) {
    Objects parent;
    fi_info *hints = fi_allocinfo();
    ASSERT_NE(hints, nullptr);
    hints->ep_attr->type = FI_EP_RDM;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &parent.info), 0);
    fi_freeinfo(hints);
    ASSERT_EQ(fi_fabric(parent.info->fabric_attr, &parent.fabric, nullptr), 0);
    ASSERT_EQ(fi_domain(parent.fabric, parent.info, &parent.domain, nullptr), 0);
    const pid_t pid = fork_child(parent);  // the child expects no polling: parent.ep is null
    ASSERT_GT(pid, 0);
    EXPECT_EQ(wait_bounded(pid, kChildTimeoutS + 5), 0)
        << "the child failed a check (1), was killed by a signal (128+n) or hung (-1)";
    EXPECT_EQ(parent.close(), 0) << "line of the close that failed";
}

// A thread of the parent sleeps in fi_cq_sread while the parent forks: the child (which has
// no such thread) closes its copy of the CQ at once rather than waiting for a sleeper that is
// not there, and without waking the parent's; the parent's close then cancels it.
TEST(Fork, ChildClosesACqAParentThreadSleepsOn) {
    Objects parent;
    fi_info *hints = fi_allocinfo();
    ASSERT_NE(hints, nullptr);
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &parent.info), 0);
    fi_freeinfo(hints);
    ASSERT_EQ(fi_fabric(parent.info->fabric_attr, &parent.fabric, nullptr), 0);
    ASSERT_EQ(fi_domain(parent.fabric, parent.info, &parent.domain, nullptr), 0);
    fi_cq_attr attr{};
    attr.format = FI_CQ_FORMAT_CONTEXT;
    attr.wait_obj = FI_WAIT_FD;
    ASSERT_EQ(fi_cq_open(parent.domain, &attr, &parent.cq, nullptr), 0);

    std::atomic<bool> done{false};
    std::atomic<ssize_t> result{0};
    fid_cq *cq = parent.cq;
    std::thread sleeper([&] {
        fi_cq_entry e;
        result = fi_cq_sread(cq, &e, 1, nullptr, -1);
        done = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // asleep by now

    std::fflush(stderr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(kChildTimeoutS);
        const auto t0 = std::chrono::steady_clock::now();
        int rc = fi_close(&parent.cq->fid) == 0 ? 0 : 1;
        parent.cq = nullptr;
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(5)) rc = 2;
        if (rc == 0) rc = parent.close() == 0 ? 0 : 3;
        _exit(rc);
    }
    EXPECT_EQ(wait_bounded(pid, kChildTimeoutS + 5), 0)
        << "the child's close failed (1), waited for the parent's sleeper (2) or its other "
           "closes failed (3)";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(done.load()) << "the child's close woke the parent's sleeper";

    EXPECT_EQ(fi_close(&parent.cq->fid), 0);
    parent.cq = nullptr;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done.load() && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(done.load()) << "the parent's sleeper did not return after fi_close";
    sleeper.join();
    EXPECT_EQ(result.load(), -FI_ECANCELED);
    EXPECT_EQ(parent.close(), 0) << "line of the close that failed";
}

}  // namespace

namespace {

// Two endpoints of one domain that have talked both ways (each knows the other's
// incarnation, so a close of either would be told to the other).
struct ConnectedPair {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av[2] = {};
    fid_cq *cq[2] = {};
    fid_ep *ep[2] = {};
    fi_addr_t to[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};  // to[i]: the other in i's AV

    // 0, or the failing line.
    int open() {
        fi_info *hints = fi_allocinfo();
        hints->caps = FI_TAGGED;
        hints->ep_attr->type = FI_EP_RDM;
        const int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
        fi_freeinfo(hints);
        if (rc != 0) return __LINE__;
        if (fi_fabric(info->fabric_attr, &fabric, nullptr) != 0) return __LINE__;
        if (fi_domain(fabric, info, &domain, nullptr) != 0) return __LINE__;
        std::vector<uint8_t> names[2];
        for (int i = 0; i < 2; ++i) {
            fi_av_attr av_attr{};
            fi_cq_attr cq_attr{};
            cq_attr.format = FI_CQ_FORMAT_TAGGED;
            if (fi_av_open(domain, &av_attr, &av[i], nullptr) != 0) return __LINE__;
            if (fi_cq_open(domain, &cq_attr, &cq[i], nullptr) != 0) return __LINE__;
            if (fi_endpoint(domain, info, &ep[i], nullptr) != 0) return __LINE__;
            if (fi_ep_bind(ep[i], &av[i]->fid, 0) != 0) return __LINE__;
            if (fi_ep_bind(ep[i], &cq[i]->fid, FI_TRANSMIT | FI_RECV) != 0) return __LINE__;
            if (fi_enable(ep[i]) != 0) return __LINE__;
            size_t len = 256;
            names[i].resize(len);
            if (fi_getname(&ep[i]->fid, names[i].data(), &len) != 0) return __LINE__;
            names[i].resize(len);
        }
        for (int i = 0; i < 2; ++i) {
            if (fi_av_insert(av[i], names[1 - i].data(), 1, &to[i], 0, nullptr) != 1) return __LINE__;
        }
        for (int i = 0; i < 2; ++i) {
            if (int line = exchange(i)) return line;
        }
        return 0;
    }
    // One message from endpoint `from` to the other, waited for on both sides (bounded).
    int exchange(int from) {
        const int other = 1 - from;
        uint64_t in = 0, out = 7 + from;
        if (fi_trecv(ep[other], &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 5, 0, nullptr) != 0) return __LINE__;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        ssize_t rc;
        while ((rc = fi_tsend(ep[from], &out, sizeof out, nullptr, to[from], 5, nullptr)) == -FI_EAGAIN) {
            if (std::chrono::steady_clock::now() > deadline) return __LINE__;
            poll_both();
        }
        if (rc != 0) return __LINE__;
        bool got[2] = {false, false};
        while (!got[0] || !got[1]) {
            if (std::chrono::steady_clock::now() > deadline) return __LINE__;
            for (int i = 0; i < 2; ++i) {
                fi_cq_tagged_entry e;
                const ssize_t n = fi_cq_read(cq[i], &e, 1);
                if (n == 1) got[i] = true;
                else if (n != -FI_EAGAIN) return __LINE__;
            }
        }
        return in == out ? 0 : __LINE__;
    }
    void poll_both() {
        fi_cq_tagged_entry none;
        for (fid_cq *c : cq) (void)fi_cq_read(c, &none, 0);
    }
    void close() {
        for (int i = 0; i < 2; ++i) {
            for (fid_t f : {ep[i] ? &ep[i]->fid : nullptr, cq[i] ? &cq[i]->fid : nullptr,
                            av[i] ? &av[i]->fid : nullptr}) {
                if (f != nullptr) {
                    EXPECT_EQ(fi_close(f), 0);
                }
            }
        }
        if (domain) {
            EXPECT_EQ(fi_close(&domain->fid), 0);
        }
        if (fabric) {
            EXPECT_EQ(fi_close(&fabric->fid), 0);
        }
        if (info) fi_freeinfo(info);
    }
};

}  // namespace

// A child that closes an inherited endpoint with peers does not tell them it closes (its
// close would reach them over the parent's connections, docs/fork.md): the parent's two
// endpoints go on talking both ways.
TEST(Fork, AChildClosingAnInheritedEndpointTellsItsPeersNothing) {
    ConnectedPair pair;
    ASSERT_EQ(pair.open(), 0) << "line of the call that failed";
    std::fflush(stderr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(kChildTimeoutS);
        _exit(fi_close(&pair.ep[0]->fid) == 0 ? 0 : 1);
    }
    EXPECT_EQ(wait_bounded(pid, kChildTimeoutS + 5), 0);
    for (int i = 0; i < 50; ++i) pair.poll_both();
    EXPECT_EQ(pair.exchange(1), 0) << "line of the step that failed: the peer of endpoint 0 failed?";
    EXPECT_EQ(pair.exchange(0), 0) << "line of the step that failed";
    pair.close();
}
