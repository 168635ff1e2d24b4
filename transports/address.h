// The endpoint address blob: what fi_getname returns and fi_av_insert takes. Versioned and
// self-describing: an identity (a random 64-bit uuid per enabled endpoint, and the
// endpoint's id in its process) and one record per UCT transport the endpoint opened
// (transport, device address, iface address), as uct-brief section 3 describes.
// Endpoint (connect-to-ep) addresses never appear here: they exist only per connection.
//
// Binary layout, little-endian, no alignment padding:
//   0  u8[2] magic "uf"        2  u8 version (3)
//   3  u8 record count (1..32) in bits 0-5; bit 7 "partial": records were left out (an
//      endpoint's name, address_name.h), the full address comes with the handshake; bit 6 zero
//   4  u64 uuid                12 u32 endpoint id     16 u32 checksum (transports/checksum.h:
//                                                        FNV-1a of header and records, this
//                                                        field counted as zeros)
//   20 records: u8 transport code (1.. for the UCT transports of kKnownTransports; 0: u8
//               name length and the name, 1..15 chars of [A-Za-z0-9_], follow), u8 dev_len,
//               u8 iface_len, device address bytes, iface address bytes
//   then zero bytes up to the domain's fixed address length
// The checksum makes a flipped byte, or an address cut short and padded with zeros, an
// invalid address rather than a different one. Transport codes keep names short: programs
// such as Open MPI hold a name in FI_NAME_MAX (64) bytes.
//
// Fixed length: libfabric programs pack addresses back to back with the addrlen fi_getname
// reports, and fi_av_insert / fi_av_straddr get no length, so every address of a domain is
// exactly its fixed length: the records (their size varies with the transports an endpoint
// opened) padded with zeros. Parsing never reads past the length it is given; a record that
// runs past it, or a non-zero byte after the last record, makes the address invalid.
//
// Printable form (FI_ADDR_STR): "fi_ufi://" followed by the blob in base64url without
// padding, so addresses survive string key-value stores, environment variables and logs.
#pragma once

#include "transports/resource.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ufi::transports::address {

inline constexpr uint8_t kVersion = 3;
inline constexpr size_t kHeaderSize = 20;
inline constexpr size_t kChecksumOffset = 16;
inline constexpr size_t kUuidOffset = 4;        // u64, little-endian
inline constexpr size_t kEndpointIdOffset = 12;  // u32, little-endian
inline constexpr size_t kMaxRecords = 32;
inline constexpr uint8_t kPartialBit = 0x80;  // in the count byte
inline constexpr size_t kMaxTlName = 15;
inline constexpr std::string_view kStringPrefix = "fi_ufi://";

struct TransportRecord {
    std::string tl;                   // UCT transport name: "posix", "tcp", "rc_mlx5"
    std::vector<uint8_t> device_addr; // uct_iface_get_device_address
    std::vector<uint8_t> iface_addr;  // uct_iface_get_address
    bool operator==(const TransportRecord &) const = default;
};

struct EndpointAddress {
    uint64_t uuid = 0;
    uint32_t endpoint_id = 0;
    std::vector<TransportRecord> records;
    // A name that leaves records out (address_name.h): the peer's full address is learned
    // from its handshake.
    bool partial = false;
    bool operator==(const EndpointAddress &) const = default;
};

// The most bytes one transport record of `r` takes (its device and iface address lengths
// as uct_iface_query reports them).
size_t record_bound(const Resource &r);

// The bytes a record of transport `tl` takes besides its device and iface addresses.
size_t record_overhead(std::string_view tl);

// The padded length of an address whose records take `record_bytes`: the header added,
// rounded up to 8 bytes (so arrays of addresses keep 8-byte alignment).
size_t padded_size(size_t record_bytes);

// The fixed length of addresses holding a record for every resource.
size_t fixed_size(std::span<const Resource *const> resources);

// The blob, unpadded; empty when `addr` cannot be encoded (no record, too many, a name or
// address too long), with *why set.
std::vector<uint8_t> pack(const EndpointAddress &addr, std::string *why = nullptr);

// Pads an unpadded blob with zeros to `size` bytes; false with *why when it is longer.
bool pad(std::vector<uint8_t> &blob, size_t size, std::string *why = nullptr);

// Parses and validates the `len` bytes at `blob` (records, then zero padding); false with *why
// (e.g. "record 2 runs past the address's 96 bytes") when malformed. Reads at most `len` bytes.
bool unpack(const void *blob, size_t len, EndpointAddress &out, std::string *why = nullptr);

// One record of a blob, pointing into it (no copy). No member initializers: an array of them
// on the stack costs nothing until filled.
struct RecordView {
    std::string_view tl;
    const uint8_t *device_addr;
    size_t device_addr_len;
    const uint8_t *iface_addr;
    size_t iface_addr_len;
};

// Walks the records of a blob that was validated before (an AV entry, an endpoint's own name)
// until `match` returns true for one: their structure is checked within `len` bytes, the
// checksum and padding are not checked again, and nothing is allocated (fi_av_lookup's path).
// true when a record matched; false when none did or the structure is broken.
bool find_record(const void *blob, size_t len, bool (*match)(const RecordView &, void *ctx),
                 void *ctx) noexcept;

// Just the validation, without building the result.
bool is_valid(const void *blob, size_t len, std::string *why = nullptr);

// The size of the records (the blob without its padding) of the valid address in the `len`
// bytes at `blob`; 0 with *why when they do not hold a valid address.
size_t content_size(const void *blob, size_t len, std::string *why = nullptr);

// "fi_ufi://<base64url>" for a blob (any bytes; the caller validates).
std::string to_string(const void *blob, size_t len);

// The blob in a "fi_ufi://" string; false with *why when the prefix or encoding is wrong or
// the decoded bytes are not a valid address.
bool from_string(std::string_view text, std::vector<uint8_t> &blob, std::string *why = nullptr);

// Whether two addresses hold, for one transport and device, records with different iface
// addresses: for one identity, a sign that they name two incarnations of the endpoint (one
// closed, then opened again under its name: a new shared-memory segment, say). Records only
// one of them has do not count (names leave some out).
bool records_conflict(const EndpointAddress &a, const EndpointAddress &b) noexcept;

// A readable summary for logs: "ufi ep 7 uuid 0x1a2b... [posix, sysv, tcp]".
std::string describe(const EndpointAddress &addr);

// base64url without padding (RFC 4648 section 5), exposed for tests.
std::string base64url_encode(const void *data, size_t len);
bool base64url_decode(std::string_view text, std::vector<uint8_t> &out);

}  // namespace ufi::transports::address
