// fi_close of a CQ, EQ or counter while other threads sleep in fi_cq_sread/fi_cq_sreadfrom,
// fi_eq_sread or fi_cntr_wait (docs/completions.md, "Closing while threads wait"): close
// returns 0, and every sleeper returns -FI_ECANCELED promptly, whether it waits forever
// (timeout -1) or for a finite time, and without touching the freed object (the ASan build
// runs these too). Every wait here is bounded: a sleeper that does not return within
// kBoundMs fails the test (and is left behind, detached), and alarm() bounds the whole test.
#include "completion_fixture.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

namespace {

constexpr int kBoundMs = 10000;
// A finite timeout long enough that a sleeper returning before it was woken by close, not by
// its timeout.
constexpr int kFiniteTimeoutMs = 8000;

enum class Call { CqSread, CqSreadfrom, EqSread, CntrWait };

const char *call_name(Call c) {
    switch (c) {
        case Call::CqSread:
            return "CqSread";
        case Call::CqSreadfrom:
            return "CqSreadfrom";
        case Call::EqSread:
            return "EqSread";
        case Call::CntrWait:
            return "CntrWait";
    }
    return "?";
}

// The scheduler state of a thread of this process ('S' sleeping, 'R' running, ...).
char thread_state(pid_t tid) {
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string line;
    std::getline(in, line);
    const auto close_paren = line.rfind(')');
    return close_paren == std::string::npos || close_paren + 2 >= line.size()
               ? '?'
               : line[close_paren + 2];
}

// One thread blocked in a blocking call of an object.
class SleeperThread {
  public:
    explicit SleeperThread(std::function<ssize_t()> call) : state_(std::make_shared<State>()) {
        auto state = state_;
        thread_ = std::thread([state, call = std::move(call)] {
            state->tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
            state->result.store(call());
            state->done.store(true);
        });
    }
    ~SleeperThread() {
        if (thread_.joinable()) thread_.detach();  // stuck: the test has failed already
    }

    // Waits until the thread sleeps in the kernel (for fd waits) or has run a while.
    void wait_until_asleep(bool sleeps_in_kernel) {
        const int64_t give_up = ufi_test::now_ms() + kBoundMs;
        while (state_->tid.load() == 0 && ufi_test::now_ms() < give_up) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!sleeps_in_kernel) return;
        while (thread_state(state_->tid.load()) != 'S' && ufi_test::now_ms() < give_up)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        EXPECT_EQ(thread_state(state_->tid.load()), 'S') << "the sleeper never went to sleep";
    }

    // The call's result, or a failure when it has not returned within kBoundMs.
    bool join(ssize_t *result) {
        const int64_t give_up = ufi_test::now_ms() + kBoundMs;
        while (!state_->done.load() && ufi_test::now_ms() < give_up)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (!state_->done.load()) return false;
        thread_.join();
        *result = state_->result.load();
        return true;
    }

  private:
    struct State {
        std::atomic<pid_t> tid{0};
        std::atomic<ssize_t> result{0};
        std::atomic<bool> done{false};
    };
    std::shared_ptr<State> state_;  // outlives a detached thread
    std::thread thread_;
};

// (call, timeout, wait object)
using Param = std::tuple<Call, int, fi_wait_obj>;

class CloseSleepersTest : public ::testing::TestWithParam<Param> {
  protected:
    void SetUp() override {
        alarm(60);
        env_.open();
    }
    void TearDown() override {
        env_.close();
        alarm(0);
    }

    Call call() const { return std::get<0>(GetParam()); }
    int timeout() const { return std::get<1>(GetParam()); }
    fi_wait_obj wait_obj() const { return std::get<2>(GetParam()); }
    bool sleeps_in_kernel() const { return wait_obj() != FI_WAIT_YIELD; }

    // Opens the object the call blocks on: its fid, and the blocking call.
    fid *open(std::function<ssize_t()> *blocking_call) {
        switch (call()) {
            case Call::CqSread:
            case Call::CqSreadfrom: {
                fi_cq_attr attr{};
                attr.format = FI_CQ_FORMAT_DATA;
                attr.wait_obj = wait_obj();
                fid_cq *cq = nullptr;
                EXPECT_EQ(fi_cq_open(env_.domain, &attr, &cq, nullptr), 0);
                if (cq == nullptr) return nullptr;
                const bool from = call() == Call::CqSreadfrom;
                const int t = timeout();
                *blocking_call = [cq, from, t] {
                    fi_cq_data_entry e[4];
                    fi_addr_t src[4];
                    return from ? fi_cq_sreadfrom(cq, e, 4, src, nullptr, t)
                                : fi_cq_sread(cq, e, 4, nullptr, t);
                };
                return &cq->fid;
            }
            case Call::EqSread: {
                fi_eq_attr attr{};
                attr.wait_obj = wait_obj();
                fid_eq *eq = nullptr;
                EXPECT_EQ(fi_eq_open(env_.fabric, &attr, &eq, nullptr), 0);
                if (eq == nullptr) return nullptr;
                const int t = timeout();
                *blocking_call = [eq, t] {
                    uint32_t event = 0;
                    fi_eq_entry entry{};
                    return fi_eq_sread(eq, &event, &entry, sizeof entry, t, 0);
                };
                return &eq->fid;
            }
            case Call::CntrWait: {
                fi_cntr_attr attr{};
                attr.events = FI_CNTR_EVENTS_COMP;
                attr.wait_obj = wait_obj();
                fid_cntr *c = nullptr;
                EXPECT_EQ(fi_cntr_open(env_.domain, &attr, &c, nullptr), 0);
                if (c == nullptr) return nullptr;
                const int t = timeout();
                *blocking_call = [c, t] { return ssize_t{fi_cntr_wait(c, 1, t)}; };
                return &c->fid;
            }
        }
        return nullptr;
    }

    ufi_test::FabricEnv env_;
};

TEST_P(CloseSleepersTest, CloseWakesTheSleeperWhichReturnsEcanceled) {
    std::function<ssize_t()> blocking_call;
    fid *f = open(&blocking_call);
    ASSERT_NE(f, nullptr);
    SleeperThread sleeper(blocking_call);
    sleeper.wait_until_asleep(sleeps_in_kernel());

    const int64_t t0 = ufi_test::now_ms();
    EXPECT_EQ(fi_close(f), 0);
    ssize_t rc = 0;
    ASSERT_TRUE(sleeper.join(&rc)) << "the sleeper did not return after fi_close";
    EXPECT_EQ(rc, -FI_ECANCELED);
    EXPECT_LT(ufi_test::now_ms() - t0, kFiniteTimeoutMs / 2)
        << "woken by its timeout rather than by fi_close";
}

// Several sleepers at once, one of them with an FI_GETWAIT fd handed out (whose watcher count
// is not a sleeper): close sends every one away.
TEST_P(CloseSleepersTest, CloseWakesEverySleeper) {
    std::function<ssize_t()> blocking_call;
    fid *f = open(&blocking_call);
    ASSERT_NE(f, nullptr);
    if (wait_obj() == FI_WAIT_FD) {
        int fd = -1;
        EXPECT_EQ(fi_control(f, FI_GETWAIT, &fd), 0);
    }
    std::vector<std::unique_ptr<SleeperThread>> sleepers;
    for (int i = 0; i < 3; ++i) {
        sleepers.push_back(std::make_unique<SleeperThread>(blocking_call));
    }
    for (auto &s : sleepers) s->wait_until_asleep(sleeps_in_kernel());

    EXPECT_EQ(fi_close(f), 0);
    for (auto &s : sleepers) {
        ssize_t rc = 0;
        ASSERT_TRUE(s->join(&rc)) << "a sleeper did not return after fi_close";
        EXPECT_EQ(rc, -FI_ECANCELED);
    }
}

std::string param_name(const ::testing::TestParamInfo<Param> &info) {
    const int t = std::get<1>(info.param);
    const fi_wait_obj w = std::get<2>(info.param);
    return std::string(call_name(std::get<0>(info.param))) + (t < 0 ? "_Forever" : "_Finite") +
           (w == FI_WAIT_FD       ? "_Fd"
            : w == FI_WAIT_POLLFD ? "_PollFd"
                                  : "_Yield");
}

INSTANTIATE_TEST_SUITE_P(Objects, CloseSleepersTest,
                         ::testing::Combine(::testing::Values(Call::CqSread, Call::CqSreadfrom,
                                                              Call::EqSread, Call::CntrWait),
                                            ::testing::Values(-1, kFiniteTimeoutMs),
                                            ::testing::Values(FI_WAIT_FD, FI_WAIT_POLLFD,
                                                              FI_WAIT_YIELD)),
                         param_name);

// A blocking call that starts while the object is bound (fi_close refused with -FI_EBUSY)
// keeps sleeping; the refused close did not cancel it.
TEST(CloseSleepers, RefusedCloseLeavesTheSleeperAlone) {
    alarm(60);
    ufi_test::FabricEnv env;
    env.open();
    fi_eq_attr attr{};
    attr.wait_obj = FI_WAIT_FD;
    attr.flags = FI_WRITE;
    fid_eq *eq = nullptr;
    ASSERT_EQ(fi_eq_open(env.fabric, &attr, &eq, nullptr), 0);
    ASSERT_EQ(fi_domain_bind(env.domain, &eq->fid, 0), 0);  // now the EQ is busy
    SleeperThread sleeper([eq] {
        uint32_t event = 0;
        fi_eq_entry entry{};
        return fi_eq_sread(eq, &event, &entry, sizeof entry, kBoundMs / 2, 0);
    });
    sleeper.wait_until_asleep(true);
    EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY);
    fi_eq_entry in{};
    EXPECT_EQ(fi_eq_write(eq, FI_NOTIFY, &in, sizeof in, 0), static_cast<ssize_t>(sizeof in));
    ssize_t rc = 0;
    ASSERT_TRUE(sleeper.join(&rc));
    EXPECT_EQ(rc, static_cast<ssize_t>(sizeof in)) << "the sleeper read the event";
    EXPECT_EQ(fi_close(&env.domain->fid), 0);  // the domain lets go of the EQ
    env.domain = nullptr;
    EXPECT_EQ(fi_close(&eq->fid), 0);
    env.close();
    alarm(0);
}

}  // namespace
