// transports/iface/abortive_close: the connections accepted on a port (and only those: not the
// listener, not the connecting side, not another port's) get SO_LINGER {on, 0}; closed, they
// leave no TIME_WAIT, so a listener without SO_REUSEADDR takes the port again at once; and
// wait_for_sent_on sees their send queues empty.
#include "transports/iface/abortive_close.h"
#include "transports/iface/tcp_table.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace {

using ufi::transports::close_abortively_on;
using ufi::transports::wait_for_sent_on;

constexpr unsigned kTimeWait = 6;

// A listener on 127.0.0.1 (port in `port`), without SO_REUSEADDR, as UCT's tcp iface binds.
int listen_loopback(uint16_t &port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        ::close(fd);
        return -1;
    }
    port = ntohs(a.sin_port);
    return fd;
}

int connect_loopback(uint16_t port) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

linger linger_of(int fd) {
    linger l{};
    socklen_t n = sizeof l;
    (void)getsockopt(fd, SOL_SOCKET, SO_LINGER, &l, &n);
    return l;
}

unsigned time_wait_on(uint16_t port) {
    unsigned n = 0;
    for (const auto &r : ufi::transports::read_tcp_tables()) n += r.local_port == port && r.state == kTimeWait;
    return n;
}

TEST(AbortiveClose, SetsLingerOnTheAcceptedConnectionsOnlyAndFreesThePort) {
    uint16_t port = 0, other_port = 0;
    const int lfd = listen_loopback(port);
    const int other = listen_loopback(other_port);
    ASSERT_GE(lfd, 0);
    ASSERT_GE(other, 0);
    const int client = connect_loopback(port);
    const int other_client = connect_loopback(other_port);
    ASSERT_GE(client, 0);
    ASSERT_GE(other_client, 0);
    const int accepted = accept(lfd, nullptr, nullptr);
    const int other_accepted = accept(other, nullptr, nullptr);
    ASSERT_GE(accepted, 0);
    ASSERT_GE(other_accepted, 0);

    EXPECT_EQ(close_abortively_on(port), 1u);
    EXPECT_EQ(linger_of(accepted).l_onoff, 1);
    EXPECT_EQ(linger_of(accepted).l_linger, 0);
    EXPECT_EQ(linger_of(lfd).l_onoff, 0);           // the listener
    EXPECT_EQ(linger_of(client).l_onoff, 0);        // the connecting side (another local port)
    EXPECT_EQ(linger_of(other_accepted).l_onoff, 0);  // another port's
    EXPECT_TRUE(wait_for_sent_on(port, std::chrono::milliseconds(100)));

    // The server side closes first, as a killed process's kernel does: no TIME_WAIT, and
    // the port can be listened on again without SO_REUSEADDR.
    ::close(accepted);
    ::close(lfd);
    EXPECT_EQ(time_wait_on(port), 0u);
    uint16_t again_port = port;
    const int again = listen_loopback(again_port);
    EXPECT_GE(again, 0) << "port " << port << " not free after the abortive close";
    if (again >= 0) ::close(again);
    ::close(client);

    // Without it (the other port), the side that closes first keeps TIME_WAIT and the port.
    ::close(other_accepted);
    ::close(other);
    char b;
    (void)read(other_client, &b, 1);  // (the FIN)
    ::close(other_client);
    // (The client's FIN reaches the server's socket through the kernel's softirq: poll.)
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (time_wait_on(other_port) == 0 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(time_wait_on(other_port), 1u);
    uint16_t other_again = other_port;
    const int taken = listen_loopback(other_again);
    EXPECT_LT(taken, 0) << "port " << other_port << " free though in TIME_WAIT";
    if (taken >= 0) ::close(taken);
}

}  // namespace
