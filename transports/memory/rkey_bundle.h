// The packed remote-key bundle: everything a peer needs to reach a registered region without
// asking its owner again. It is ufi's raw MR key (fi_mr_raw_attr / fi_mr_map_raw) and the
// reply to an initiator's key request. Versioned and validated: decode() accepts only
// well-formed bundles of a version it knows, so a corrupted or foreign key is refused, never
// trusted.
//
// Layout (little-endian, no padding), version 1:
//   0  u32 magic 'UFRK'      4  u8 version    5  u8 flags     6  u16 segment_count
//   8  u16 md_count          10 u16 0         12 u32 total_size (bytes, whole bundle)
//   16 u32 checksum (FNV-1a 32 of the bundle with this field 0)   20 u32 0
//   24 u64 key               32 u64 base_addr 40 u64 length   48 u64 access
//   56 segment_count x { u64 addr, u64 len }
//      md_count x { u8 n, n bytes component name, u8 m, m bytes md name }
//      segment_count x md_count x { u16 n, n bytes packed UCT rkey }   (segment-major)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ufi::transports {

struct RkeyBundle {
    static constexpr std::uint32_t kMagic = 0x4B524655;  // "UFRK" read as little-endian
    static constexpr std::uint8_t kVersion = 1;
    static constexpr std::size_t kHeaderSize = 56;
    static constexpr std::size_t kMaxSegments = 64;
    static constexpr std::size_t kMaxMds = 32;
    static constexpr std::size_t kMaxNameLength = 63;
    static constexpr std::size_t kMaxRkeySize = 4096;

    // Flag bits (the owner's semantics travel with the key).
    static constexpr std::uint8_t kFlagVirtAddr = 1u << 0;   // addressed by virtual address
    static constexpr std::uint8_t kFlagSingleUse = 1u << 1;  // valid for one operation only
    static constexpr std::uint8_t kKnownFlags = kFlagVirtAddr | kFlagSingleUse;

    struct Segment {
        std::uint64_t addr = 0;
        std::uint64_t len = 0;
        bool operator==(const Segment &) const = default;
    };
    struct MdEntry {
        std::string component;
        std::string md;
        bool operator==(const MdEntry &) const = default;
    };

    std::uint8_t flags = 0;
    std::uint64_t key = 0;
    std::uint64_t base_addr = 0;  // segments[0].addr
    std::uint64_t length = 0;     // sum of the segment lengths
    std::uint64_t access = 0;     // the owner's access bits (FI_REMOTE_READ, ...), opaque here
    std::vector<Segment> segments;
    std::vector<MdEntry> mds;
    // Packed UCT rkeys, segments.size() x mds.size(), segment-major: rkeys[s * mds.size() + m].
    std::vector<std::vector<std::uint8_t>> rkeys;

    const std::vector<std::uint8_t> &rkey(std::size_t segment, std::size_t md) const {
        return rkeys[segment * mds.size() + md];
    }

    // Bytes encode() writes; 0 when the bundle breaks a limit above.
    std::size_t encoded_size() const;
    // Writes the bundle into `out` (at least encoded_size() bytes); returns the bytes written,
    // 0 when the bundle breaks a limit.
    std::size_t encode(std::span<std::uint8_t> out) const;
    std::vector<std::uint8_t> encode() const;

    // Parses and validates `in` (exactly one bundle: total_size must equal in.size()).
    // False with the reason in `why` for a wrong magic, an unknown version or flag, a bad
    // checksum, sizes that disagree, a limit exceeded, an empty or overflowing segment, or
    // segment lengths that do not sum to `length`.
    static bool decode(std::span<const std::uint8_t> in, RkeyBundle &out,
                       std::string *why = nullptr);

    bool operator==(const RkeyBundle &) const = default;
};

}  // namespace ufi::transports
