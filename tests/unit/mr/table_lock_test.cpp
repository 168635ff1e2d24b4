// TableLock, the MR tables' spinning reader-writer lock: writers exclude everyone, readers
// share, and a stream of readers does not keep a writer out forever. Threads hammer it; a
// plain (non-atomic) pair of fields that writers keep equal must never be seen unequal.
#include "runtime/mr/table_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace ufi::runtime::mr {
namespace {

TEST(TableLock, WritersExcludeReadersShare) {
    TableLock lock(true);
    volatile uint64_t a = 0, b = 0;  // writers keep a == b
    std::atomic<bool> torn{false};
    std::atomic<int> inside{0}, most_inside{0};
    std::atomic<bool> stop{false};
    std::atomic<int> readers_in{0};  // readers that took the lock once
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w) {
        threads.emplace_back([&] {
            // Writers start once both readers are reading (on two cores they could otherwise
            // finish before a reader ever ran, and the test would prove nothing).
            while (readers_in.load() < 2) std::this_thread::yield();
            for (int i = 0; i < 20000; ++i) {
                std::lock_guard<TableLock> g(lock);
                a = a + 1;
                b = b + 1;
            }
        });
    }
    for (int r = 0; r < 2; ++r) {
        threads.emplace_back([&] {
            bool counted = false;
            do {
                std::shared_lock<TableLock> g(lock);
                const int now = inside.fetch_add(1) + 1;
                int seen = most_inside.load();
                while (now > seen && !most_inside.compare_exchange_weak(seen, now)) {
                }
                if (a != b) torn = true;
                inside.fetch_sub(1);
                if (!counted) {
                    counted = true;
                    readers_in.fetch_add(1);
                }
            } while (!stop.load());
        });
    }
    threads[0].join();  // the writers finish although readers never stop
    threads[1].join();
    stop = true;
    threads[2].join();
    threads[3].join();
    EXPECT_FALSE(torn.load()) << "a reader saw a writer's half-done update";
    EXPECT_EQ(a, 40000u);
    EXPECT_EQ(b, 40000u);
    EXPECT_GE(most_inside.load(), 1);
}

}  // namespace
}  // namespace ufi::runtime::mr
