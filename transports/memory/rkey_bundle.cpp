#include "transports/memory/rkey_bundle.h"

#include "transports/checksum.h"

#include <cstring>

namespace ufi::transports {

namespace {

constexpr std::size_t kChecksumOffset = 16;

std::uint32_t fnv1a(std::span<const std::uint8_t> bytes) {
    return fnv1a_skipping(bytes, kChecksumOffset);  // the checksum field counts as zeros
}

class Writer {
  public:
    explicit Writer(std::span<std::uint8_t> out) : out_(out) {}
    template <typename T>
    void put(T v) {
        for (std::size_t i = 0; i < sizeof(T); ++i)
            out_[pos_++] = static_cast<std::uint8_t>(v >> (8 * i));
    }
    void bytes(const void *p, std::size_t n) {
        if (n != 0) std::memcpy(out_.data() + pos_, p, n);
        pos_ += n;
    }
    std::size_t pos() const { return pos_; }

  private:
    std::span<std::uint8_t> out_;
    std::size_t pos_ = 0;
};

class Reader {
  public:
    explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
    template <typename T>
    bool get(T &v) {
        if (in_.size() - pos_ < sizeof(T)) return false;
        T r = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i) r |= static_cast<T>(T(in_[pos_++]) << (8 * i));
        v = r;
        return true;
    }
    bool bytes(std::size_t n, const std::uint8_t *&p) {
        if (in_.size() - pos_ < n) return false;
        p = in_.data() + pos_;
        pos_ += n;
        return true;
    }
    std::size_t pos() const { return pos_; }

  private:
    std::span<const std::uint8_t> in_;
    std::size_t pos_ = 0;
};

bool fail(std::string *why, const char *text) {
    if (why != nullptr) *why = text;
    return false;
}

}  // namespace

std::size_t RkeyBundle::encoded_size() const {
    if (segments.empty() || segments.size() > kMaxSegments || mds.size() > kMaxMds ||
        rkeys.size() != segments.size() * mds.size()) {
        return 0;
    }
    std::size_t n = kHeaderSize + segments.size() * 16;
    for (const MdEntry &m : mds) {
        if (m.component.size() > kMaxNameLength || m.md.size() > kMaxNameLength) return 0;
        n += 2 + m.component.size() + m.md.size();
    }
    for (const auto &r : rkeys) {
        if (r.size() > kMaxRkeySize) return 0;
        n += 2 + r.size();
    }
    return n > UINT32_MAX ? 0 : n;
}

std::size_t RkeyBundle::encode(std::span<std::uint8_t> out) const {
    const std::size_t n = encoded_size();
    if (n == 0 || out.size() < n) return 0;
    Writer w(out.first(n));
    w.put<std::uint32_t>(kMagic);
    w.put<std::uint8_t>(kVersion);
    w.put<std::uint8_t>(flags);
    w.put<std::uint16_t>(static_cast<std::uint16_t>(segments.size()));
    w.put<std::uint16_t>(static_cast<std::uint16_t>(mds.size()));
    w.put<std::uint16_t>(0);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(n));
    w.put<std::uint32_t>(0);  // checksum, below
    w.put<std::uint32_t>(0);
    w.put<std::uint64_t>(key);
    w.put<std::uint64_t>(base_addr);
    w.put<std::uint64_t>(length);
    w.put<std::uint64_t>(access);
    for (const Segment &s : segments) {
        w.put<std::uint64_t>(s.addr);
        w.put<std::uint64_t>(s.len);
    }
    for (const MdEntry &m : mds) {
        w.put<std::uint8_t>(static_cast<std::uint8_t>(m.component.size()));
        w.bytes(m.component.data(), m.component.size());
        w.put<std::uint8_t>(static_cast<std::uint8_t>(m.md.size()));
        w.bytes(m.md.data(), m.md.size());
    }
    for (const auto &r : rkeys) {
        w.put<std::uint16_t>(static_cast<std::uint16_t>(r.size()));
        w.bytes(r.data(), r.size());
    }
    const std::uint32_t sum = fnv1a(out.first(n));
    Writer c(out.subspan(kChecksumOffset, 4));
    c.put<std::uint32_t>(sum);
    return n;
}

std::vector<std::uint8_t> RkeyBundle::encode() const {
    std::vector<std::uint8_t> out(encoded_size());
    if (!out.empty()) encode(out);
    return out;
}

bool RkeyBundle::decode(std::span<const std::uint8_t> in, RkeyBundle &out, std::string *why) {
    Reader r(in);
    std::uint32_t magic = 0, total = 0, sum = 0, reserved32 = 0;
    std::uint8_t version = 0, flags = 0;
    std::uint16_t nseg = 0, nmd = 0, reserved16 = 0;
    RkeyBundle b;
    if (in.size() < kHeaderSize) return fail(why, "shorter than the bundle header");
    r.get(magic);
    r.get(version);
    r.get(flags);
    r.get(nseg);
    r.get(nmd);
    r.get(reserved16);
    r.get(total);
    r.get(sum);
    r.get(reserved32);
    r.get(b.key);
    r.get(b.base_addr);
    r.get(b.length);
    r.get(b.access);
    if (magic != kMagic) return fail(why, "not a ufi key bundle (wrong magic)");
    if (version != kVersion) return fail(why, "unknown bundle version");
    if ((flags & ~kKnownFlags) != 0) return fail(why, "unknown bundle flags");
    if (reserved16 != 0 || reserved32 != 0) return fail(why, "reserved header fields are not zero");
    if (total != in.size()) return fail(why, "size field disagrees with the key size");
    if (sum != fnv1a(in)) return fail(why, "checksum mismatch");
    if (nseg == 0 || nseg > kMaxSegments) return fail(why, "segment count out of range");
    if (nmd > kMaxMds) return fail(why, "memory-domain count out of range");
    b.flags = flags;
    b.segments.resize(nseg);
    std::uint64_t sum_len = 0;
    for (Segment &s : b.segments) {
        if (!r.get(s.addr) || !r.get(s.len)) return fail(why, "truncated segment table");
        if (s.len == 0) return fail(why, "empty segment");
        if (s.addr + s.len < s.addr) return fail(why, "segment wraps the address space");
        if (sum_len + s.len < sum_len) return fail(why, "segment lengths overflow");
        sum_len += s.len;
    }
    if (sum_len != b.length) return fail(why, "segment lengths do not sum to the length");
    if (b.base_addr != b.segments[0].addr)
        return fail(why, "base address is not the first segment's");
    b.mds.resize(nmd);
    for (MdEntry &m : b.mds) {
        std::uint8_t n = 0;
        const std::uint8_t *p = nullptr;
        if (!r.get(n) || n > kMaxNameLength || !r.bytes(n, p))
            return fail(why, "bad component name");
        m.component.assign(reinterpret_cast<const char *>(p), n);
        if (!r.get(n) || n > kMaxNameLength || !r.bytes(n, p))
            return fail(why, "bad memory-domain name");
        m.md.assign(reinterpret_cast<const char *>(p), n);
    }
    b.rkeys.resize(std::size_t{nseg} * nmd);
    for (auto &key : b.rkeys) {
        std::uint16_t n = 0;
        const std::uint8_t *p = nullptr;
        if (!r.get(n) || n > kMaxRkeySize || !r.bytes(n, p))
            return fail(why, "truncated remote key");
        key.assign(p, p + n);
    }
    if (r.pos() != in.size()) return fail(why, "trailing bytes after the bundle");
    out = std::move(b);
    return true;
}

}  // namespace ufi::transports
