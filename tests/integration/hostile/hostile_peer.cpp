// A hostile peer: a process that speaks UCT's tcp transport to a ufi endpoint directly, not
// through ufi (hostile_test.cpp starts it). It opens its own UCT tcp iface on loopback,
// connects to the tcp record of the target's name, and sends, in order:
//   A. random bytes under every active-message id (0..31, ufi's and unused ones), random
//      lengths, before any handshake: the target must drop them (unknown sender, malformed);
//   B. WIREUP requests that must be refused or dropped: another protocol version, a forged
//      authorization key, truncated headers, lengths that disagree with the message, an
//      address that does not parse;
//   C. a correct handshake with the right key (an insider), then RMA and atomics against the
//      target's one registered region: forged MR keys, ranges before, after, across and far
//      outside it, wrapping addresses, bad segment counts, unknown atomic ops and datatypes;
//      one legitimate 8-byte write and one read as the control that the path works; then
//      random bytes under every id with its real source index (they pass the source check
//      and reach every parser);
// and reports what came back on stdout as "name value" lines. Only ufi's wire definitions
// (runtime/proto/wire.h) and address codec (transports/address.h) are shared with ufi; all
// sending and receiving is UCT's.
//
// With --put-probe ADDR, last: one PUT of UCT's tcp protocol (not ufi's) to ADDR in the target,
// memory no region covers (docs/security.md: what UCT's tcp allows below ufi).
//
// Usage: hostile_peer <target name, hex> <region address> <region length> <MR key> <auth key>
//                     [--put-probe <address>]
// Exit 0: every phase ran and the target answered as the report says; 1: setup failed or the
// target did not answer where it must (the handshake, the control write and read).
#include "runtime/proto/wire.h"
#include "transports/address.h"

#include <uct/api/uct.h>
#include <ucs/async/async_fwd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace wire = ufi::runtime::proto::wire;
namespace address = ufi::transports::address;

namespace {

[[noreturn]] void fail(const std::string &why) {
    std::fprintf(stderr, "hostile_peer: %s\n", why.c_str());
    std::exit(1);
}

void check(ucs_status_t s, const char *what) {
    if (s != UCS_OK) fail(std::string(what) + ": " + ucs_status_string(s));
}

// What the target sent back.
struct Answers {
    int replies = 0;
    uint32_t my_index = UINT32_MAX;  // the target's index for us (WIREUP_REP receiver_idx)
    std::map<int, int> refusals;     // WireupStatus -> count
    std::map<uint64_t, int32_t> acks;   // RMA_ACK: id -> status
    std::map<uint64_t, int32_t> reads;  // RMA_READ_RESP: id -> status (first answer)
    std::map<uint64_t, std::vector<uint8_t>> read_bytes;
    std::map<uint64_t, int32_t> atomics;  // ATOMIC_RESP: id -> status
    int other = 0;
};
Answers answers;

ucs_status_t on_wireup(void *, void *data, size_t length, unsigned) {
    wire::WireupHdr h{};
    if (length < wire::kWireupPrefixSize) return UCS_OK;
    std::memcpy(&h, data, std::min(length, sizeof h));
    if (h.type == wire::kWireupReply) {
        ++answers.replies;
        answers.my_index = h.receiver_idx;
    } else if (h.type == wire::kWireupRefuse) {
        ++answers.refusals[h.status];
    } else {
        ++answers.other;
    }
    return UCS_OK;
}

ucs_status_t on_ack(void *, void *data, size_t length, unsigned) {
    wire::AckHdr h;
    if (length >= sizeof h) {
        std::memcpy(&h, data, sizeof h);
        answers.acks.emplace(h.id, h.status);
    }
    return UCS_OK;
}

ucs_status_t on_read_resp(void *, void *data, size_t length, unsigned) {
    wire::RmaRespHdr h;
    if (length >= sizeof h) {
        std::memcpy(&h, data, sizeof h);
        answers.reads.emplace(h.id, h.status);
        auto &bytes = answers.read_bytes[h.id];
        const auto *p = static_cast<const uint8_t *>(data) + sizeof h;
        if (h.offset == bytes.size()) bytes.insert(bytes.end(), p, p + (length - sizeof h));
    }
    return UCS_OK;
}

ucs_status_t on_atomic_resp(void *, void *data, size_t length, unsigned) {
    wire::RmaRespHdr h;
    if (length >= sizeof h) {
        std::memcpy(&h, data, sizeof h);
        answers.atomics.emplace(h.id, h.status);
    }
    return UCS_OK;
}

ucs_status_t on_other(void *, void *, size_t, unsigned) {
    ++answers.other;
    return UCS_OK;
}

struct Uct {
    ucs_async_context_t *async = nullptr;
    uct_worker_h worker = nullptr;
    uct_md_h md = nullptr;
    uct_iface_h iface = nullptr;
    uct_ep_h ep = nullptr;
    size_t max_bcopy = 0;
    bool put_zcopy = false;
    std::vector<uint8_t> dev_addr, iface_addr;
};

// UCT's tcp on loopback, with a handler for every id (answers are counted, not warned about).
Uct open_uct() {
    Uct u;
    check(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &u.async), "ucs_async_context_create");
    check(uct_worker_create(u.async, UCS_THREAD_MODE_SINGLE, &u.worker), "uct_worker_create");
    uct_component_h *comps;
    unsigned ncomps;
    check(uct_query_components(&comps, &ncomps), "uct_query_components");
    for (unsigned c = 0; c < ncomps && !u.iface; ++c) {
        uct_component_attr_t attr{};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        check(uct_component_query(comps[c], &attr), "uct_component_query");
        std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds.data();
        check(uct_component_query(comps[c], &attr), "uct_component_query");
        for (const auto &m : mds) {
            uct_md_config_t *mdc;
            if (uct_md_config_read(comps[c], nullptr, nullptr, &mdc) != UCS_OK) continue;
            uct_md_h md;
            const ucs_status_t s = uct_md_open(comps[c], m.md_name, mdc, &md);
            uct_config_release(mdc);
            if (s != UCS_OK) continue;
            uct_tl_resource_desc_t *tls;
            unsigned ntls;
            bool found = false;
            if (uct_md_query_tl_resources(md, &tls, &ntls) == UCS_OK) {
                for (unsigned t = 0; t < ntls; ++t)
                    found |= std::strcmp(tls[t].tl_name, "tcp") == 0 && std::strcmp(tls[t].dev_name, "lo") == 0;
                uct_release_tl_resource_list(tls);
            }
            if (!found) {
                uct_md_close(md);
                continue;
            }
            uct_iface_config_t *ic;
            check(uct_md_iface_config_read(md, "tcp", nullptr, nullptr, &ic), "uct_md_iface_config_read");
            uct_config_modify(ic, "PUT_ENABLE", "y");  // (our side's offer; the probe below)
            uct_iface_params_t p{};
            p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                           UCT_IFACE_PARAM_FIELD_STATS_ROOT | UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
            p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
            p.mode.device.tl_name = "tcp";
            p.mode.device.dev_name = "lo";
            check(uct_iface_open(md, u.worker, &p, ic, &u.iface), "uct_iface_open");
            uct_config_release(ic);
            u.md = md;
            break;
        }
    }
    uct_release_component_list(comps);
    if (!u.iface) fail("no tcp transport on lo");
    uct_iface_attr_t ia;
    check(uct_iface_query(u.iface, &ia), "uct_iface_query");
    u.max_bcopy = ia.cap.am.max_bcopy;
    u.put_zcopy = (ia.cap.flags & UCT_IFACE_FLAG_PUT_ZCOPY) != 0;
    u.dev_addr.resize(ia.device_addr_len);
    u.iface_addr.resize(ia.iface_addr_len);
    check(uct_iface_get_device_address(u.iface, reinterpret_cast<uct_device_addr_t *>(u.dev_addr.data())),
          "uct_iface_get_device_address");
    check(uct_iface_get_address(u.iface, reinterpret_cast<uct_iface_addr_t *>(u.iface_addr.data())),
          "uct_iface_get_address");
    for (uint8_t id = 0; id < UCT_AM_ID_MAX; ++id) {
        uct_am_callback_t cb = on_other;
        if (id == wire::kAmWireup) cb = on_wireup;
        if (id == wire::kAmRmaAck) cb = on_ack;
        if (id == wire::kAmRmaReadResp) cb = on_read_resp;
        if (id == wire::kAmAtomicResp) cb = on_atomic_resp;
        check(uct_iface_set_am_handler(u.iface, id, cb, nullptr, 0), "uct_iface_set_am_handler");
    }
    uct_iface_progress_enable(u.iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    return u;
}

void connect_to(Uct &u, const address::EndpointAddress &target) {
    for (const auto &r : target.records) {
        if (r.tl != "tcp") continue;
        uct_ep_params_t p{};
        p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR;
        p.iface = u.iface;
        p.dev_addr = reinterpret_cast<const uct_device_addr_t *>(r.device_addr.data());
        p.iface_addr = reinterpret_cast<const uct_iface_addr_t *>(r.iface_addr.data());
        check(uct_ep_create(&p, &u.ep), "uct_ep_create");
        return;
    }
    fail("the target's name has no tcp record (run it with UFI_TLS=tcp)");
}

struct Bytes {
    const uint8_t *p;
    size_t n;
};
size_t pack_bytes(void *dest, void *arg) {
    const auto *b = static_cast<const Bytes *>(arg);
    if (b->n) std::memcpy(dest, b->p, b->n);
    return b->n;
}

uint64_t sent = 0;
const auto t0 = std::chrono::steady_clock::now();
void mark(const char *what) {
    std::fprintf(stderr, "hostile_peer: %s at %.3f s\n", what,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

// One active message of exactly these bytes (bcopy: any length up to max_bcopy).
void send_am(Uct &u, uint8_t id, const void *data, size_t len) {
    Bytes b{static_cast<const uint8_t *>(data), std::min(len, u.max_bcopy)};
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
        const ssize_t r = uct_ep_am_bcopy(u.ep, id, pack_bytes, &b, 0);
        if (r >= 0) break;
        if (r != UCS_ERR_NO_RESOURCE) fail(std::string("uct_ep_am_bcopy: ") + ucs_status_string(static_cast<ucs_status_t>(r)));
        uct_worker_progress(u.worker);
        if (std::chrono::steady_clock::now() > until) fail("the target stopped taking messages for 30 s");
    }
    ++sent;
    uct_worker_progress(u.worker);
}

template <typename... Parts>
std::vector<uint8_t> join(const Parts &...parts) {
    std::vector<uint8_t> out;
    (out.insert(out.end(), reinterpret_cast<const uint8_t *>(&parts),
                reinterpret_cast<const uint8_t *>(&parts) + sizeof parts),
     ...);
    return out;
}

void append(std::vector<uint8_t> &v, const void *p, size_t n) {
    v.insert(v.end(), static_cast<const uint8_t *>(p), static_cast<const uint8_t *>(p) + n);
}

void progress_for(Uct &u, std::chrono::milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) uct_worker_progress(u.worker);
}

template <typename Done>
bool wait_until(Uct &u, Done done, int seconds = 10) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        uct_worker_progress(u.worker);
    }
    return true;
}

std::vector<uint8_t> random_bytes(std::mt19937_64 &rng, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto &b : v) b = static_cast<uint8_t>(rng());
    return v;
}

// A WIREUP_REQ as ufi sends one (wire.h), from `me`, presenting `key`.
std::vector<uint8_t> request(const std::vector<uint8_t> &me, uint64_t uuid, const std::string &key,
                             uint8_t version = wire::kProtocolVersion) {
    wire::WireupHdr h{};
    h.type = wire::kWireupRequest;
    h.version = version;
    h.status = sizeof h;
    h.sender_idx = 7;
    h.receiver_idx = UINT32_MAX;
    h.addr_len = static_cast<uint16_t>(me.size());
    h.key_len = static_cast<uint16_t>(key.size());
    h.uuid = uuid;
    h.endpoint_id = 1;
    h.incarnation = 0x5eed;
    std::vector<uint8_t> m = join(h);
    append(m, me.data(), me.size());
    append(m, key.data(), key.size());
    return m;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 6 && argc != 8)
        fail("usage: hostile_peer <name hex> <region addr> <region len> <key> <auth key> [--put-probe <addr>]");
    std::vector<uint8_t> target_name;
    for (const char *h = argv[1]; h[0] && h[1]; h += 2) {
        unsigned v;
        std::sscanf(h, "%2x", &v);
        target_name.push_back(static_cast<uint8_t>(v));
    }
    const uint64_t region = std::strtoull(argv[2], nullptr, 0);
    const uint64_t region_len = std::strtoull(argv[3], nullptr, 0);
    const uint64_t key = std::strtoull(argv[4], nullptr, 0);
    const std::string auth_key = argv[5];
    address::EndpointAddress target;
    std::string why;
    if (!address::unpack(target_name.data(), target_name.size(), target, &why)) fail("target name: " + why);

    Uct u = open_uct();
    connect_to(u, target);
    std::mt19937_64 rng(20261207);

    // ---- A: noise from a stranger, every id ----
    uint64_t phase_a = 0;
    for (int i = 0; i < 20000; ++i) {
        // Mostly ufi's ids; every unused one too (the target must count them, not warn).
        const auto id = static_cast<uint8_t>(i % 8 == 0 ? rng() % UCT_AM_ID_MAX : 1 + rng() % wire::kAmLast);
        const auto m = random_bytes(rng, rng() % (i % 4 == 0 ? 600 : 100));
        send_am(u, id, m.data(), m.size());
        ++phase_a;
    }

    mark("phase A sent");
    // ---- B: handshakes that must fail ----
    address::EndpointAddress me_addr;
    me_addr.uuid = rng() | 1;
    me_addr.endpoint_id = 1;
    me_addr.records.push_back({"tcp", u.dev_addr, u.iface_addr});
    const std::vector<uint8_t> me = address::pack(me_addr, &why);
    if (me.empty()) fail("packing our address: " + why);
    // Another version, then a forged key: both answered with a refusal.
    auto m = request(me, me_addr.uuid, auth_key, 99);
    send_am(u, wire::kAmWireup, m.data(), m.size());
    if (!wait_until(u, [] { return answers.refusals[wire::kWireupBadVersion] > 0; }))
        fail("no refusal for a request of protocol version 99");
    // (A new identity: the target keeps the refused one's peer entry.)
    me_addr.uuid = rng() | 1;
    std::vector<uint8_t> me2 = address::pack(me_addr, &why);
    m = request(me2, me_addr.uuid, "forged-" + auth_key);
    send_am(u, wire::kAmWireup, m.data(), m.size());
    if (!wait_until(u, [] { return answers.refusals[wire::kWireupBadKey] > 0; }))
        fail("no refusal for a forged authorization key");
    // Malformed: each must be dropped, none answered.
    const int refusals_before = answers.refusals[wire::kWireupBadKey] + answers.refusals[wire::kWireupBadVersion];
    me_addr.uuid = rng() | 1;
    const std::vector<uint8_t> me3 = address::pack(me_addr, &why);
    const std::vector<uint8_t> good = request(me3, me_addr.uuid, auth_key);
    uint64_t malformed_requests = 0;
    auto send_bad = [&](std::vector<uint8_t> bad) {
        send_am(u, wire::kAmWireup, bad.data(), bad.size());
        ++malformed_requests;
    };
    for (size_t cut = 0; cut < good.size(); cut += 3) send_bad({good.begin(), good.begin() + static_cast<long>(cut)});
    {
        auto bad = good;
        bad.push_back(0);  // one byte more than its lengths say
        send_bad(bad);
        bad = good;
        reinterpret_cast<wire::WireupHdr *>(bad.data())->addr_len += 5;  // past the end
        send_bad(bad);
        bad = good;
        reinterpret_cast<wire::WireupHdr *>(bad.data())->p2p_len = 60000;
        send_bad(bad);
        bad = good;
        reinterpret_cast<wire::WireupHdr *>(bad.data())->status = 65535;  // header size
        send_bad(bad);
        bad = good;
        reinterpret_cast<wire::WireupHdr *>(bad.data())->status = 8;
        send_bad(bad);
        bad = good;
        bad[sizeof(wire::WireupHdr) + 9] ^= 0x40;  // the address's checksum fails
        send_bad(bad);
        bad = good;
        reinterpret_cast<wire::WireupHdr *>(bad.data())->uuid ^= 1;  // not the address's uuid
        send_bad(bad);
        bad = good;
        reinterpret_cast<wire::WireupHdr *>(bad.data())->type = 77;
        send_bad(bad);
    }
    progress_for(u, std::chrono::milliseconds(300));
    const int refusals_after = answers.refusals[wire::kWireupBadKey] + answers.refusals[wire::kWireupBadVersion];

    mark("phase B done");
    // ---- C: an insider (the right key) ----
    send_am(u, wire::kAmWireup, good.data(), good.size());
    if (!wait_until(u, [] { return answers.replies > 0; })) fail("no WIREUP_REP to a correct request");
    const uint32_t src = answers.my_index;
    mark("admitted");

    uint64_t next_id = 1;
    std::map<uint64_t, std::string> expect_refused;  // id -> what it tried
    auto write_short = [&](uint64_t mr_key, uint64_t addr, uint64_t value, const char *what) {
        const wire::RmaShortHdr h{src, 0, next_id, mr_key, addr};
        auto msg = join(h, value);
        send_am(u, wire::kAmRmaWriteShort, msg.data(), msg.size());
        if (what) expect_refused[next_id] = what;
        return next_id++;
    };
    // The control: 8 bytes at the region's start.
    const uint64_t control = 0x4242424242424242ull;
    const uint64_t control_id = write_short(key, region, control, nullptr);
    write_short(key + 1, region, 1, "write, forged key");
    write_short(key ^ 0xffff0000ull, region, 1, "write, forged key (high bits)");
    write_short(key, region - 8, 1, "write, 8 bytes before the region");
    write_short(key, region + region_len - 4, 1, "write, across the region's end");
    write_short(key, region + region_len, 1, "write, just after the region");
    write_short(key, UINT64_MAX - 3, 1, "write, wrapping address");
    write_short(key, 0, 1, "write, address 0");
    write_short(key, region + (uint64_t{1} << 40), 1, "write, far outside");

    // RMA_WRITE and RMA_READ_REQ with segment lists.
    auto rma = [&](uint8_t id, std::vector<wire::RmaSeg> segs, uint64_t total, uint32_t nsegs,
                   const std::vector<uint8_t> &payload, const char *what) {
        wire::RmaHdr h{};
        h.src = src;
        h.id = next_id;
        h.total = total;
        h.segments = nsegs;
        std::vector<uint8_t> msg = join(h);
        append(msg, segs.data(), segs.size() * sizeof(wire::RmaSeg));
        append(msg, payload.data(), payload.size());
        send_am(u, id, msg.data(), msg.size());
        if (what) expect_refused[next_id] = what;
        return next_id++;
    };
    const std::vector<uint8_t> eight(8, 0x66);
    rma(wire::kAmRmaWrite, {{key, region + region_len, 8}}, 8, 1, eight, "RMA_WRITE after the region");
    rma(wire::kAmRmaWrite, {{key + 7, region, 8}}, 8, 1, eight, "RMA_WRITE forged key");
    rma(wire::kAmRmaWrite, {{key, region, 8}, {key, region - 64, 8}}, 16, 2,
        std::vector<uint8_t>(16, 0x66), "RMA_WRITE, second segment before the region");
    // A fragment of a 2^62-byte write: beyond any message, dropped as malformed (unanswered).
    rma(wire::kAmRmaWrite, {{key, region, uint64_t{1} << 62}}, uint64_t{1} << 62, 1, eight, nullptr);
    // Inconsistent: dropped as malformed (no answer expected).
    rma(wire::kAmRmaWrite, {{key, region, 8}}, 8, 0, eight, nullptr);     // no segments
    rma(wire::kAmRmaWrite, {{key, region, 8}}, 8, 500, eight, nullptr);   // more than sent
    rma(wire::kAmRmaWrite, {{key, region, 8}}, 16, 1, eight, nullptr);    // total != lengths
    rma(wire::kAmRmaReadReq, {{key, region - 16, 32}}, 32, 1, {}, "RMA_READ_REQ across the start");
    rma(wire::kAmRmaReadReq, {{key + 1, region, 8}}, 8, 1, {}, "RMA_READ_REQ forged key");
    rma(wire::kAmRmaReadReq, {{key, UINT64_MAX - 7, 16}}, 16, 1, {}, "RMA_READ_REQ wrapping");
    const uint64_t read_id = rma(wire::kAmRmaReadReq, {{key, region, 64}}, 64, 1, {}, nullptr);

    // Atomics.
    auto atomic = [&](uint64_t mr_key, uint64_t addr, uint8_t op, uint8_t type, uint32_t count,
                      const char *what) {
        wire::AtomicHdr h{};
        h.src = src;
        h.id = next_id;
        h.count = count;
        h.op = op;
        h.datatype = type;
        h.kind = 0;
        h.segments = 1;
        const wire::RmaSeg seg{mr_key, addr, uint64_t{count} * 8};
        std::vector<uint8_t> msg = join(h, seg);
        // (The operand of at most 4 elements: a claim of more is the target's to refuse.)
        const std::vector<uint8_t> operand(size_t{std::min(count, 4u)} * 8, 1);
        append(msg, operand.data(), operand.size());
        send_am(u, wire::kAmAtomic, msg.data(), msg.size());
        if (what) expect_refused[next_id] = what;
        return next_id++;
    };
    atomic(key + 3, region, FI_SUM, FI_UINT64, 1, "atomic, forged key");
    atomic(key, region + region_len, FI_SUM, FI_UINT64, 1, "atomic after the region");
    atomic(key, region - 8, FI_SUM, FI_UINT64, 2, "atomic across the start");
    atomic(key, region, 200, FI_UINT64, 1, "atomic, no such op");
    atomic(key, region, FI_SUM, 200, 1, "atomic, no such datatype");
    atomic(key, region, FI_SUM, FI_UINT64, 1u << 30, "atomic, a billion elements");

    mark("accesses sent");
    if (!wait_until(u, [&] {
            return answers.acks.count(control_id) && answers.reads.count(read_id);
        }))
        fail("the control write or read was not answered");
    progress_for(u, std::chrono::milliseconds(500));

    mark("accesses answered");
    // Random bytes under every id, with our real source index where each header keeps it.
    uint64_t phase_c = 0;
    for (int i = 0; i < 20000; ++i) {
        const auto id = static_cast<uint8_t>(2 + rng() % (wire::kAmLast - 1));  // not WIREUP
        auto msg = random_bytes(rng, rng() % (i % 4 == 0 ? 600 : 100));
        const size_t at = (id == wire::kAmEager || id == wire::kAmEagerFirst || id == wire::kAmRts)
                              ? offsetof(wire::EagerHdr, src)
                              : 0;
        if (rng() % 2 == 0 && msg.size() >= at + 4) std::memcpy(msg.data() + at, &src, 4);
        send_am(u, id, msg.data(), msg.size());
        ++phase_c;
    }
    progress_for(u, std::chrono::milliseconds(500));

    mark("phase C sent");

    // The probe of what UCT's tcp allows below ufi (docs/security.md): a PUT of UCT's own
    // protocol to an address of the target's that no memory region covers, no key involved.
    if (argc == 8) {
        const uint64_t victim = std::strtoull(argv[7], nullptr, 0);
        static const uint64_t probe = 0x5a5a5a5a5a5a5a5aull;
        uct_iov_t iov{};
        iov.buffer = const_cast<uint64_t *>(&probe);
        iov.length = sizeof probe;
        iov.memh = UCT_MEM_HANDLE_NULL;
        iov.count = 1;
        struct Done {
            uct_completion_t c;
            bool done = false;
            ucs_status_t status = UCS_OK;
        } d;
        d.c.func = [](uct_completion_t *c) {
            auto *dd = reinterpret_cast<Done *>(c);
            dd->done = true;
            dd->status = c->status;
        };
        d.c.count = 1;
        d.c.status = UCS_OK;
        ucs_status_t st = UCS_ERR_UNSUPPORTED;
        if (u.put_zcopy) {
            st = uct_ep_put_zcopy(u.ep, &iov, 1, victim, 0, &d.c);
            if (st == UCS_INPROGRESS) {
                wait_until(u, [&] { return d.done; });
                st = d.done ? d.status : UCS_ERR_TIMED_OUT;
            }
            // Our PUT completes locally once sent; the target's writes follow with its progress.
            progress_for(u, std::chrono::milliseconds(300));
        }
        std::printf("put_probe %s\n", ucs_status_string(st));
    }
    // The report.
    int refused = 0, refused_missing = 0;
    for (const auto &[id, what] : expect_refused) {
        int32_t status = 1;
        if (auto a = answers.acks.find(id); a != answers.acks.end()) status = a->second;
        if (auto r = answers.reads.find(id); r != answers.reads.end()) status = r->second;
        if (auto t = answers.atomics.find(id); t != answers.atomics.end()) status = t->second;
        if (status < 0) {
            ++refused;
        } else {
            ++refused_missing;
            std::printf("not_refused %s (status %d)\n", what.c_str(), status);
        }
    }
    const auto &rb = answers.read_bytes[read_id];
    uint64_t first = 0;
    if (rb.size() >= 8) std::memcpy(&first, rb.data(), 8);
    std::printf("phase_a_messages %" PRIu64 "\n", phase_a);
    std::printf("malformed_requests %" PRIu64 "\n", malformed_requests);
    std::printf("refusals_bad_version %d\n", answers.refusals[wire::kWireupBadVersion]);
    std::printf("refusals_bad_key %d\n", answers.refusals[wire::kWireupBadKey]);
    std::printf("refusals_for_malformed %d\n", refusals_after - refusals_before);
    std::printf("my_index %u\n", src);
    std::printf("control_write_status %d\n", answers.acks[control_id]);
    std::printf("control_read_status %d\n", answers.reads[read_id]);
    std::printf("control_read_bytes %zu\n", rb.size());
    std::printf("control_read_first %s\n", first == control ? "matches" : "differs");
    std::printf("accesses_refused %d\n", refused);
    std::printf("accesses_not_refused %d\n", refused_missing);
    std::printf("phase_c_messages %" PRIu64 "\n", phase_c);
    std::printf("messages_sent %" PRIu64 "\n", sent);
    std::fflush(stdout);
    uct_ep_destroy(u.ep);
    uct_iface_close(u.iface);
    uct_md_close(u.md);
    uct_worker_destroy(u.worker);
    ucs_async_context_destroy(u.async);
    mark("closed");
    return 0;
}
