// libFuzzer harness: the data path's receive handlers on arbitrary messages. Two endpoints of
// one process (the transports UFI_TLS leaves; shared memory by default) connect once; then
// each input is one active message delivered to B as if it came from the wire: its first byte
// picks the id (one past the last: no such message), its second whether the sender index is
// set to A's (so the message passes the source check and reaches the parsers behind it), the
// rest is the message. Nothing may crash, read outside the message or write outside what B
// registered; the endpoints must still talk afterwards (checked every 4096 inputs).
#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace wire = ufi::runtime::proto::wire;

namespace {

struct Side {
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_ep *ep = nullptr;
};

fi_info *g_info = nullptr;
Side g_a, g_b;
fi_addr_t g_a_to_b = FI_ADDR_NOTAVAIL;
ufi::runtime::proto::DataPath *g_dp = nullptr;

void die(const char *what) {
    std::fprintf(stderr, "fuzz_wire: %s\n", what);
    std::abort();
}

void open_side(Side &s) {
    if (fi_fabric(g_info->fabric_attr, &s.fabric, nullptr) || fi_domain(s.fabric, g_info, &s.domain, nullptr)) die("fabric/domain");
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 1024;
    if (fi_av_open(s.domain, &av_attr, &s.av, nullptr) || fi_cq_open(s.domain, &cq_attr, &s.cq, nullptr) ||
        fi_endpoint(s.domain, g_info, &s.ep, nullptr) || fi_ep_bind(s.ep, &s.av->fid, 0) ||
        fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(s.ep)) {
        die("endpoint");
    }
}

void drain(Side &s) {
    fi_cq_tagged_entry e[16];
    for (int i = 0; i < 64; ++i) {
        const ssize_t rc = fi_cq_read(s.cq, e, 16);
        if (rc == -FI_EAVAIL) {
            fi_cq_err_entry err{};
            (void)fi_cq_readerr(s.cq, &err, 0);
        } else if (rc <= 0 && i > 4) {
            break;
        }
    }
}

// A message from A reaches B (the endpoints still talk).
void round_trip() {
    static uint64_t in;
    uint64_t out = 0xfeed;
    in = 0;
    if (fi_trecv(g_b.ep, &in, sizeof in, nullptr, FI_ADDR_UNSPEC, 0x5a5a, 0, &in)) die("trecv");
    ssize_t rc;
    while ((rc = fi_tinject(g_a.ep, &out, sizeof out, g_a_to_b, 0x5a5a)) == -FI_EAGAIN) drain(g_a);
    if (rc) die("tinject");
    for (int i = 0; i < 1000000 && in != out; ++i) {
        drain(g_a);
        drain(g_b);
    }
    if (in != out) die("the endpoints no longer talk");
}

// Where each message's sender index sits (receive_fuzz_test.cpp says the same).
size_t src_offset(uint8_t id) {
    switch (id) {
        case wire::kAmEager:
        case wire::kAmEagerFirst:
        case wire::kAmRts: return offsetof(wire::EagerHdr, src);
        default: return 0;
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fi_info *hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
    if (fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &g_info)) die("fi_getinfo");
    fi_freeinfo(hints);
    open_side(g_a);
    open_side(g_b);
    std::vector<uint8_t> name(256);
    size_t len = name.size();
    if (fi_getname(&g_b.ep->fid, name.data(), &len) || fi_av_insert(g_a.av, name.data(), 1, &g_a_to_b, 0, nullptr) != 1) {
        die("names");
    }
    round_trip();  // B knows A as its peer 0 now
    g_dp = ufi::runtime::ep::endpoint_of(&g_b.ep->fid)->data_path();
    if (g_dp == nullptr || g_dp->peer_count() != 1) die("B's peer");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const auto id = static_cast<uint8_t>(1 + data[0] % (wire::kAmLast + 1));
    std::vector<uint8_t> msg(data + 2, data + size);  // exactly its length: overreads show
    if ((data[1] & 1) && src_offset(id) + 4 <= msg.size()) {
        const uint32_t real = 0;
        std::memcpy(msg.data() + src_offset(id), &real, sizeof real);
    }
    (void)g_dp->deliver_for_test(id, msg.data(), msg.size());
    static unsigned n = 0;
    if (++n % 64 == 0) drain(g_b);
    if (n % 4096 == 0) round_trip();
    return 0;
}
