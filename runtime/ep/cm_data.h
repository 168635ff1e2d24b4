// What ufi puts in the connection manager's private data (transports/cm): a header, the
// sender's data-path address (the blob its data lanes are built from, as an RDM peer's AV
// entry would hold it) and the application's connection data (fi_connect, fi_accept,
// fi_reject; at most info::kCmDataSize bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace ufi::runtime::ep::cm_data {

inline constexpr uint32_t kMagic = 0x75666d63;  // "ufmc"
inline constexpr uint8_t kVersion = 1;

enum Kind : uint8_t {
    kConnect = 1,  // a client's request
    kAccept = 2,   // the server's answer: accepted
    kReject = 3,   // the server's answer: refused, with its data (fi_reject)
};

struct Header {
    uint32_t magic;
    uint8_t version;
    uint8_t kind;
    uint16_t address_len;
    uint16_t data_len;
    uint16_t reserved;
};
static_assert(sizeof(Header) == 12);

// [header][address][data]. May throw std::bad_alloc.
inline std::vector<uint8_t> pack(Kind kind, std::span<const uint8_t> address, const void *data,
                                 size_t data_len) {
    const Header h{kMagic, kVersion, kind, static_cast<uint16_t>(address.size()),
                   static_cast<uint16_t>(data_len), 0};
    std::vector<uint8_t> out(sizeof h + address.size() + data_len);
    std::memcpy(out.data(), &h, sizeof h);
    if (!address.empty()) std::memcpy(out.data() + sizeof h, address.data(), address.size());
    if (data_len != 0) std::memcpy(out.data() + sizeof h + address.size(), data, data_len);
    return out;
}

struct Parsed {
    Kind kind = kConnect;
    std::span<const uint8_t> address;
    std::span<const uint8_t> data;
};

// False for bytes that are not ufi's (another program on the port, a truncated message).
inline bool parse(std::span<const uint8_t> bytes, Parsed &out) {
    Header h;
    if (bytes.size() < sizeof h) return false;
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.magic != kMagic || h.version != kVersion || h.kind < kConnect || h.kind > kReject ||
        bytes.size() != sizeof h + size_t{h.address_len} + h.data_len) {
        return false;
    }
    out.kind = static_cast<Kind>(h.kind);
    out.address = bytes.subspan(sizeof h, h.address_len);
    out.data = bytes.subspan(sizeof h + h.address_len, h.data_len);
    return true;
}

}  // namespace ufi::runtime::ep::cm_data
