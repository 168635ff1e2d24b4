// An endpoint's name: the part of its address that fi_getname hands out and applications
// exchange. Programs hold names in FI_NAME_MAX (64) bytes (Open MPI's OFI MTL and BTL do), so
// a name carries only what a peer needs for first contact: one shared-memory and one network
// transport that connect to an iface and carry active messages (the smallest record of each
// kind: posix and tcp here). Other records go in while the name stays within 64 bytes; those
// that do not fit (cma's zero-copy record, sysv, an RDMA device's rc) and self (which only an
// endpoint itself uses, from its own full address) are left out, and the name says so
// (EndpointAddress::partial): the first contact's handshake then carries the full address,
// and the peer moves to its best lane before its first message (runtime/proto/wireup.cpp).
// See docs/addresses.md.
#pragma once

#include "transports/address.h"
#include "transports/resource.h"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace ufi::transports::address {

inline constexpr size_t kNameBudget = 64;  // FI_NAME_MAX

struct NamePlan {
    std::vector<std::string> tls;       // transports a name carries records of, in domain order
    std::vector<std::string> left_out;  // transports learned at the handshake (self excluded)
    size_t size = 0;                    // the domain's fixed address length (names padded to it)
    // Above kNameBudget when the first-contact records alone do not fit (a long RDMA device
    // address): programs with FI_NAME_MAX buffers cannot hold such names.
    bool over_budget() const noexcept { return size > kNameBudget; }
};

// `resources`: the domain's, in its order (local lanes, then network transports).
NamePlan plan_names(std::span<const Resource *const> resources);

// The name of an endpoint whose full address is `full`: the records of transports in `tls`,
// partial when another record (but self) was left out.
EndpointAddress name_of(const EndpointAddress &full, std::span<const std::string> tls);

}  // namespace ufi::transports::address
