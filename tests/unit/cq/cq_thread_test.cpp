// Concurrency: several writer threads and a reader under FI_THREAD_SAFE lose no completion and
// keep each writer's order; one writer and one reader without locks (FI_THREAD_DOMAIN: the ring
// is single-producer/single-consumer safe) likewise. Writers retry on -FI_EAGAIN, as the data
// path does, through a deliberately small CQ.
// Serialized models (FI_THREAD_DOMAIN, FI_THREAD_COMPLETION) with a wait object: the producers
// are the reader's own calls (progress inside fi_cq_sread, the transport's fd waking it), so a
// completion's wake-up takes no fence; what may cross threads still wakes the sleeper:
// fi_cq_signal, and a thread polling the FI_GETWAIT fd while the owner writes.
#include "completion_fixture.h"

#include "runtime/cq/binding.h"
#include "runtime/cq/cq.h"

#include <atomic>
#include <thread>
#include <vector>

namespace {

using ufi::runtime::cq::Cq;
using ufi::runtime::cq::cq_of;

// A CQ of FI_CQ_FORMAT_DATA entries (size 0: the default) with `wait`.
fid_cq *open_data_cq(fid_domain *domain, size_t size, fi_wait_obj wait) {
    fi_cq_attr attr{};
    attr.format = FI_CQ_FORMAT_DATA;
    attr.size = size;
    attr.wait_obj = wait;
    fid_cq *cq = nullptr;
    EXPECT_EQ(fi_cq_open(domain, &attr, &cq, nullptr), 0);
    return cq;
}

void run(int threading, int writers, uint64_t per_writer, fi_wait_obj wait) {
    ufi_test::FabricEnv env;
    env.open(FI_VERSION(2, 7), threading);
    fid_cq *cq = open_data_cq(env.domain, 64, wait);
    ASSERT_NE(cq, nullptr);
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

// The reader sleeps in fi_cq_sread; a transport thread makes events (its fd becomes readable);
// the reader's progress turns each into a completion. Nothing lost or reordered, and every
// sleep ends by the fd, not the timeout.
void run_serialized_blocking(int threading, uint64_t events) {
    ufi_test::FabricEnv env;
    env.open(FI_VERSION(2, 7), threading);
    fid_cq *cq = open_data_cq(env.domain, 4096, FI_WAIT_UNSPEC);
    ASSERT_NE(cq, nullptr);
    Cq *q = cq_of(cq);
    ufi_test::PipeSource src;
    uint64_t made = 0;  // touched only by the reader's progress
    src.on_event = [&] { ASSERT_EQ(q->write(nullptr, FI_RECV, 0, nullptr, made++, 0), 0); };
    ASSERT_EQ(ufi::runtime::cq::attach_source(q, src.source()), 0);

    alarm(60);
    std::thread transport([&src, events] {
        for (uint64_t i = 0; i < events; ++i) {
            src.fire();
            if (i % 8 == 7) std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    uint64_t next = 0;
    fi_cq_data_entry e[32];
    const int64_t t0 = ufi_test::now_ms();
    while (next < events) {
        const ssize_t n = fi_cq_sread(cq, e, 32, nullptr, 10000);
        ASSERT_GT(n, 0) << "an event made no completion or did not wake the reader";
        for (ssize_t i = 0; i < n; ++i) ASSERT_EQ(e[i].data, next++);
    }
    transport.join();
    alarm(0);
    // 1000 events and 125 pauses of 0.2 ms: seconds only if wake-ups waited for a timeout.
    EXPECT_LT(ufi_test::now_ms() - t0, 5000);
    EXPECT_EQ(fi_cq_read(cq, e, 32), -FI_EAGAIN) << "nothing extra";
    ufi::runtime::cq::detach_source(q, src.source());
    EXPECT_EQ(fi_close(&cq->fid), 0);
    env.close();
}

TEST(CqThreads, SerializedBlockingReaderWokenByItsTransport) {
    run_serialized_blocking(FI_THREAD_COMPLETION, 1000);
}
TEST(CqThreads, SerializedBlockingReaderWokenByItsTransportDomain) {
    run_serialized_blocking(FI_THREAD_DOMAIN, 1000);
}

// fi_cq_signal is meant to be called from another thread than the sleeper's, whatever the
// threading model: each of many signals ends a sread that is sleeping or about to.
TEST(CqThreads, SignalFromAnotherThreadWakesASerializedSleeper) {
    for (int threading : {FI_THREAD_DOMAIN, FI_THREAD_COMPLETION}) {
        ufi_test::FabricEnv env;
        env.open(FI_VERSION(2, 7), threading);
        fid_cq *cq = open_data_cq(env.domain, 0, FI_WAIT_FD);
        ASSERT_NE(cq, nullptr);
        alarm(60);
        for (int round = 0; round < 50; ++round) {
            std::thread signaller([cq, round] {
                std::this_thread::sleep_for(std::chrono::microseconds(100 * (round % 5)));
                EXPECT_EQ(fi_cq_signal(cq), 0);
            });
            fi_cq_data_entry e;
            const int64_t t0 = ufi_test::now_ms();
            EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 10000), -FI_EAGAIN);
            EXPECT_LT(ufi_test::now_ms() - t0, 5000) << "round " << round << ": the signal was lost";
            signaller.join();
        }
        alarm(0);
        EXPECT_EQ(fi_close(&cq->fid), 0);
        env.close();
    }
}

// The application's own poller: a thread blocked in poll() on the FI_GETWAIT fd while the
// thread that drives the domain writes completions (FI_THREAD_DOMAIN allows it: poll() is not a
// libfabric call). Every completion makes the fd readable.
TEST(CqThreads, ExportedFdPolledByAnotherThreadUnderThreadDomain) {
    ufi_test::FabricEnv env;
    env.open(FI_VERSION(2, 7), FI_THREAD_DOMAIN);
    fid_cq *cq = open_data_cq(env.domain, 0, FI_WAIT_FD);
    ASSERT_NE(cq, nullptr);
    Cq *q = cq_of(cq);
    int fd = -1;
    ASSERT_EQ(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
    constexpr int kRounds = 200;
    std::atomic<int> woken{0};
    std::atomic<int> missed{0};
    alarm(60);
    std::thread poller([&] {
        for (int i = 0; i < kRounds; ++i) {
            if (!ufi_test::readable(fd, 5000)) ++missed;
            woken.store(i + 1);
            while (woken.load() != -(i + 1)) std::this_thread::yield();  // the entry was read
        }
    });
    fi_cq_data_entry e;
    for (int i = 0; i < kRounds; ++i) {
        if (i % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
        ASSERT_EQ(q->write(nullptr, FI_RECV, 0, nullptr, static_cast<uint64_t>(i), 0), 0);
        while (woken.load() != i + 1) std::this_thread::yield();
        ASSERT_EQ(fi_cq_read(cq, &e, 1), 1);
        EXPECT_EQ(e.data, static_cast<uint64_t>(i));
        EXPECT_FALSE(ufi_test::readable(fd)) << "not readable once empty";
        woken.store(-(i + 1));
    }
    poller.join();
    alarm(0);
    EXPECT_EQ(missed.load(), 0) << "completions that did not make the fd readable";
    EXPECT_EQ(fi_close(&cq->fid), 0);
    env.close();
}

}  // namespace
