#include "synthetic_resources.h"

#include <uct/api/uct.h>

#include <cstdint>

namespace ufi::transports::testing {

namespace {

constexpr std::uint64_t kCpuAtomics = UCS_BIT(UCT_ATOMIC_OP_ADD) | UCS_BIT(UCT_ATOMIC_OP_AND) |
                                      UCS_BIT(UCT_ATOMIC_OP_OR) | UCS_BIT(UCT_ATOMIC_OP_XOR);
constexpr std::uint64_t kCpuFetchAtomics =
    kCpuAtomics | UCS_BIT(UCT_ATOMIC_OP_SWAP) | UCS_BIT(UCT_ATOMIC_OP_CSWAP);

Resource base(const std::string &component, const std::string &md, const std::string &tl,
              const std::string &dev, DeviceType type) {
    Resource r;
    r.component = component;
    r.md = md;
    r.tl = tl;
    r.dev = dev;
    r.type = type;
    r.usable = true;
    r.perf.max_num_eps = SIZE_MAX;
    return r;
}

}  // namespace

Resource self_resource() {
    Resource r = base("self", "self", "self", "memory0", DeviceType::Loopback);
    r.iface_cap_flags = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY | UCT_IFACE_FLAG_PENDING |
                        UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
                        UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_ATOMIC_CPU |
                        UCT_IFACE_FLAG_EP_CHECK | UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                        UCT_IFACE_FLAG_CB_SYNC;
    r.limits.am.max_short = 8192;
    r.limits.am.max_bcopy = 8192;
    r.limits.atomic64 = {kCpuAtomics, kCpuFetchAtomics};
    r.limits.atomic32 = r.limits.atomic64;
    r.perf.overhead_s = 10e-9;
    r.perf.bandwidth_dedicated = 7.25e9;
    r.iface_addr_len = 8;
    r.md_cap_flags = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY;
    return r;
}

Resource shm_resource(const std::string &tl) {
    Resource r = base(tl, tl, tl, "memory", DeviceType::SharedMemory);
    if (tl == "cma") {
        r.iface_cap_flags = UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_PUT_ZCOPY |
                            UCT_IFACE_FLAG_GET_ZCOPY | UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                            UCT_IFACE_FLAG_EP_CHECK | UCT_IFACE_FLAG_CONNECT_TO_IFACE;
        r.limits.put.max_iov = 16;
        r.limits.get.max_iov = 16;
        r.perf.latency_s = 80e-9;
        r.perf.overhead_s = 2e-6;
        r.perf.bandwidth_dedicated = 11.69e9;
        r.md_cap_flags = UCT_MD_FLAG_REG;
        r.device_addr_len = 8;
        r.iface_addr_len = 4;
        return r;
    }
    r.iface_cap_flags = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY | UCT_IFACE_FLAG_PENDING |
                        UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
                        UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_ATOMIC_CPU |
                        UCT_IFACE_FLAG_EP_CHECK | UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                        UCT_IFACE_FLAG_CB_SYNC;
    r.event_flags =
        UCT_IFACE_FLAG_EVENT_SEND_COMP | UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_FD;
    r.limits.am.max_short = 100;
    r.limits.am.max_bcopy = 8256;
    r.limits.atomic64 = {kCpuAtomics, kCpuFetchAtomics};
    r.limits.atomic32 = r.limits.atomic64;
    r.perf.latency_s = 80e-9;
    r.perf.overhead_s = 10e-9;
    r.perf.bandwidth_dedicated = 12.77e9;
    r.md_cap_flags =
        UCT_MD_FLAG_ALLOC | UCT_MD_FLAG_NEED_RKEY | UCT_MD_FLAG_FIXED | UCT_MD_FLAG_RKEY_PTR;
    r.rkey_packed_size = tl == "posix" ? 24 : 12;
    r.device_addr_len = 8;
    r.iface_addr_len = 8;
    return r;
}

Resource tcp_resource(const std::string &dev, bool loopback, double bandwidth_shared) {
    Resource r = base("tcp", "tcp", "tcp", dev, DeviceType::Network);
    r.iface_cap_flags =
        UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY | UCT_IFACE_FLAG_AM_ZCOPY |
        UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
        UCT_IFACE_FLAG_EP_CHECK | UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_CONNECT_TO_EP |
        UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_EP_KEEPALIVE;
    r.event_flags =
        UCT_IFACE_FLAG_EVENT_SEND_COMP | UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_FD;
    r.limits.am = {8192, 8192, 0, 65536, 1, 0, 8037, 6};
    r.limits.put.max_zcopy = SIZE_MAX - 25;
    r.limits.put.max_iov = 6;
    r.perf.latency_s = 10.96e-6;
    r.perf.overhead_s = 50e-6;
    r.perf.bandwidth_shared = bandwidth_shared;
    r.perf.priority = loopback ? 1 : 0;
    r.perf.max_num_eps = 256;
    r.is_loopback_netdev = loopback;
    r.netdev = dev;
    r.device_addr_len = loopback ? 18 : 6;
    r.iface_addr_len = 2;
    r.ep_addr_len = 10;
    r.md_cap_flags = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_RKEY;
    return r;
}

Resource ib_resource(const std::string &tl, const std::string &dev) {
    std::string md = dev.substr(0, dev.find(':'));
    Resource r = base("ib", md, tl, dev, DeviceType::Network);
    bool rc = tl.rfind("rc_", 0) == 0;
    bool dc = tl.rfind("dc_", 0) == 0;
    std::uint64_t flags = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                          UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PENDING |
                          UCT_IFACE_FLAG_CB_SYNC | UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;
    if (rc || dc) {
        flags |= UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                 UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY | UCT_IFACE_FLAG_ATOMIC_DEVICE;
        r.limits.atomic64 = {kCpuAtomics, kCpuFetchAtomics};
    } else {
        flags |= UCT_IFACE_FLAG_CB_ASYNC;
    }
    flags |= rc ? UCT_IFACE_FLAG_CONNECT_TO_EP : UCT_IFACE_FLAG_CONNECT_TO_IFACE;
    r.iface_cap_flags = flags;
    r.event_flags =
        UCT_IFACE_FLAG_EVENT_SEND_COMP | UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_FD;
    r.limits.am = {124, 8256, 0, 8256, 512, 4096, 128, 8};
    r.perf.latency_s = dc ? 660e-9 : (rc ? 600e-9 : 630e-9);
    r.perf.latency_per_ep_s = rc ? 1e-9 : 0;
    r.perf.overhead_s = 40e-9;
    r.perf.bandwidth_dedicated = 11.5e9;  // HDR100 after protocol overhead
    r.perf.max_num_eps = rc ? 65536 : SIZE_MAX;
    r.device_addr_len = 3;
    r.iface_addr_len = rc ? 0 : 3;
    r.ep_addr_len = rc ? 7 : 0;
    r.md_cap_flags = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_MEMH | UCT_MD_FLAG_NEED_RKEY |
                     UCT_MD_FLAG_ADVISE | UCT_MD_FLAG_INVALIDATE;
    r.rkey_packed_size = 18;
    r.reg_cost_c = 16e-6;
    r.reg_cost_m = 0.06e-9;
    r.netdev = "ib" + md.substr(md.find('_') + 1);
    return r;
}

Resource cuda_copy_resource() {
    Resource r = base("cuda_cpy", "cuda_cpy", "cuda_copy", "cuda", DeviceType::Accelerator);
    r.iface_cap_flags = UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_GET_SHORT |
                        UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                        UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_PENDING;
    r.perf.latency_s = 8e-6;
    r.perf.overhead_s = 0;
    r.perf.bandwidth_dedicated = 10e9;
    r.md_cap_flags = UCT_MD_FLAG_REG | UCT_MD_FLAG_ALLOC;
    return r;
}

std::vector<Resource> this_machine_resources() {
    return {self_resource(),      tcp_resource("lo", true), tcp_resource("eth0", false, 11.8e6),
            shm_resource("sysv"), shm_resource("posix"),    shm_resource("cma")};
}

std::vector<Resource> ib_node_resources() {
    std::vector<Resource> r = {self_resource(), shm_resource("posix"), shm_resource("sysv"),
                               shm_resource("cma")};
    for (int i = 0; i < 4; ++i) {
        std::string dev = "mlx5_" + std::to_string(i) + ":1";
        for (const char *tl : {"rc_mlx5", "dc_mlx5", "ud_mlx5"}) {
            r.push_back(ib_resource(tl, dev));
        }
    }
    for (int i = 0; i < 4; ++i) {
        r.push_back(tcp_resource("ib" + std::to_string(i), false, 12.5e9));
    }
    r.push_back(tcp_resource("eth0", false, 3.125e9));
    r.push_back(tcp_resource("lo", true, 12.5e9));
    return r;
}

std::vector<std::string> labels(const std::vector<Resource> &res,
                                const std::vector<std::size_t> &idx) {
    std::vector<std::string> out;
    for (std::size_t i : idx) {
        out.push_back(res.at(i).label());
    }
    return out;
}

}  // namespace ufi::transports::testing
