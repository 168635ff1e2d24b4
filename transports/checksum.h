// FNV-1a (32 bit) over a byte range with one 4-byte field counted as zeros: the checksum that
// ufi's self-describing blobs (endpoint addresses, raw MR key bundles) carry in that field.
// It is no authentication; it tells a damaged, cut or mistyped blob from a real one (every
// single-byte change alters it) before anything in the blob is trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ufi::transports {

constexpr uint32_t fnv1a_skipping(std::span<const uint8_t> bytes, size_t field_offset) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < bytes.size(); ++i) {
        const uint8_t b = (i >= field_offset && i < field_offset + 4) ? 0 : bytes[i];
        h = (h ^ b) * 16777619u;
    }
    return h;
}

}  // namespace ufi::transports
