#include "transports/address.h"

#include "transports/checksum.h"

#include <cstdio>
#include <cstring>

namespace ufi::transports::address {

namespace {

constexpr uint8_t kMagic0 = 'u';
constexpr uint8_t kMagic1 = 'f';
constexpr uint8_t kCountMask = 0x3f;

// Record codes 1.. name these UCT transports (the order is wire format: append only).
// Any other transport is spelled out after code 0.
constexpr std::string_view kKnownTransports[] = {
    "posix",     "sysv",     "xpmem",     "knem",     "cma",     "self",   "tcp",
    "rc_mlx5",   "dc_mlx5",  "ud_mlx5",   "rc_verbs", "ud_verbs", "cuda_copy", "cuda_ipc",
    "gdr_copy",  "rocm_copy", "rocm_ipc", "rocm_gdr", "ze_copy", "ze_ipc",
};
constexpr size_t kKnownCount = sizeof(kKnownTransports) / sizeof(kKnownTransports[0]);

uint8_t code_of(std::string_view tl) {
    for (size_t i = 0; i < kKnownCount; ++i) {
        if (kKnownTransports[i] == tl) return static_cast<uint8_t>(i + 1);
    }
    return 0;
}

void put_u32(std::vector<uint8_t> &b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t> &b, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint64_t get_le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

bool printable_name(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const uint8_t c = p[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) return false;
    }
    return true;
}

void fail(std::string *why, const std::string &text) {
    if (why != nullptr) *why = text;
}

// Walks a blob; calls `on_record` for each record. Returns the blob's size, or 0 if invalid.
template <bool kVerify = true, typename OnRecord>
size_t walk(const void *blob, size_t len, std::string *why, OnRecord &&on_record) {
    const auto *p = static_cast<const uint8_t *>(blob);
    if (p == nullptr) return fail(why, "address is NULL"), 0;
    if (len < kHeaderSize) return fail(why, "address of " + std::to_string(len) + " bytes is shorter than the " + std::to_string(kHeaderSize) + "-byte header"), 0;
    if (p[0] != kMagic0 || p[1] != kMagic1) return fail(why, "not a ufi address (bad magic)"), 0;
    if (p[2] != kVersion) return fail(why, "ufi address version " + std::to_string(p[2]) + " is not supported (this ufi reads version " + std::to_string(kVersion) + ")"), 0;
    if (p[3] & 0x40) return fail(why, "address header has a reserved flag set"), 0;
    const size_t count = p[3] & kCountMask;
    if (count == 0 || count > kMaxRecords) return fail(why, "address has " + std::to_string(count) + " transport records (1 to 32 allowed)"), 0;
    const auto past_end = [&](size_t r) {
        return fail(why, "record " + std::to_string(r) + " runs past the address's " + std::to_string(len) + " bytes"), size_t{0};
    };
    size_t off = kHeaderSize;
    for (size_t r = 0; r < count; ++r) {
        if (off + 1 > len) return past_end(r);
        const uint8_t code = p[off++];
        std::string_view tl;
        if (code > kKnownCount) return fail(why, "record " + std::to_string(r) + ": unknown transport code " + std::to_string(code)), 0;
        if (code != 0) {
            tl = kKnownTransports[code - 1];
        } else {
            if (off + 1 > len) return past_end(r);
            const size_t tl_len = p[off];
            if (tl_len == 0 || tl_len > kMaxTlName) return fail(why, "record " + std::to_string(r) + ": transport name of " + std::to_string(tl_len) + " bytes"), 0;
            if (off + 1 + tl_len > len) return past_end(r);
            if (kVerify && !printable_name(p + off + 1, tl_len)) return fail(why, "record " + std::to_string(r) + ": transport name is not printable"), 0;
            tl = std::string_view(reinterpret_cast<const char *>(p + off + 1), tl_len);
            if (kVerify && code_of(tl) != 0) return fail(why, "record " + std::to_string(r) + ": transport " + std::string(tl) + " spelled out instead of coded"), 0;
            off += 1 + tl_len;
        }
        if (off + 2 > len) return past_end(r);
        const size_t dev_len = p[off];
        const size_t iface_len = p[off + 1];
        const size_t body = off + 2;
        if (body + dev_len + iface_len > len) return past_end(r);
        on_record(tl, p + body, dev_len, p + body + dev_len, iface_len);
        off = body + dev_len + iface_len;
    }
    if constexpr (!kVerify) return off;
    // What follows the last record is padding, and padding is zeros: anything else is a
    // damaged or foreign address, not one to guess at.
    for (size_t i = off; i < len; ++i) {
        if (p[i] != 0) return fail(why, "byte " + std::to_string(i) + " after the last record is not zero padding"), 0;
    }
    if (get_le(p + kChecksumOffset, 4) != fnv1a_skipping({p, off}, kChecksumOffset))
        return fail(why, "checksum mismatch: the address was altered or cut short"), 0;
    return off;
}

}  // namespace

std::vector<uint8_t> pack(const EndpointAddress &addr, std::string *why) {
    std::vector<uint8_t> b;
    if (addr.records.empty() || addr.records.size() > kMaxRecords) {
        fail(why, "an address needs 1 to 32 transport records, not " + std::to_string(addr.records.size()));
        return {};
    }
    b.reserve(kHeaderSize + addr.records.size() * 40);
    b.push_back(kMagic0);
    b.push_back(kMagic1);
    b.push_back(kVersion);
    b.push_back(static_cast<uint8_t>(addr.records.size() | (addr.partial ? kPartialBit : 0)));
    put_u64(b, addr.uuid);
    put_u32(b, addr.endpoint_id);
    put_u32(b, 0);  // checksum, once the records are in
    for (const auto &r : addr.records) {
        if (r.tl.empty() || r.tl.size() > kMaxTlName ||
            !printable_name(reinterpret_cast<const uint8_t *>(r.tl.data()), r.tl.size()) ||
            r.device_addr.size() > 255 || r.iface_addr.size() > 255) {
            fail(why, "transport record " + r.tl + " cannot be encoded");
            return {};
        }
        const uint8_t code = code_of(r.tl);
        b.push_back(code);
        if (code == 0) {
            b.push_back(static_cast<uint8_t>(r.tl.size()));
            b.insert(b.end(), r.tl.begin(), r.tl.end());
        }
        b.push_back(static_cast<uint8_t>(r.device_addr.size()));
        b.push_back(static_cast<uint8_t>(r.iface_addr.size()));
        b.insert(b.end(), r.device_addr.begin(), r.device_addr.end());
        b.insert(b.end(), r.iface_addr.begin(), r.iface_addr.end());
    }
    const uint32_t sum = fnv1a_skipping(b, kChecksumOffset);
    for (int i = 0; i < 4; ++i) b[kChecksumOffset + static_cast<size_t>(i)] = static_cast<uint8_t>(sum >> (8 * i));
    return b;
}

bool unpack(const void *blob, size_t len, EndpointAddress &out, std::string *why) {
    EndpointAddress a;
    const size_t size = walk(blob, len, why, [&](std::string_view tl, const uint8_t *dev,
                                                 size_t dev_len, const uint8_t *iface, size_t iface_len) {
        TransportRecord r;
        r.tl.assign(tl);
        r.device_addr.assign(dev, dev + dev_len);
        r.iface_addr.assign(iface, iface + iface_len);
        a.records.push_back(std::move(r));
    });
    if (size == 0) return false;
    const auto *p = static_cast<const uint8_t *>(blob);
    a.uuid = get_le(p + 4, 8);
    a.endpoint_id = static_cast<uint32_t>(get_le(p + 12, 4));
    a.partial = (p[3] & kPartialBit) != 0;
    out = std::move(a);
    return true;
}

bool find_record(const void *blob, size_t len, bool (*match)(const RecordView &, void *ctx),
                 void *ctx) noexcept {
    bool found = false;
    walk<false>(blob, len, nullptr, [&](std::string_view tl, const uint8_t *dev, size_t dev_len, const uint8_t *iface, size_t iface_len) {
        if (!found) found = match(RecordView{tl, dev, dev_len, iface, iface_len}, ctx);
    });
    return found;
}

bool is_valid(const void *blob, size_t len, std::string *why) { return content_size(blob, len, why) != 0; }

size_t content_size(const void *blob, size_t len, std::string *why) { return walk(blob, len, why, [](auto...) {}); }

size_t record_overhead(std::string_view tl) { return code_of(tl) != 0 ? 3 : 4 + tl.size(); }

size_t record_bound(const Resource &r) {
    return record_overhead(r.tl) + r.device_addr_len + r.iface_addr_len;
}

size_t padded_size(size_t record_bytes) { return (kHeaderSize + record_bytes + 7) & ~size_t{7}; }

size_t fixed_size(std::span<const Resource *const> resources) {
    size_t n = 0;
    for (const Resource *r : resources) n += record_bound(*r);
    return padded_size(n);
}

bool pad(std::vector<uint8_t> &blob, size_t size, std::string *why) {
    if (blob.size() > size) {
        fail(why, "an address of " + std::to_string(blob.size()) + " bytes does not fit the domain's " + std::to_string(size) + "-byte addresses");
        return false;
    }
    blob.resize(size, 0);
    return true;
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}
}  // namespace

std::string base64url_encode(const void *data, size_t len) {
    const auto *p = static_cast<const uint8_t *>(data);
    std::string out;
    out.reserve((len * 4 + 2) / 3);
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        const uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
        out += kAlphabet[v & 63];
    }
    if (len - i == 1) {
        const uint32_t v = uint32_t{p[i]} << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
    } else if (len - i == 2) {
        const uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
    }
    return out;
}

bool base64url_decode(std::string_view text, std::vector<uint8_t> &out) {
    out.clear();
    if (text.size() % 4 == 1) return false;  // no valid encoding has this length
    uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        const int v = decode_char(c);
        if (v < 0) return false;
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<uint8_t>(acc >> bits));
            acc &= (1u << bits) - 1;
        }
    }
    return acc == 0;  // leftover bits must be zero (canonical encoding)
}

std::string to_string(const void *blob, size_t len) {
    return std::string(kStringPrefix) + base64url_encode(blob, len);
}

bool from_string(std::string_view text, std::vector<uint8_t> &blob, std::string *why) {
    if (text.substr(0, kStringPrefix.size()) != kStringPrefix) {
        fail(why, "not a ufi address string (it must start with fi_ufi://)");
        return false;
    }
    if (!base64url_decode(text.substr(kStringPrefix.size()), blob)) {
        fail(why, "fi_ufi:// address is not valid base64url");
        return false;
    }
    // Strings carry the records alone; a padded one is accepted and trimmed.
    const size_t n = content_size(blob.data(), blob.size(), why);
    if (n == 0) return false;
    blob.resize(n);
    return true;
}

std::string describe(const EndpointAddress &addr) {
    char head[64];
    snprintf(head, sizeof(head), "ufi ep %u uuid %#018llx [", addr.endpoint_id,
             static_cast<unsigned long long>(addr.uuid));
    std::string s = head;
    for (size_t i = 0; i < addr.records.size(); ++i) s += (i ? ", " : "") + addr.records[i].tl;
    return s + (addr.partial ? ", ...]" : "]");
}

bool records_conflict(const EndpointAddress &a, const EndpointAddress &b) noexcept {
    for (const TransportRecord &x : a.records) {
        for (const TransportRecord &y : b.records) {
            if (x.tl == y.tl && x.device_addr == y.device_addr && x.iface_addr != y.iface_addr) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace ufi::transports::address
