// Concurrency: several writer threads and a reader under FI_THREAD_SAFE lose no completion and
// keep each writer's order; one writer and one reader without locks (FI_THREAD_DOMAIN: the ring
// is single-producer/single-consumer safe) likewise. Writers retry on -FI_EAGAIN, as the data
// path does, through a deliberately small CQ.
#include "completion_fixture.h"

#include "runtime/cq/cq.h"

#include <thread>
#include <vector>

namespace {

using ufi::runtime::cq::Cq;
using ufi::runtime::cq::cq_of;

void run(int threading, int writers, uint64_t per_writer, fi_wait_obj wait) {
    ufi_test::FabricEnv env;
    env.open(FI_VERSION(2, 7), threading);
    fi_cq_attr attr{};
    attr.format = FI_CQ_FORMAT_DATA;
    attr.size = 64;
    attr.wait_obj = wait;
    fid_cq *cq = nullptr;
    ASSERT_EQ(fi_cq_open(env.domain, &attr, &cq, nullptr), 0);
    Cq *q = cq_of(cq);

    alarm(60);
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
        threads.emplace_back([q, w, per_writer] {
            for (uint64_t i = 0; i < per_writer; ++i) {
                const uint64_t data = (static_cast<uint64_t>(w) << 32) | i;
                while (q->write(nullptr, FI_RECV, 0, nullptr, data, 0) == -FI_EAGAIN)
                    std::this_thread::yield();
            }
        });
    }
    std::vector<uint64_t> next(writers, 0);
    uint64_t total = 0;
    fi_cq_data_entry e[32];
    while (total < writers * per_writer) {
        const ssize_t n =
            wait == FI_WAIT_NONE ? fi_cq_read(cq, e, 32) : fi_cq_sread(cq, e, 32, nullptr, 1000);
        if (n == -FI_EAGAIN) continue;
        ASSERT_GT(n, 0);
        for (ssize_t i = 0; i < n; ++i) {
            const uint64_t w = e[i].data >> 32;
            ASSERT_LT(w, static_cast<uint64_t>(writers));
            ASSERT_EQ(e[i].data & 0xffffffffu, next[w])
                << "writer " << w << " out of order or lost";
            ++next[w];
        }
        total += n;
    }
    for (auto &t : threads) t.join();
    alarm(0);
    EXPECT_EQ(fi_cq_read(cq, e, 32), -FI_EAGAIN) << "nothing extra";
    EXPECT_EQ(fi_close(&cq->fid), 0);
    env.close();
}

TEST(CqThreads, ConcurrentWritersThreadSafe) {
    run(FI_THREAD_SAFE, 4, 20000, FI_WAIT_NONE);
}
TEST(CqThreads, ConcurrentWritersBlockingReader) {
    run(FI_THREAD_SAFE, 3, 10000, FI_WAIT_FD);
}
TEST(CqThreads, SingleWriterWithoutLocks) {
    run(FI_THREAD_DOMAIN, 1, 50000, FI_WAIT_NONE);
}
TEST(CqThreads, SingleWriterWithoutLocksBlocking) {
    run(FI_THREAD_COMPLETION, 1, 20000, FI_WAIT_UNSPEC);
}

}  // namespace
