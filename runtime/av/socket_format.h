// libfabric's socket-address formats (FI_SOCKADDR_IN, FI_SOCKADDR_IN6, FI_SOCKADDR) over ufi's
// address blobs: a socket address names a tcp listener (ip and port), which ufi reaches as a
// host-and-port peer (transports/address_svc.h; its identity and full address come with the
// handshake). An endpoint's own name in these formats is its tcp iface's IP and port.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/socket.h>
#include <string>
#include <vector>

namespace ufi::runtime::av {

// FI_SOCKADDR, FI_SOCKADDR_IN or FI_SOCKADDR_IN6.
bool is_socket_format(uint32_t format) noexcept;

// The socket address (sizeof sockaddr_in or sockaddr_in6 bytes) that blob's tcp record names,
// in `format` (FI_SOCKADDR takes the first tcp record of either family); empty when it has no
// such record.
std::vector<uint8_t> socket_bytes(const uint8_t *blob, size_t len, uint32_t format);
// The same into `out` without allocating (fi_av_lookup): its length, 0 when none. The blob
// is one validated before (an AV entry, an endpoint's own name).
socklen_t socket_of_blob(const uint8_t *blob, size_t len, uint32_t format,
                         sockaddr_storage &out) noexcept;

// A socket address in `format` (at most `avail` bytes read) as a host-and-port blob; the bytes
// it took, or 0 with `why`.
size_t blob_of_socket(const void *addr, size_t avail, uint32_t format, std::vector<uint8_t> &blob,
                      std::string &why);

// "fi_sockaddr_in://192.0.2.1:4000" / "fi_sockaddr_in6://[::1]:4000", as libfabric prints
// socket addresses (fi_av_straddr).
std::string socket_string(const void *addr, size_t len);

}  // namespace ufi::runtime::av
