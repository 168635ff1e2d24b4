// fi_tostr / fi_tostr_r: libfabric's output format for every fi_type, safe truncation, and a
// golden comparison with what Debian's libfabric 1.17 `fi_info -v` prints for the same values
// (adjusted by the documented 1.x -> 2.x differences).
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_trigger.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "runtime/info/info_alloc.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string tostr(const void *data, fi_type type) {
    std::vector<char> buf(16384);
    const char *s = fi_tostr_r(buf.data(), buf.size(), data, type);
    EXPECT_EQ(s, buf.data());
    return s != nullptr ? std::string(s) : std::string("<NULL>");
}

template <typename T>
std::string tostr_val(T value, fi_type type) {
    return tostr(&value, type);
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

std::string read_file(const std::string &name) {
    std::ifstream in(std::string(UFI_TOSTR_TEST_DATA) + "/" + name);
    EXPECT_TRUE(in.good()) << name;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

constexpr fi_type kLastType = FI_TYPE_WAIT_OBJ;

// ---------------------------------------------------------------------------------------
// Scalars
// ---------------------------------------------------------------------------------------

TEST(Tostr, FlagSetsAsLibfabricListsThem) {
    EXPECT_EQ(tostr_val<uint64_t>(FI_MSG | FI_TAGGED, FI_TYPE_CAPS), "FI_MSG, FI_TAGGED");
    EXPECT_EQ(tostr_val<uint64_t>(0, FI_TYPE_CAPS), "");
    EXPECT_EQ(
        tostr_val<uint64_t>(FI_INJECT | FI_COMPLETION | FI_TRANSMIT_COMPLETE, FI_TYPE_OP_FLAGS),
        "FI_COMPLETION, FI_INJECT, FI_TRANSMIT_COMPLETE");
    EXPECT_EQ(tostr_val<uint64_t>(FI_CONTEXT | FI_CONTEXT2, FI_TYPE_MODE),
              "FI_CONTEXT, FI_CONTEXT2");
    EXPECT_EQ(tostr_val<uint64_t>(FI_ORDER_SAS | FI_ORDER_RMA_RAW, FI_TYPE_MSG_ORDER),
              "FI_ORDER_SAS, FI_ORDER_RMA_RAW");
    EXPECT_EQ(tostr_val<uint64_t>(FI_SEND | FI_MSG, FI_TYPE_CQ_EVENT_FLAGS), "FI_SEND, FI_MSG");
    EXPECT_EQ(tostr_val<int>(FI_MR_LOCAL | FI_MR_PROV_KEY, FI_TYPE_MR_MODE),
              "FI_MR_LOCAL, FI_MR_PROV_KEY");
}

TEST(Tostr, UnknownBitsAndValues) {
    EXPECT_EQ(tostr_val<uint64_t>(FI_MSG | (1ULL << 63), FI_TYPE_CAPS),
              "FI_MSG, 0x8000000000000000");
    EXPECT_EQ(tostr_val<int>(77, FI_TYPE_EP_TYPE), "Unknown");
    EXPECT_EQ(tostr_val<uint32_t>(9999, FI_TYPE_ADDR_FORMAT), "Unknown");
    EXPECT_EQ(tostr_val<uint32_t>(9999, FI_TYPE_PROTOCOL), "Unknown");
    EXPECT_EQ(tostr_val<int>(-3, FI_TYPE_THREADING), "Unknown");
    EXPECT_EQ(tostr_val<int>(FI_LOG_MAX, FI_TYPE_LOG_LEVEL), "Unknown");
    const int zero = 0;
    EXPECT_EQ(tostr(&zero, static_cast<fi_type>(kLastType + 1)), "Unknown type");
    EXPECT_EQ(tostr(&zero, static_cast<fi_type>(-1)), "Unknown type");
}

TEST(Tostr, Enums) {
    EXPECT_EQ(tostr_val<int>(FI_EP_RDM, FI_TYPE_EP_TYPE), "FI_EP_RDM");
    EXPECT_EQ(tostr_val<uint32_t>(FI_ADDR_STR, FI_TYPE_ADDR_FORMAT), "FI_ADDR_STR");
    EXPECT_EQ(tostr_val<int>(FI_THREAD_SAFE, FI_TYPE_THREADING), "FI_THREAD_SAFE");
    EXPECT_EQ(tostr_val<int>(FI_PROGRESS_AUTO, FI_TYPE_PROGRESS), "FI_PROGRESS_AUTO");
    EXPECT_EQ(tostr_val<uint32_t>(FI_PROTO_UCX, FI_TYPE_PROTOCOL), "FI_PROTO_UCX");
    EXPECT_EQ(tostr_val<int>(FI_AV_MAP, FI_TYPE_AV_TYPE), "FI_AV_MAP");
    EXPECT_EQ(tostr_val<int>(FI_DOUBLE, FI_TYPE_ATOMIC_TYPE), "FI_DOUBLE");
    EXPECT_EQ(tostr_val<int>(FI_MSWAP, FI_TYPE_ATOMIC_OP), "FI_MSWAP");
    EXPECT_EQ(tostr_val<int>(FI_SHUTDOWN, FI_TYPE_EQ_EVENT), "FI_SHUTDOWN");
    EXPECT_EQ(tostr_val<int>(FI_OP_TSEND, FI_TYPE_OP_TYPE), "FI_OP_TSEND");
    EXPECT_EQ(tostr_val<int>(FI_ALLGATHER, FI_TYPE_COLLECTIVE_OP), "FI_ALLGATHER");
    EXPECT_EQ(tostr_val<int>(FI_HMEM_ZE, FI_TYPE_HMEM_IFACE), "FI_HMEM_ZE");
    EXPECT_EQ(tostr_val<int>(FI_CQ_FORMAT_DATA, FI_TYPE_CQ_FORMAT), "FI_CQ_FORMAT_DATA");
    EXPECT_EQ(tostr_val<int>(FI_LOG_INFO, FI_TYPE_LOG_LEVEL), "info");
    EXPECT_EQ(tostr_val<int>(FI_LOG_MR, FI_TYPE_LOG_SUBSYS), "mr");
    EXPECT_EQ(tostr_val<int>(FI_CQ_COND_NONE, FI_TYPE_CQ_WAIT_COND), "FI_CQ_COND_NONE");
    EXPECT_EQ(tostr_val<int>(FI_WAIT_POLLFD, FI_TYPE_WAIT_OBJ), "FI_WAIT_POLLFD");
}

TEST(Tostr, VersionIsTheLibraryVersion) {
    const int unused = 0;
    EXPECT_EQ(tostr(&unused, FI_TYPE_VERSION), "2.7.0");
    char expect[32];
    std::snprintf(expect, sizeof(expect), "%d.%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION,
                  FI_REVISION_VERSION);
    EXPECT_EQ(tostr(&unused, FI_TYPE_VERSION), expect);
}

// ---------------------------------------------------------------------------------------
// Robustness: every type, zeroed input, NULL arguments, truncation
// ---------------------------------------------------------------------------------------

// Large and aligned enough for any struct fi_tostr reads.
struct alignas(16) Zeroed {
    unsigned char bytes[4096] = {};
};

TEST(Tostr, EveryTypeOnZeroedInputPrintsSomething) {
    Zeroed zero;
    for (int t = 0; t <= kLastType; ++t) {
        const std::string s = tostr(&zero, static_cast<fi_type>(t));
        if (t == FI_TYPE_CAPS || t == FI_TYPE_OP_FLAGS || t == FI_TYPE_MSG_ORDER ||
            t == FI_TYPE_MODE || t == FI_TYPE_CQ_EVENT_FLAGS || t == FI_TYPE_MR_MODE) {
            EXPECT_EQ(s, "") << "type " << t;  // no flag set: an empty list
        } else {
            EXPECT_FALSE(s.empty()) << "type " << t;
            EXPECT_NE(s, "Unknown type") << "type " << t;
        }
    }
}

TEST(Tostr, ZeroedInfoPrintsNullAttributes) {
    fi_info info{};
    const std::string s = tostr(&info, FI_TYPE_INFO);
    EXPECT_NE(s.find("    fi_tx_attr: (null)\n"), std::string::npos) << s;
    EXPECT_NE(s.find("    fi_domain_attr: (null)\n"), std::string::npos) << s;
    EXPECT_NE(s.find("    src_addr: (null)\n"), std::string::npos) << s;
    EXPECT_NE(s.find("    handle: (nil)\n"), std::string::npos) << s;
    EXPECT_NE(s.find("    nic: (nil)\n"), std::string::npos) << s;
}

TEST(Tostr, NullArguments) {
    char buf[64];
    const uint64_t caps = FI_MSG;
    EXPECT_EQ(fi_tostr_r(buf, sizeof(buf), nullptr, FI_TYPE_CAPS), nullptr);
    EXPECT_EQ(fi_tostr_r(nullptr, sizeof(buf), &caps, FI_TYPE_CAPS), nullptr);
    EXPECT_EQ(fi_tostr_r(buf, 0, &caps, FI_TYPE_CAPS), nullptr);
    EXPECT_EQ(fi_tostr(nullptr, FI_TYPE_INFO), nullptr);
}

// A tcp;ofi_rxm-like entry, the values of tests/unit/tostr/debian-1.17-tcp-rxm-lo.txt.
struct TcpInfo {
    fi_tx_attr tx{};
    fi_rx_attr rx{};
    fi_ep_attr ep{};
    fi_domain_attr dom{};
    fi_fabric_attr fab{};
    sockaddr_in sin{};
    char dom_name[8] = "lo";
    char fab_name[16] = "127.0.0.1/32";
    char prov_name[16] = "tcp;ofi_rxm";
    fi_info info{};

    TcpInfo() {
        const uint64_t order = FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | FI_ORDER_WAW |
                               FI_ORDER_WAS | FI_ORDER_SAW | FI_ORDER_SAS | FI_ORDER_RMA_RAR |
                               FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_RAR |
                               FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAW;
        info.caps = FI_MSG | FI_RMA | FI_TAGGED | FI_READ | FI_WRITE | FI_RECV | FI_SEND |
                    FI_REMOTE_READ | FI_REMOTE_WRITE | FI_MULTI_RECV | FI_LOCAL_COMM;
        info.mode = 0;  // 1.17 says FI_BUFFERED_RECV, a mode bit 2.x no longer has
        info.addr_format = FI_SOCKADDR_IN;
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sin.sin_port = 0;
        info.src_addrlen = sizeof(sin);
        info.src_addr = &sin;

        tx.caps = FI_MSG | FI_RMA | FI_TAGGED | FI_READ | FI_WRITE | FI_SEND;
        tx.msg_order = order;
        tx.comp_order = FI_ORDER_NONE;
        tx.inject_size = 64;
        tx.size = 2048;
        tx.iov_limit = 4;
        tx.rma_iov_limit = 4;

        rx.caps = FI_MSG | FI_RMA | FI_TAGGED | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE |
                  FI_MULTI_RECV;
        rx.msg_order = order;
        rx.size = 2048;
        rx.iov_limit = 4;

        ep.type = FI_EP_RDM;
        ep.protocol = FI_PROTO_RXM;
        ep.protocol_version = 1;
        ep.max_msg_size = SIZE_MAX;
        ep.max_order_raw_size = SIZE_MAX;
        ep.max_order_waw_size = SIZE_MAX;
        ep.mem_tag_format = 0xaaaaaaaaaaaaaaaaULL;
        ep.tx_ctx_cnt = 1;
        ep.rx_ctx_cnt = 1;

        dom.name = dom_name;
        dom.threading = FI_THREAD_SAFE;
        dom.control_progress = FI_PROGRESS_AUTO;
        dom.data_progress = FI_PROGRESS_MANUAL;
        dom.resource_mgmt = FI_RM_ENABLED;
        dom.av_type = FI_AV_UNSPEC;
        dom.mr_key_size = 8;
        dom.cq_data_size = 8;
        dom.cq_cnt = 65536;
        dom.ep_cnt = 32768;
        dom.tx_ctx_cnt = 1;
        dom.rx_ctx_cnt = 1;
        dom.max_ep_tx_ctx = 1;
        dom.max_ep_rx_ctx = 1;
        dom.mr_iov_limit = 1;
        dom.caps = FI_LOCAL_COMM;
        // 2.x fields (not in the 1.17 text).
        dom.max_ep_auth_key = 1;
        dom.max_group_id = 0;
        dom.max_cntr_value = UINT64_MAX;
        dom.max_err_cntr_value = UINT64_MAX;
        dom.max_xpu_ctx_cnt = 0;

        fab.name = fab_name;
        fab.prov_name = prov_name;
        fab.prov_version = FI_VERSION(117, 0);
        fab.api_version = FI_VERSION(1, 17);

        info.tx_attr = &tx;
        info.rx_attr = &rx;
        info.ep_attr = &ep;
        info.domain_attr = &dom;
        info.fabric_attr = &fab;
    }
};

TEST(Tostr, TruncationKeepsAPrefixAndTheTerminator) {
    TcpInfo t;
    const std::string full = tostr(&t.info, FI_TYPE_INFO);
    ASSERT_GT(full.size(), 1000u);
    for (size_t len = 1; len <= full.size() + 2; ++len) {
        // Exactly `len` bytes of heap, so that ASan reports any write past them.
        std::vector<char> buf(len, 'X');
        char *s = fi_tostr_r(buf.data(), len, &t.info, FI_TYPE_INFO);
        ASSERT_EQ(s, buf.data());
        const size_t n = strnlen(buf.data(), len);
        ASSERT_LT(n, len) << "not terminated at len " << len;
        ASSERT_EQ(n, std::min(full.size(), len - 1)) << "len " << len;
        ASSERT_EQ(std::string(buf.data(), n), full.substr(0, n)) << "len " << len;
    }
}

TEST(Tostr, TruncationOfScalarsAndFlagLists) {
    const uint64_t caps = FI_MSG | FI_RMA | FI_TAGGED;
    const std::string full = tostr(&caps, FI_TYPE_CAPS);
    for (size_t len = 1; len <= full.size() + 1; ++len) {
        std::vector<char> buf(len, 'X');
        ASSERT_EQ(fi_tostr_r(buf.data(), len, &caps, FI_TYPE_CAPS), buf.data());
        ASSERT_EQ(std::string(buf.data()), full.substr(0, len - 1));
    }
    const int unused = 0;
    char one[1] = {'X'};
    EXPECT_EQ(fi_tostr_r(one, 1, &unused, FI_TYPE_VERSION), one);
    EXPECT_EQ(one[0], '\0');
}

// Stores an out-of-range value into an enum member without an invalid enum load.
template <typename E>
void poke(E &field, int value) {
    static_assert(sizeof(E) == sizeof(int));
    std::memcpy(&field, &value, sizeof(value));
}

TEST(Tostr, UnknownEnumValuesInsideStructs) {
    TcpInfo t;
    poke(t.ep.type, 77);
    poke(t.dom.threading, 77);
    poke(t.dom.data_progress, 77);
    poke(t.dom.resource_mgmt, -1);
    poke(t.dom.av_type, 9);
    const std::string s = tostr(&t.info, FI_TYPE_INFO);
    EXPECT_NE(s.find("        type: Unknown\n"), std::string::npos) << s;
    EXPECT_NE(s.find("        threading: Unknown\n        progress: Unknown\n"
                     "        resource_mgmt: Unknown\n        av_type: Unknown\n"),
              std::string::npos)
        << s;

    fi_cq_attr cq{};
    poke(cq.format, 50);
    poke(cq.wait_obj, 50);
    poke(cq.wait_cond, 50);
    EXPECT_EQ(tostr(&cq, FI_TYPE_CQ_ATTR),
              "fi_cq_attr:\n    size: 0\n    flags: [  ]\n    format: Unknown\n"
              "    wait_obj: Unknown\n    signaling_vector: 0\n    wait_cond: Unknown\n");
}

// ---------------------------------------------------------------------------------------
// fi_info: the golden comparison with Debian's libfabric
// ---------------------------------------------------------------------------------------

// The 2.x text for an entry, from libfabric 1.17's `fi_info -v` text of the same values:
//  - 2.x dropped FI_BUFFERED_RECV (the tests set mode 0 where 1.17 printed it);
//  - tx/rx attrs no longer print comp_order, rx attr no longer total_buffered_recv;
//  - the domain prints one "progress:" (data_progress's value) for control/data_progress;
//  - ufi appends the 2.x domain fields after the domain's tclass.
std::string to_2x(const std::string &libfabric_117, const std::vector<std::string> &new_dom) {
    std::string out;
    bool in_domain = false;
    for (const std::string &l : lines_of(libfabric_117)) {
        std::string line = l;
        if (line.starts_with("    fi_")) in_domain = line == "    fi_domain_attr:";
        if (line == "    mode: [ FI_BUFFERED_RECV ]") line = "    mode: [  ]";
        if (line.starts_with("        comp_order: ") ||
            line.starts_with("        total_buffered_recv: ") ||
            line.starts_with("        control_progress: ")) {
            continue;
        }
        if (line.starts_with("        data_progress: ")) {
            line = "        progress: " + line.substr(std::strlen("        data_progress: "));
        }
        out += line + "\n";
        if (in_domain && line.starts_with("        tclass: ")) {
            for (const std::string &d : new_dom) out += "        " + d + "\n";
        }
    }
    return out;
}

TEST(TostrInfo, MatchesLibfabricTcpOutput) {
    TcpInfo t;
    // A caller-built fi_domain_attr may have the 1.x layout: the 2.x fields are not read.
    EXPECT_EQ(tostr(&t.info, FI_TYPE_INFO), to_2x(read_file("debian-1.17-tcp-rxm-lo.txt"), {}));

    // The same values in a struct ufi allocated (fi_getinfo/fi_allocinfo/fi_dupinfo): the 2.x
    // fields follow tclass.
    fi_info *holder = ufi::runtime::info::dup_info(&t.info);
    ASSERT_NE(holder, nullptr);
    fi_info with_owned = t.info;  // the test's own sockaddr etc., ufi's domain_attr
    with_owned.domain_attr = holder->domain_attr;
    const std::string expected =
        to_2x(read_file("debian-1.17-tcp-rxm-lo.txt"),
              {"max_ep_auth_key: 1", "max_group_id: 0", "max_cntr_value: 18446744073709551615",
               "max_err_cntr_value: 18446744073709551615", "max_xpu_ctx_cnt: 0"});
    EXPECT_EQ(tostr(&with_owned, FI_TYPE_INFO), expected);
    ufi::runtime::info::free_info(holder);
}

TEST(TostrInfo, MatchesLibfabricShmOutput) {
    // Values of tests/unit/tostr/debian-1.17-shm.txt (an FI_ADDR_STR provider).
    char addr[] = "fi_shm://12127";
    char shm[] = "shm";
    fi_tx_attr tx{};
    fi_rx_attr rx{};
    fi_ep_attr ep{};
    fi_domain_attr dom{};
    fi_fabric_attr fab{};
    fi_info info{};
    info.caps = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_READ | FI_WRITE | FI_RECV | FI_SEND |
                FI_REMOTE_READ | FI_REMOTE_WRITE | FI_MULTI_RECV | FI_RMA_EVENT | FI_SOURCE |
                FI_DIRECTED_RECV;
    info.addr_format = FI_ADDR_STR;
    info.src_addrlen = info.dest_addrlen = sizeof(addr);
    info.src_addr = info.dest_addr = addr;
    tx.caps = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_READ | FI_WRITE | FI_SEND;
    tx.msg_order = FI_ORDER_SAS;
    tx.inject_size = 4096;
    tx.size = 1024;
    tx.iov_limit = tx.rma_iov_limit = 4;
    rx.caps = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE |
              FI_MULTI_RECV | FI_RMA_EVENT | FI_SOURCE | FI_DIRECTED_RECV;
    rx.msg_order = FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | FI_ORDER_WAR | FI_ORDER_WAW |
                   FI_ORDER_WAS | FI_ORDER_SAR | FI_ORDER_SAW | FI_ORDER_SAS | FI_ORDER_RMA_RAR |
                   FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_RAR |
                   FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
    rx.comp_order = FI_ORDER_STRICT;
    rx.size = 1024;
    rx.iov_limit = 4;
    ep.type = FI_EP_RDM;
    ep.protocol = FI_PROTO_SHM;
    ep.protocol_version = 1;
    ep.max_msg_size = SIZE_MAX;
    ep.mem_tag_format = 0xaaaaaaaaaaaaaaaaULL;
    ep.tx_ctx_cnt = ep.rx_ctx_cnt = 1;
    dom.name = shm;
    dom.threading = FI_THREAD_SAFE;
    dom.control_progress = FI_PROGRESS_AUTO;
    dom.data_progress = FI_PROGRESS_MANUAL;
    dom.resource_mgmt = FI_RM_ENABLED;
    dom.mr_mode = FI_MR_VIRT_ADDR;
    dom.mr_key_size = dom.cq_data_size = 8;
    dom.cq_cnt = dom.tx_ctx_cnt = dom.rx_ctx_cnt = 1024;
    dom.ep_cnt = 256;
    dom.max_ep_tx_ctx = dom.max_ep_rx_ctx = 1;
    dom.mr_iov_limit = 4;
    fab.name = fab.prov_name = shm;
    fab.prov_version = FI_VERSION(117, 0);
    fab.api_version = FI_VERSION(1, 17);
    info.tx_attr = &tx;
    info.rx_attr = &rx;
    info.ep_attr = &ep;
    info.domain_attr = &dom;
    info.fabric_attr = &fab;

    EXPECT_EQ(tostr(&info, FI_TYPE_INFO), to_2x(read_file("debian-1.17-shm.txt"), {}));
}

TEST(TostrInfo, NestingOfKeyLines) {
    TcpInfo t;
    const std::vector<std::string> got = lines_of(tostr(&t.info, FI_TYPE_INFO));
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got.front(), "fi_info:");
    EXPECT_EQ(got.back(), "    nic: (nil)");
    auto index_of = [&](const std::string &l) {
        for (size_t i = 0; i < got.size(); ++i)
            if (got[i] == l) return static_cast<long>(i);
        return -1L;
    };
    const long tx = index_of("    fi_tx_attr:");
    const long rx = index_of("    fi_rx_attr:");
    const long ep = index_of("    fi_ep_attr:");
    const long dom = index_of("    fi_domain_attr:");
    const long fab = index_of("    fi_fabric_attr:");
    ASSERT_GE(tx, 0);
    EXPECT_LT(tx, rx);
    EXPECT_LT(rx, ep);
    EXPECT_LT(ep, dom);
    EXPECT_LT(dom, fab);
    EXPECT_EQ(got[tx + 1],
              "        caps: [ FI_MSG, FI_RMA, FI_TAGGED, FI_READ, FI_WRITE, FI_SEND ]");
    EXPECT_EQ(got[ep + 1], "        type: FI_EP_RDM");
    EXPECT_EQ(got[dom + 3], "        threading: FI_THREAD_SAFE");
    EXPECT_EQ(got[dom + 4], "        progress: FI_PROGRESS_MANUAL");
    EXPECT_EQ(got[fab + 2], "        prov_name: tcp;ofi_rxm");
    EXPECT_NE(index_of("    src_addr: fi_sockaddr_in://127.0.0.1:0"), -1);
    EXPECT_NE(index_of("    addr_format: FI_SOCKADDR_IN"), -1);
    // Every line is either a "key: value", a "key:" header, and indented by 4s.
    for (const std::string &l : got) {
        const size_t indent = l.find_first_not_of(' ');
        EXPECT_EQ(indent % 4, 0u) << l;
        EXPECT_NE(l.find(':'), std::string::npos) << l;
    }
}

TEST(TostrInfo, AttributesOnTheirOwnPrintAtTopLevel) {
    TcpInfo t;
    const std::string tx = tostr(&t.tx, FI_TYPE_TX_ATTR);
    EXPECT_TRUE(tx.starts_with("fi_tx_attr:\n    caps: [ FI_MSG, FI_RMA")) << tx;
    EXPECT_NE(tx.find("\n    tclass: 0x0\n"), std::string::npos) << tx;
    const std::string dom = tostr(&t.dom, FI_TYPE_DOMAIN_ATTR);
    EXPECT_TRUE(dom.starts_with("fi_domain_attr:\n    domain: 0x0\n    name: lo\n")) << dom;
    EXPECT_EQ(dom.find("max_ep_auth_key"), std::string::npos) << "a caller's struct may be 1.x-sized";
    fi_info *owned = ufi::runtime::info::dup_info(&t.info);
    ASSERT_NE(owned, nullptr);
    const std::string owned_dom = tostr(owned->domain_attr, FI_TYPE_DOMAIN_ATTR);
    EXPECT_NE(owned_dom.find("\n    max_ep_auth_key: 1\n"), std::string::npos) << owned_dom;
    ufi::runtime::info::free_info(owned);
    const std::string fab = tostr(&t.fab, FI_TYPE_FABRIC_ATTR);
    EXPECT_EQ(fab,
              "fi_fabric_attr:\n    name: 127.0.0.1/32\n    prov_name: tcp;ofi_rxm\n"
              "    prov_version: 117.0\n    api_version: 1.17\n");
    const std::string ep = tostr(&t.ep, FI_TYPE_EP_ATTR);
    EXPECT_NE(ep.find("\n    mem_tag_format: 0xaaaaaaaaaaaaaaaa\n"), std::string::npos) << ep;
    t.ep.tx_ctx_cnt = FI_SHARED_CONTEXT;
    EXPECT_NE(tostr(&t.ep, FI_TYPE_EP_ATTR).find("\n    tx_ctx_cnt: FI_SHARED_CONTEXT\n"),
              std::string::npos);
    const std::string rx = tostr(&t.rx, FI_TYPE_RX_ATTR);
    EXPECT_EQ(rx.find("total_buffered_recv"), std::string::npos) << rx;
    EXPECT_EQ(rx.find("comp_order"), std::string::npos) << rx;
}

// ---------------------------------------------------------------------------------------
// Addresses
// ---------------------------------------------------------------------------------------

std::string addr_line(uint32_t format, void *addr, size_t len) {
    fi_info info{};
    info.addr_format = format;
    info.src_addr = addr;
    info.src_addrlen = len;
    for (const std::string &l : lines_of(tostr(&info, FI_TYPE_INFO)))
        if (l.starts_with("    src_addr: ")) return l.substr(std::strlen("    src_addr: "));
    return "<missing>";
}

TEST(TostrAddr, Sockaddrs) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(4242);
    inet_pton(AF_INET, "1.2.3.4", &sin.sin_addr);
    EXPECT_EQ(addr_line(FI_SOCKADDR_IN, &sin, sizeof(sin)), "fi_sockaddr_in://1.2.3.4:4242");
    EXPECT_EQ(addr_line(FI_SOCKADDR, &sin, sizeof(sin)), "fi_sockaddr_in://1.2.3.4:4242");
    EXPECT_EQ(addr_line(FI_SOCKADDR_IP, &sin, sizeof(sin)), "fi_sockaddr_in://1.2.3.4:4242");

    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(7);
    inet_pton(AF_INET6, "fe80::1", &sin6.sin6_addr);
    EXPECT_EQ(addr_line(FI_SOCKADDR_IN6, &sin6, sizeof(sin6)), "fi_sockaddr_in6://[fe80::1]:7");
    EXPECT_EQ(addr_line(FI_SOCKADDR, &sin6, sizeof(sin6)), "fi_sockaddr_in6://[fe80::1]:7");

    // Too short for its format: dumped (family 2, port 0x1092), never read past its length.
    EXPECT_EQ(addr_line(FI_SOCKADDR_IN, &sin, 4), "fi_sockaddr_in://0x02001092");
}

TEST(TostrAddr, StringsAndOpaqueBlobs) {
    char str[] = "fi_ufi://abc\0garbage";
    EXPECT_EQ(addr_line(FI_ADDR_STR, str, sizeof(str)), "fi_ufi://abc");
    char unterminated[4] = {'a', 'b', 'c', 'd'};
    EXPECT_EQ(addr_line(FI_ADDR_STR, unterminated, sizeof(unterminated)), "abcd");

    unsigned char blob[] = {0x00, 0x01, 0xab, 0xff};
    EXPECT_EQ(addr_line(FI_ADDR_UCX, blob, sizeof(blob)), "fi_addr_ucx://0x0001abff");
    EXPECT_EQ(addr_line(FI_FORMAT_UNSPEC, blob, sizeof(blob)), "fi_format_unspec://0x0001abff");
    EXPECT_EQ(addr_line(12345, blob, sizeof(blob)), "fi_addr_unknown://0x0001abff");

    std::vector<unsigned char> big(300, 0x5a);
    const std::string dump = addr_line(FI_ADDR_UCX, big.data(), big.size());
    std::string hex;
    for (int i = 0; i < 128; ++i) hex += "5a";
    EXPECT_EQ(dump, "fi_addr_ucx://0x" + hex + "...");  // at most 128 bytes shown

    EXPECT_EQ(addr_line(FI_ADDR_UCX, nullptr, 0), "(null)");
}

TEST(TostrAddr, FixedLayoutProviderFormats) {
    uint64_t psmx2[2] = {0x1234, 0xabcd};
    EXPECT_EQ(addr_line(FI_ADDR_PSMX2, psmx2, sizeof(psmx2)), "fi_addr_psmx2://1234:abcd");
    uint64_t opx = 0x42;
    EXPECT_EQ(addr_line(FI_ADDR_OPX, &opx, sizeof(opx)), "fi_addr_opx://0000000000000042");
    uint32_t cxi = 0xbeef;
    EXPECT_EQ(addr_line(FI_ADDR_CXI, &cxi, sizeof(cxi)), "fi_addr_cxi://0x0000beef");
}

// ---------------------------------------------------------------------------------------
// Objects: fid, NIC
// ---------------------------------------------------------------------------------------

int fake_tostr(const fid *, char *buf, size_t len) {
    std::snprintf(buf, len, "my object\n");
    return 0;
}

TEST(TostrFid, PointerOrTheObjectsOwnTostr) {
    fid plain{};
    plain.fclass = FI_CLASS_EP;
    char expect[64];
    std::snprintf(expect, sizeof(expect), "fid: %p\n", static_cast<void *>(&plain));
    EXPECT_EQ(tostr(&plain, FI_TYPE_FID), expect);

    fi_ops ops{};
    ops.size = sizeof(ops);
    ops.tostr = fake_tostr;
    fid custom{};
    custom.fclass = FI_CLASS_EP;
    custom.ops = &ops;
    EXPECT_EQ(tostr(&custom, FI_TYPE_FID), "my object\n");

    // An ops table too short to hold tostr is not called.
    ops.size = offsetof(fi_ops, tostr);
    std::snprintf(expect, sizeof(expect), "fid: %p\n", static_cast<void *>(&custom));
    EXPECT_EQ(tostr(&custom, FI_TYPE_FID), expect);
}

TEST(TostrFid, HandleInInfoUsesTostrOp) {
    fi_ops ops{};
    ops.size = sizeof(ops);
    ops.tostr = fake_tostr;
    fid handle{};
    handle.ops = &ops;
    fi_info info{};
    info.handle = &handle;
    const std::string s = tostr(&info, FI_TYPE_INFO);
    EXPECT_NE(s.find("    dest_addr: (null)\nmy object\n    fi_tx_attr: (null)\n"),
              std::string::npos)
        << s;
}

TEST(TostrFid, Nic) {
    char name[] = "mlx5_0", dev[] = "0x1017", ver[] = "0", vendor[] = "0x15b3";
    char driver[] = "mlx5_core", addr[] = "fe80::1", net[] = "InfiniBand";
    fi_device_attr dattr{name, dev, ver, vendor, driver, nullptr};
    fi_bus_attr battr{};
    battr.bus_type = FI_BUS_PCI;
    battr.attr.pci = {0, 0x3b, 0, 1};
    fi_link_attr lattr{addr, 4096, 100000000000ULL, FI_LINK_UP, net};
    fid_nic nic{};
    nic.fid.fclass = FI_CLASS_NIC;
    nic.device_attr = &dattr;
    nic.bus_attr = &battr;
    nic.link_attr = &lattr;

    fi_info info{};
    info.nic = &nic;
    const std::string s = tostr(&info, FI_TYPE_INFO);
    const std::string expected_nic =
        "    nic:\n"
        "        fi_device_attr:\n"
        "            name: mlx5_0\n"
        "            device_id: 0x1017\n"
        "            device_version: 0\n"
        "            vendor_id: 0x15b3\n"
        "            driver: mlx5_core\n"
        "            firmware: (null)\n"
        "        fi_bus_attr:\n"
        "            bus_type: FI_BUS_PCI\n"
        "            fi_pci_attr:\n"
        "                domain_id: 0\n"
        "                bus_id: 59\n"
        "                device_id: 0\n"
        "                function_id: 1\n"
        "        fi_link_attr:\n"
        "            address: fe80::1\n"
        "            mtu: 4096\n"
        "            speed: 100000000000\n"
        "            state: FI_LINK_UP\n"
        "            network_type: InfiniBand\n";
    ASSERT_GE(s.size(), expected_nic.size());
    EXPECT_EQ(s.substr(s.size() - expected_nic.size()), expected_nic) << s;

    nic.bus_attr = nullptr;
    nic.link_attr = nullptr;
    const std::string partial = tostr(&nic, FI_TYPE_FID);
    EXPECT_NE(partial.find("        fi_bus_attr: (null)\n        fi_link_attr: (null)\n"),
              std::string::npos)
        << partial;
}

// ---------------------------------------------------------------------------------------
// Other attribute structs
// ---------------------------------------------------------------------------------------

TEST(TostrAttrs, AvCqMrCntrAndErrEntry) {
    fi_av_attr av{};
    av.type = FI_AV_TABLE;
    av.count = 64;
    av.flags = FI_SYMMETRIC;
    EXPECT_EQ(tostr(&av, FI_TYPE_AV_ATTR),
              "fi_av_attr:\n    type: FI_AV_TABLE\n    count: 64\n    ep_per_node: 0\n"
              "    name: (null)\n    flags: [ FI_SYMMETRIC ]\n");

    fi_cq_attr cq{};
    cq.size = 128;
    cq.format = FI_CQ_FORMAT_TAGGED;
    cq.wait_obj = FI_WAIT_FD;
    cq.signaling_vector = -1;
    EXPECT_EQ(tostr(&cq, FI_TYPE_CQ_ATTR),
              "fi_cq_attr:\n    size: 128\n    flags: [  ]\n    format: FI_CQ_FORMAT_TAGGED\n"
              "    wait_obj: FI_WAIT_FD\n    signaling_vector: -1\n"
              "    wait_cond: FI_CQ_COND_NONE\n");

    fi_mr_attr mr{};
    mr.iov_count = 1;
    mr.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
    mr.requested_key = 0x10;
    mr.iface = FI_HMEM_CUDA;
    EXPECT_EQ(tostr(&mr, FI_TYPE_MR_ATTR),
              "fi_mr_attr:\n    mr_iov: (nil)\n    iov_count: 1\n"
              "    access: [ FI_REMOTE_READ, FI_REMOTE_WRITE ]\n    offset: 0x0\n"
              "    requested_key: 0x10\n    context: (nil)\n    auth_key_size: 0\n"
              "    iface: FI_HMEM_CUDA\n");

    fi_cntr_attr cntr{};
    cntr.events = FI_CNTR_EVENTS_BYTES;
    cntr.wait_obj = FI_WAIT_UNSPEC;
    cntr.flags = 0x3;
    EXPECT_EQ(tostr(&cntr, FI_TYPE_CNTR_ATTR),
              "fi_cntr_attr:\n    events: FI_CNTR_EVENTS_BYTES\n    wait_obj: FI_WAIT_UNSPEC\n"
              "    flags: 0x3\n");

    fi_cq_err_entry err{};
    err.flags = FI_RECV;
    err.len = 10;
    err.data = 7;
    err.tag = 0xff;
    err.olen = 3;
    err.err = FI_ETRUNC;
    err.prov_errno = -5;
    EXPECT_EQ(tostr(&err, FI_TYPE_CQ_ERR_ENTRY),
              "fi_cq_err_entry:\n    op_context: (nil)\n    flags: 0x400\n    len: 10\n"
              "    buf: (nil)\n    data: 7\n    tag: 0xff\n    olen: 3\n    err: " +
                  std::to_string(FI_ETRUNC) +
                  "\n    prov_errno: -5\n    err_data: (nil)\n    err_data_size: 0\n");
}

// ---------------------------------------------------------------------------------------
// fi_tostr's own buffer
// ---------------------------------------------------------------------------------------

TEST(TostrStatic, PerThreadBuffer) {
    const uint64_t caps = FI_MSG;
    char *mine = fi_tostr(&caps, FI_TYPE_CAPS);
    ASSERT_NE(mine, nullptr);
    EXPECT_STREQ(mine, "FI_MSG");
    // Same thread: same buffer, overwritten by the next call.
    const uint64_t rma = FI_RMA;
    EXPECT_EQ(fi_tostr(&rma, FI_TYPE_CAPS), mine);
    EXPECT_STREQ(mine, "FI_RMA");

    char *theirs = nullptr;
    std::string their_text;
    std::thread([&] {
        const uint64_t tagged = FI_TAGGED;
        theirs = fi_tostr(&tagged, FI_TYPE_CAPS);
        their_text = theirs != nullptr ? theirs : "";
    }).join();
    EXPECT_NE(theirs, mine);
    EXPECT_EQ(their_text, "FI_TAGGED");
    EXPECT_STREQ(mine, "FI_RMA");
}

TEST(TostrStatic, LargeInfoFitsLibfabricsBuffer) {
    TcpInfo t;
    const char *s = fi_tostr(&t.info, FI_TYPE_INFO);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(std::string(s), tostr(&t.info, FI_TYPE_INFO));
}

}  // namespace
