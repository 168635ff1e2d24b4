// Helpers shared by the info tests: an owning fi_info pointer and this machine's offers.
#pragma once

#include "runtime/info/domain_offer.h"
#include "runtime/info/info_alloc.h"

#include <rdma/fabric.h>

#include <memory>

namespace ufi::runtime::info::testing {

struct InfoDeleter {
    void operator()(fi_info *i) const { free_info(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

inline DomainOffer eth0_offer() {
    DomainOffer o;
    o.name = "eth0";
    o.description = "shm(posix,sysv,cma,self)+tcp/eth0";
    o.net_device = "eth0";
    o.reaches_local = true;
    o.reaches_remote = true;
    o.ip_addrs = {"192.0.2.2", "fd00::2"};
    o.has_tcp = true;
    o.inject_size = 76;
    o.max_msg_size = 1ULL << 40;
    o.iov_limit = 6;
    o.rma_iov_limit = 6;
    o.addr_len = 120;  // as this machine's eth0 domain measures
    return o;
}

inline DomainOffer lo_offer() {
    DomainOffer o = eth0_offer();
    o.name = "lo";
    o.description = "shm(posix,sysv,cma,self)+tcp/lo";
    o.net_device = "lo";
    o.reaches_remote = false;
    o.ip_addrs = {"127.0.0.1", "::1"};
    o.addr_len = 128;  // tcp's loopback device address carries a namespace id
    return o;
}

inline DomainOffer shm_offer() {
    DomainOffer o = eth0_offer();
    o.name = "shm";
    o.description = "shm(posix,sysv,cma,self)";
    o.net_device.clear();
    o.reaches_remote = false;
    o.ip_addrs.clear();
    o.has_tcp = false;
    o.iov_limit = 16;
    o.rma_iov_limit = 16;
    o.addr_len = 104;
    return o;
}

}  // namespace ufi::runtime::info::testing
