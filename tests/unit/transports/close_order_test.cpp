// transports/iface/close_order: counting ESTABLISHED connections on a local tcp port in
// /proc/net/tcp-format text (IPv4 and IPv6 lines, other states and ports, a malformed line),
// and the live count around a real connection on loopback.
#include "transports/iface/close_order.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

using ufi::transports::established_on_port;
using ufi::transports::established_on_port_in;
using ufi::transports::wait_for_peers_to_close;

TEST(CloseOrder, CountsEstablishedLinesOfThePort) {
    const char *table =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
        "   0: 0100007F:2404 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0\n"  // listening
        "   1: 0100007F:2404 0100007F:A7DE 01 00000000:00000000 00:00000000 00000000 0\n"  // established
        "   2: 0100007F:2404 0100007F:A7DF 08 00000000:00000000 00:00000000 00000000 0\n"  // close wait
        "   3: 0100007F:2404 0100007F:A7E0 06 00000000:00000000 00:00000000 00000000 0\n"  // time wait
        "   4: 0100007F:A7DE 0100007F:2404 01 00000000:00000000 00:00000000 00000000 0\n"  // the client side
        "   5: 00000000000000000000000001000000:2404 00000000000000000000000001000000:9C40 01 0\n"
        "   6: garbage\n";
    EXPECT_EQ(established_on_port_in(table, 0x2404), 2u);  // lines 1 and 5
    EXPECT_EQ(established_on_port_in(table, 0xA7DE), 1u);
    EXPECT_EQ(established_on_port_in(table, 80), 0u);
    EXPECT_EQ(established_on_port_in("", 0x2404), 0u);
}

TEST(CloseOrder, SeesALoopbackConnectionUntilItsPeerCloses) {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len), 0);
    ASSERT_EQ(listen(listener, 1), 0);
    const uint16_t port = ntohs(a.sin_port);
    EXPECT_EQ(established_on_port(port), 0u);
    const int client = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_EQ(connect(client, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    const int accepted = accept(listener, nullptr, nullptr);
    ASSERT_GE(accepted, 0);
    EXPECT_EQ(established_on_port(port), 1u);
    EXPECT_FALSE(wait_for_peers_to_close(port, std::chrono::milliseconds(5)));
    ::close(client);  // the peer closes first: the accepted side is in CLOSE_WAIT
    EXPECT_TRUE(wait_for_peers_to_close(port, std::chrono::milliseconds(2000)));
    ::close(accepted);
    ::close(listener);
}

}  // namespace
