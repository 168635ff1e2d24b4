// The kernel's tcp table as ufi reads it (transports/iface/tcp_table.h): rows of both formats,
// and the stall that tells a host gone silent, on synthetic tables and on a live socket.
#include "transports/iface/tcp_table.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

#include <cstring>

namespace {

using namespace ufi::transports;

constexpr const char *kTcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    // listening on 127.0.0.1:9228
    "   0: 0100007F:240C 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0\n"
    // 10.9.0.1:40000 -> 10.9.0.2:9228, 0x1c0 bytes unacknowledged, retransmitted 3 times
    "   1: 0100090A:9C40 0200090A:240C 01 000001C0:00000000 01:00000050 00000003  1000        0 2 1 0 20 4 30 10 -1\n"
    // 10.9.0.1:40001 -> 10.9.0.3:9228, data in flight, no retransmission yet
    "   2: 0100090A:9C41 0300090A:240C 01 00000040:00000000 01:00000014 00000000  1000        0 3 1 0 20 4 30 10 -1\n"
    "   3: garbage\n";

constexpr const char *kTcp6 =
    "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    // [fd00::1]:9228 -> [fd00::2]:40000, stalled
    "   0: 000000FD000000000000000001000000:240C 000000FD000000000000000002000000:9C40 01 00000100:00000000 01:00000100 00000005  1000        0 4 1 0 20 4 30 10 -1\n";

void ip4(const char *text, uint8_t (&out)[16]) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    ASSERT_EQ(inet_pton(AF_INET, text, &sa.sin_addr), 1);
    ASSERT_TRUE(row_address_of(reinterpret_cast<const sockaddr *>(&sa), out));
}

TEST(TcpTable, ReadsRowsOfTheIpv4Table) {
    const auto rows = parse_tcp_table(kTcp);
    ASSERT_EQ(rows.size(), 3u);  // the garbage line skipped
    EXPECT_EQ(rows[0].state, 0x0Au);
    EXPECT_EQ(rows[0].local_port, 9228);
    uint8_t lo[16], b[16];
    ip4("127.0.0.1", lo);
    ip4("10.9.0.2", b);
    EXPECT_EQ(std::memcmp(rows[0].local_ip, lo, 16), 0);
    EXPECT_EQ(std::memcmp(rows[1].remote_ip, b, 16), 0);
    EXPECT_EQ(rows[1].remote_port, 9228);
    EXPECT_EQ(rows[1].local_port, 40000);
    EXPECT_EQ(rows[1].state, kTcpEstablished);
    EXPECT_EQ(rows[1].tx_queue, 0x1c0u);
    EXPECT_EQ(rows[1].retransmits, 3u);
}

TEST(TcpTable, AStallIsUnacknowledgedDataRetransmittedTowardsTheHost) {
    const auto rows = parse_tcp_table(kTcp);
    uint8_t b[16], c[16], d[16];
    ip4("10.9.0.2", b);
    ip4("10.9.0.3", c);
    ip4("10.9.0.4", d);
    EXPECT_TRUE(stalled_towards(rows, b));
    EXPECT_FALSE(stalled_towards(rows, c));  // in flight, not retransmitted: no stall yet
    EXPECT_FALSE(stalled_towards(rows, d));  // no socket to it
}

TEST(TcpTable, ReadsTheIpv6Table) {
    const auto rows = parse_tcp_table(kTcp6);
    ASSERT_EQ(rows.size(), 1u);
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    ASSERT_EQ(inet_pton(AF_INET6, "fd00::2", &sa.sin6_addr), 1);
    uint8_t host[16];
    ASSERT_TRUE(row_address_of(reinterpret_cast<const sockaddr *>(&sa), host));
    EXPECT_TRUE(stalled_towards(rows, host));
    EXPECT_EQ(rows[0].retransmits, 5u);
    EXPECT_EQ(rows[0].local_port, 9228);
}

TEST(TcpTable, EmptyOrForeignTextGivesNoRows) {
    EXPECT_TRUE(parse_tcp_table("").empty());
    EXPECT_TRUE(parse_tcp_table("header only\n").empty());
    EXPECT_TRUE(parse_tcp_table("h\n 0: 0100007:0C 0100007F:0D 01 0\n").empty());  // 7 digits
}

TEST(TcpTable, SeesThisProcessesListeningSocket) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa), 0);
    ASSERT_EQ(::listen(fd, 1), 0);
    socklen_t len = sizeof sa;
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len), 0);
    bool found = false;
    for (const TcpSocketRow &r : read_tcp_tables()) {
        found = found || (r.local_port == ntohs(sa.sin_port) && r.state == 0x0A);
    }
    ::close(fd);
    EXPECT_TRUE(found);
}

}  // namespace
