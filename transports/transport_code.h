// A transport named by one byte, where ufi's protocol messages say which transport a zero-copy
// operation goes over (rendezvous RTS and RTR, RMA zero copy, put grants): no transport's name
// travels in a data-path message, and the protocols compare codes, never names. The table is
// the same on every ufi of one protocol version (runtime/proto/wire.h, kProtocolVersion) and
// only ever grows at its end.
#pragma once

#include "transports/address.h"

#include <cstdint>
#include <string_view>

namespace ufi::transports {

using TransportCode = uint8_t;
// A transport not in the table: zero copy over it is not offered to peers (its lanes' active
// messages work as any other's).
inline constexpr TransportCode kNoTransport = 0;

TransportCode transport_code(std::string_view tl) noexcept;
// The name of a code ("" for kNoTransport and codes not in the table), for log lines.
std::string_view transport_name(TransportCode code) noexcept;

// Whether a peer's address record is of the transport `code` names.
bool is_transport(const address::TransportRecord &rec, TransportCode code) noexcept;

}  // namespace ufi::transports
