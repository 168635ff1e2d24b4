// A peer's address record as the UCT calls take it (connect, is_reachable): its device and
// iface addresses, never NULL (UCT reads an empty one as 0 bytes from a valid pointer).
#pragma once

#include "transports/address.h"
#include "transports/iface/net_namespace.h"

#include <uct/api/uct.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace ufi::transports {

// A peer record's device address as an iface whose own carries the network namespace's mark
// `mark` (OpenIface::ns_mark; 0: none) reads it: that mark taken off (net_namespace.h), so a
// peer of another network namespace reads as another host. A copy: it lives as long as this.
class PeerDeviceAddr {
  public:
    PeerDeviceAddr(const address::TransportRecord &r, uint64_t mark) noexcept {
        const size_t n = std::min(r.device_addr.size(), bytes_.size());
        if (n > 0) std::memcpy(bytes_.data(), r.device_addr.data(), n);
        apply_namespace_mark(std::span<uint8_t>(bytes_.data(), n), mark);
    }
    const uct_device_addr_t *get() const noexcept {
        return reinterpret_cast<const uct_device_addr_t *>(bytes_.data());
    }

  private:
    std::array<uint8_t, 256> bytes_{};  // (records hold at most 255 bytes)
};

inline const uct_iface_addr_t *iface_addr_of(const address::TransportRecord &r) noexcept {
    static const uint8_t kEmpty[8] = {};
    return reinterpret_cast<const uct_iface_addr_t *>(r.iface_addr.empty() ? kEmpty
                                                                           : r.iface_addr.data());
}

}  // namespace ufi::transports
