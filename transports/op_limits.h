// What a transport resource's operation limits mean for the layers above, in plain numbers:
// the limits hold only where UCT's capability flag for the operation is set, and only
// transports/ may read UCT's flag names (scripts/check-layers.sh).
#pragma once

#include "transports/resource.h"

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace ufi::transports {

// The largest active message one send can carry, UCT's 8-byte AM header included:
// max_short with am_short, else max_bcopy with am_bcopy; nullopt when the transport sends no
// messages (cma, for one).
std::optional<std::size_t> am_send_max(const Resource &r);

// The largest active message one copied send can carry, UCT's 8-byte AM header included:
// max_bcopy with am_bcopy, else max_short with am_short; nullopt when the transport sends no
// messages. (What one datagram can be: FI_EP_DGRAM's max_msg_size.)
std::optional<std::size_t> am_datagram_max(const Resource &r);

// Buffers one zero-copy operation may gather; 0 when the transport has no such operation.
std::size_t am_zcopy_max_iov(const Resource &r);
std::size_t put_zcopy_max_iov(const Resource &r);
std::size_t get_zcopy_max_iov(const Resource &r);

// Every size limit of an operation the resource supports, named as ucx_info shows them
// ("am_short_max", "put_zcopy_max_iov", ...), in a fixed order.
struct SizeLimit {
    std::string_view name;
    std::size_t value = 0;
};
std::vector<SizeLimit> op_size_limits(const Resource &r);

}  // namespace ufi::transports
