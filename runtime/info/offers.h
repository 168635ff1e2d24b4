// Turns transport discovery and selection into the domains fi_getinfo offers, deriving
// each limit (inject_size, max_msg_size, iov limits) from the UCT attributes found.
#pragma once

#include "runtime/info/domain_offer.h"
#include "transports/resource.h"
#include "transports/selection.h"

#include <string>
#include <vector>

namespace ufi::runtime::info {

struct OfferSet {
    std::vector<DomainOffer> offers;       // best first
    std::vector<std::string> local_addrs;  // every IP address of this host
    std::vector<std::string> notes;        // why resources were left out
};

// One choice of transports/selection as fi_getinfo offers it (pure: tests pass synthetic
// resources):
//   inject_size   = min over the choice's transports with am_short of
//                   am.max_short - 8 (UCT's AM header) - kEagerShortOverhead;
//                   transports with only am_bcopy count with max_bcopy instead
//   max_msg_size  = SSIZE_MAX: ufi fragments every transfer into transport-sized pieces
//                   (am bcopy fragments, zero-copy RMA for rendezvous), so no transport
//                   limit applies; completions report lengths as ssize_t
//   iov_limit     = min am.max_iov over transports with am_zcopy (the zero-copy gather
//                   limit), else kDefaultIovLimit (ufi packs into a bounce buffer)
//   rma_iov_limit = min put/get max_iov over transports with put_zcopy/get_zcopy,
//                   else kDefaultIovLimit
DomainOffer offer_from_choice(const std::vector<transports::Resource> &resources,
                              const transports::DomainChoice &choice);

// From the process's discovery, topology and config (UFI_TLS, UFI_NET_DEVICES).
OfferSet build_offers();

}  // namespace ufi::runtime::info
