// A peer's address record as the UCT calls take it (connect, is_reachable): its device and
// iface addresses, never NULL (UCT reads an empty one as 0 bytes from a valid pointer).
#pragma once

#include "transports/address.h"

#include <uct/api/uct.h>

#include <cstdint>

namespace ufi::transports {

inline const uct_device_addr_t *device_addr_of(const address::TransportRecord &r) noexcept {
    static const uint8_t kEmpty[8] = {};
    return reinterpret_cast<const uct_device_addr_t *>(r.device_addr.empty() ? kEmpty
                                                                             : r.device_addr.data());
}

inline const uct_iface_addr_t *iface_addr_of(const address::TransportRecord &r) noexcept {
    static const uint8_t kEmpty[8] = {};
    return reinterpret_cast<const uct_iface_addr_t *>(r.iface_addr.empty() ? kEmpty
                                                                           : r.iface_addr.data());
}

}  // namespace ufi::transports
