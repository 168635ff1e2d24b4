// The network namespace's mark on FIFO transports' device addresses (net_namespace.h): stable
// within a namespace, different in another, and applied twice it gives the address back.
#include "transports/iface/net_namespace.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using ufi::transports::apply_namespace_mark;
using ufi::transports::network_namespace_mark;

TEST(NetNamespace, MarkIsStableAndNeverZeroWhereProcIsMounted) {
    if (access("/proc/self/ns/net", F_OK) != 0) GTEST_SKIP() << "no /proc/self/ns/net";
    const uint64_t m = network_namespace_mark();
    EXPECT_NE(m, 0u);
    EXPECT_EQ(network_namespace_mark(), m);
    uint64_t other_thread = 0;
    std::thread([&] { other_thread = network_namespace_mark(); }).join();
    EXPECT_EQ(other_thread, m);  // threads of one namespace mark alike
}

TEST(NetNamespace, ApplyingTheMarkTwiceGivesTheAddressBack) {
    const std::vector<uint8_t> original = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    std::vector<uint8_t> a = original;
    const uint64_t mark = 0x0123456789abcdefull;
    apply_namespace_mark(a, mark);
    EXPECT_NE(a, original);
    // Only the first 8 bytes (UCT's host id) change, in little-endian order.
    EXPECT_EQ(a[0], uint8_t(1 ^ 0xef));
    EXPECT_EQ(a[7], uint8_t(8 ^ 0x01));
    EXPECT_TRUE(std::equal(a.begin() + 8, a.end(), original.begin() + 8));
    apply_namespace_mark(a, mark);
    EXPECT_EQ(a, original);
    // A shorter address: its bytes only; an empty one: nothing.
    std::array<uint8_t, 3> s = {7, 7, 7};
    apply_namespace_mark(s, mark);
    EXPECT_EQ(s[0], uint8_t(7 ^ 0xef));
    EXPECT_EQ(s[2], uint8_t(7 ^ 0xab));
    apply_namespace_mark(std::span<uint8_t>(), mark);
    // Mark 0 (the namespace could not be read): unchanged.
    std::vector<uint8_t> b = original;
    apply_namespace_mark(b, 0);
    EXPECT_EQ(b, original);
}

// A process in a new network namespace (a child that unshares it; needs root) marks
// otherwise, and its threads with it.
TEST(NetNamespace, AnotherNamespaceMarksOtherwise) {
    if (access("/proc/self/ns/net", F_OK) != 0) GTEST_SKIP() << "no /proc/self/ns/net";
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make a network namespace";
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        uint64_t marks[2] = {0, 0};
        if (unshare(CLONE_NEWNET) == 0) {
            marks[0] = network_namespace_mark();
            std::thread([&] { marks[1] = network_namespace_mark(); }).join();
        }
        _exit(write(fds[1], marks, sizeof marks) == sizeof marks ? 0 : 1);
    }
    close(fds[1]);
    uint64_t marks[2] = {0, 0};
    const ssize_t n = read(fds[0], marks, sizeof marks);
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_EQ(n, ssize_t(sizeof marks));
    if (marks[0] == 0) GTEST_SKIP() << "unshare(CLONE_NEWNET) refused";
    EXPECT_NE(marks[0], network_namespace_mark());
    EXPECT_EQ(marks[1], marks[0]);
}

}  // namespace
