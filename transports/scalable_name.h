// A scalable endpoint's name (fi_scalable_ep): one ordinary ufi name (address.h) per receive
// context, then one per transmit context, behind a header that says how many of each and how
// long each is. Each context drives its own UCT worker, so each has its own transport
// addresses; the name carries them all. It is self-describing, so fi_av_insert can walk an
// array of mixed ordinary and scalable names, and an AV entry keeps the whole of it: fi_rx_addr's
// index picks the receive name a message goes to, and a message from one of the transmit
// contexts is traced back to the entry through its transmit name (FI_SOURCE).
//
// Binary layout, little-endian:
//   0  u8[2] magic "us"      2 u8 version (1)     3 u8 receive names R (1..kMaxContexts)
//   4  u8 transmit names T (1..kMaxContexts)      5 u8[3] zero
//   8  u32 length L of each name (the domain's fixed address length)
//   12 u32 checksum (transports/checksum.h: FNV-1a of all bytes, this field counted as zeros)
//   16 R receive names, then T transmit names, L bytes each (each a valid ufi name)
// Ordinary names begin with "uf", so the first two bytes tell the kinds apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ufi::transports::address {
struct EndpointAddress;
}

namespace ufi::transports::scalable {

inline constexpr size_t kHeaderSize = 16;
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kMaxContexts = 64;  // of each kind
// The longest name (what one AV arena chunk holds, at its smallest).
inline constexpr size_t kMaxSize = 65536;

// Whether the bytes at `p` (at least 2 readable) begin a scalable name rather than an
// ordinary one.
bool starts_scalable(const void *p, size_t avail) noexcept;

// A parsed scalable name: views into the caller's bytes.
struct View {
    uint32_t rx_count = 0;
    uint32_t tx_count = 0;
    uint32_t name_len = 0;
    const uint8_t *names = nullptr;  // rx names, then tx names, name_len bytes each
    size_t total = 0;                // the whole name's length

    const uint8_t *rx(uint32_t j) const noexcept { return names + size_t{j} * name_len; }
    const uint8_t *tx(uint32_t k) const noexcept { return names + size_t{rx_count + k} * name_len; }
    uint32_t count() const noexcept { return rx_count + tx_count; }
    const uint8_t *sub(uint32_t i) const noexcept { return names + size_t{i} * name_len; }
};

// The total length the header at `p` announces (reading at most kHeaderSize of `avail`
// bytes), or 0 with *why when it is no scalable header.
size_t announced_size(const void *p, size_t avail, std::string *why = nullptr) noexcept;

// Parses and validates a scalable name within `avail` bytes at `p` (header, checksum, each
// name a valid ufi address). Reads at most `avail` bytes; false with *why when malformed.
bool parse(const void *p, size_t avail, View &out, std::string *why = nullptr);

// The name of R receive and T transmit contexts, each name exactly `name_len` bytes; empty
// with *why when the counts or lengths are out of range.
std::vector<uint8_t> pack(std::span<const std::vector<uint8_t>> rx_names,
                          std::span<const std::vector<uint8_t>> tx_names, size_t name_len,
                          std::string *why = nullptr);

// Host and port: a scalable endpoint opened with a source port P (fi_getinfo's node and
// service with FI_SOURCE) listens with receive context j on port P + j, so that an address by
// host and port (fi_getinfo's dest_addr, fi_av_insertsvc) reaches context j at
// fi_rx_addr(addr, j): the address's tcp ports move up by j. False when a port would pass
// 65535 or the address has no tcp port to move.
bool offset_tcp_ports(address::EndpointAddress &a, uint32_t by) noexcept;

}  // namespace ufi::transports::scalable
