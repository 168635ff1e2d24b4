// transport_code.h: the one-byte codes protocol messages name a zero-copy transport by.

#include "transports/transport_code.h"
#include "transports/iface/discovery.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace ufi::transports;

// Every transport UCT offers on this machine has a code, and
// the code names it back: a rendezvous over it can say which transport it means.
TEST(TransportCode, EveryTransportHereHasACodeThatNamesItBack) {
    const Discovery &d = discovery();
    size_t checked = 0;
    for (const Resource &r : d.resources) {
        const TransportCode c = transport_code(r.tl);
        ASSERT_NE(c, kNoTransport) << r.tl;
        EXPECT_EQ(transport_name(c), r.tl);
        ++checked;
    }
    EXPECT_GT(checked, 0u);
}

TEST(TransportCode, CodesAreDistinctAndUnknownNamesHaveNone) {
    std::set<TransportCode> seen;
    for (const char *tl : {"self", "posix", "sysv", "cma", "knem", "xpmem", "tcp", "rc_verbs",
                           "rc_mlx5", "dc_mlx5", "ud_verbs", "ud_mlx5", "cuda_ipc"}) {
        const TransportCode c = transport_code(tl);
        EXPECT_NE(c, kNoTransport) << tl;
        EXPECT_TRUE(seen.insert(c).second) << tl << " shares code " << int(c);
    }
    EXPECT_EQ(transport_code("no_such_tl"), kNoTransport);
    EXPECT_EQ(transport_code(""), kNoTransport);
    EXPECT_EQ(transport_name(kNoTransport), "");
    EXPECT_EQ(transport_name(250), "");
}

// The codes travel on the wire: they never change (a peer of the same protocol version reads
// them the same). These are the ones ufi has sent since protocol version 8.
TEST(TransportCode, TheCodesOnTheWireStay) {
    EXPECT_EQ(transport_code("self"), 1);
    EXPECT_EQ(transport_code("posix"), 2);
    EXPECT_EQ(transport_code("cma"), 4);
    EXPECT_EQ(transport_code("tcp"), 7);
    EXPECT_EQ(transport_code("rc_mlx5"), 9);
}

TEST(TransportCode, RecordsAreMatchedByTheirTransport) {
    address::TransportRecord tcp{"tcp", {1, 2, 3}, {}};
    EXPECT_TRUE(is_transport(tcp, transport_code("tcp")));
    EXPECT_FALSE(is_transport(tcp, transport_code("cma")));
    EXPECT_FALSE(is_transport(tcp, kNoTransport));
    address::TransportRecord odd{"no_such_tl", {}, {}};
    EXPECT_FALSE(is_transport(odd, kNoTransport));
}
