// A domain as fi_getinfo offers it: the facts about one transport selection (from
// transports/selection) that fi_info attributes are derived from. Plain data, so hint
// matching and attribute derivation are tested on synthetic offers.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ufi::runtime::info {

struct DomainOffer {
    std::string name;         // domain_attr->name: the network device ("eth0", "mlx5_0:1", "lo") or "shm"
    std::string description;  // e.g. "shm(posix,sysv,cma,self)+tcp/eth0"
    std::string net_device;   // empty for the shared-memory-only domain
    bool reaches_local = false;   // same-host peers (shared memory, self, loopback)
    bool reaches_remote = false;  // other hosts (a non-loopback network device)
    std::vector<std::string> ip_addrs;  // addresses of net_device (FI_SOURCE / node matching)
    std::vector<size_t> resources;      // indices into the discovery's resource list
    bool has_tcp = false;  // a tcp transport on net_device: reachable by host and port

    // Derived limits (see provider_info.cpp for how each is computed from UCT attributes).
    size_t inject_size = 0;
    size_t max_msg_size = 0;
    // FI_EP_DGRAM: the largest message one active message carries on every transport of the
    // domain (a datagram is never split): its max_msg_size.
    size_t datagram_size = 0;
    size_t iov_limit = 0;
    size_t rma_iov_limit = 0;
    // Every address of the domain is this long (transports/address.h: records, zero padding):
    // fi_getname's addrlen and the stride of fi_av_insert's address array. At most
    // FI_NAME_MAX (64) unless the first-contact records alone are longer.
    size_t addr_len = 0;
    // The transports whose records an endpoint's name carries (transports/address_name.h);
    // the others are learned at the handshake.
    std::vector<std::string> name_tls;
};

// The offer an open domain serves, or nullptr when `domain` is not one of ufi's open domains
// (fi_getinfo's domain_attr->domain hint). Defined with the domain object
// (runtime/domain/domain.cpp): hint matching sits below the objects it matches against.
const DomainOffer *offer_of_open_domain(const fid_domain *domain) noexcept;

}  // namespace ufi::runtime::info
