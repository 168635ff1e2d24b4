// UFI_POLL_YIELD: a thread that keeps finding its CQ empty yields its core every so many reads,
// so a process it waits for on the same core runs (more ranks than cores). Observed as
// involuntary context switches (getrusage RUSAGE_THREAD) of a poller pinned to one core with a
// thread beside it that yields back at once: each of the poller's yields hands the core over,
// far more often than the scheduler's own preemption would in the same few milliseconds.
#include "completion_fixture.h"

#include "runtime/cq/cq.h"

#include <rdma/fi_errno.h>

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <thread>

namespace {

// The first CPU this thread may run on.
int first_allowed_cpu() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) return c;
    }
    return -1;
}

bool pin_to(pthread_t t, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(t, sizeof set, &set) == 0;
}

long involuntary_switches() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nivcsw;
}

TEST(CqPollYield, EmptyReadsYieldTheCoreToAThreadSharingIt) {
    const unsigned every = ufi::runtime::cq::poll_yield_setting();
    ASSERT_EQ(every, 256u) << "UFI_POLL_YIELD's default (the test's environment sets none)";
    ufi_test::FabricEnv env;
    env.open();
    fi_cq_attr attr{};
    attr.format = FI_CQ_FORMAT_TAGGED;
    fid_cq *cq = nullptr;
    ASSERT_EQ(fi_cq_open(env.domain, &attr, &cq, nullptr), 0);

    const int cpu = first_allowed_cpu();
    ASSERT_GE(cpu, 0);
    cpu_set_t before;
    ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
    ASSERT_TRUE(pin_to(pthread_self(), cpu));
    std::atomic<bool> stop{false}, running{false};
    std::thread spinner([&] {
        pin_to(pthread_self(), cpu);
        running = true;
        // It gives the core back at once, so each of the poller's yields is one switch
        // there and back, not a time slice.
        while (!stop.load(std::memory_order_relaxed)) sched_yield();
    });
    while (!running) sched_yield();

    constexpr int kReads = 256 * 200;  // 200 yields' worth
    fi_cq_tagged_entry e;
    const long switches_before = involuntary_switches();
    for (int i = 0; i < kReads; ++i) ASSERT_EQ(fi_cq_read(cq, &e, 1), -FI_EAGAIN);
    const long switches = involuntary_switches() - switches_before;
    stop = true;
    spinner.join();
    pthread_setaffinity_np(pthread_self(), sizeof before, &before);
    // Each yield gave the core to the spinner (it was runnable there): about 200 switches.
    // Preemption alone gives a handful in these few milliseconds of polling.
    EXPECT_GE(switches, 100) << "empty fi_cq_read calls did not give the core away";
    EXPECT_EQ(fi_close(&cq->fid), 0);
    env.close();
}

}  // namespace
