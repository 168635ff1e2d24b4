// A peer of another ufi protocol version is refused, not left waiting: its request (whatever
// its header's size, which requests state since version 5; versions 1-4 had the 32-byte
// prefix alone) is answered with a refusal made of the prefix every version reads, and the
// refused side's operations fail with FI_ECONNREFUSED.
#include "data_path_of.h"
#include "msg_fixture.h"

#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"
#include "transports/address.h"

#include <cstring>

namespace ufi::msg_test {
namespace {

namespace wire = runtime::proto::wire;

TEST_F(MsgTest, ARequestOfAnOlderProtocolVersionIsRefusedInAFormItReads) {
    open_side(c_);
    const fi_addr_t c_to_a = insert(c_, a_.name);
    // C and A talk: C's peer 0 is A.
    uint64_t out = 7, in = 0;
    ASSERT_EQ(fi_trecv(a_.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 1, 0, nullptr), 0);
    ASSERT_EQ(retry([&] { return fi_tsend(c_.ep, &out, sizeof out, nullptr, c_to_a, 1, nullptr); }), 0);
    fi_cq_tagged_entry e{};
    ASSERT_EQ(wait(a_.cq, e), 1);
    ASSERT_EQ(wait(c_.cq, e), 1);
    ASSERT_EQ(in, out);

    // A request as C would send it with protocol version 4: the 32-byte header, status 0.
    runtime::proto::DataPath *da = data_path(a_.ep);
    const uint64_t refused = da->stats().refused_peers;
    transports::address::EndpointAddress named;
    ASSERT_TRUE(transports::address::unpack(c_.name.data(), c_.name.size(), named));
    const std::vector<uint8_t> addr = transports::address::pack(named);
    wire::WireupHdr h{};
    h.type = wire::kWireupRequest;
    h.version = 4;
    h.sender_idx = 0;  // C's index for A
    h.receiver_idx = runtime::proto::kNoPeer;
    h.addr_len = static_cast<uint16_t>(addr.size());
    h.uuid = named.uuid;
    h.endpoint_id = named.endpoint_id;
    std::vector<uint8_t> msg(wire::kWireupPrefixSize + addr.size());
    std::memcpy(msg.data(), &h, wire::kWireupPrefixSize);
    std::memcpy(msg.data() + wire::kWireupPrefixSize, addr.data(), addr.size());
    ASSERT_TRUE(da->deliver_for_test(wire::kAmWireup, msg.data(), msg.size()));
    EXPECT_EQ(da->stats().refused_peers, refused + 1);
    EXPECT_EQ(da->stats().peer_restarts, 0u) << "another version's request is no restart";

    // The refusal reaches C, which takes it: its operations towards A fail.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    ssize_t rc = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        progress_all();
        rc = fi_tsend(c_.ep, &out, sizeof out, nullptr, c_to_a, 2, nullptr);
        if (rc != 0 && rc != -FI_EAGAIN) break;
        if (rc == 0) (void)wait(c_.cq, e);
    }
    EXPECT_EQ(rc, -FI_ECONNREFUSED) << fi_strerror(static_cast<int>(-rc));

    // A request of this version with a header size it does not state right is dropped.
    const uint64_t malformed = da->stats().dropped_malformed;
    h.version = wire::kProtocolVersion;
    h.status = wire::kWireupPrefixSize;  // (this version's header is larger)
    std::memcpy(msg.data(), &h, wire::kWireupPrefixSize);
    ASSERT_TRUE(da->deliver_for_test(wire::kAmWireup, msg.data(), msg.size()));
    EXPECT_EQ(da->stats().dropped_malformed, malformed + 1);
}

}  // namespace
}  // namespace ufi::msg_test
