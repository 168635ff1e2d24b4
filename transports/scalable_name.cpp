// A scalable endpoint's name (scalable_name.h).
#include "transports/scalable_name.h"

#include "transports/address.h"
#include "transports/checksum.h"

#include <arpa/inet.h>

#include <cstring>

namespace ufi::transports::scalable {

namespace {

constexpr uint8_t kMagic0 = 'u';
constexpr uint8_t kMagic1 = 's';
constexpr size_t kChecksumOffset = 12;

uint32_t load_u32(const uint8_t *p) noexcept {
    uint32_t v = 0;
    std::memcpy(&v, p, sizeof v);  // little-endian hosts (as address.h)
    return v;
}

void set_why(std::string *why, std::string text) {
    if (why != nullptr) *why = std::move(text);
}

}  // namespace

bool starts_scalable(const void *p, size_t avail) noexcept {
    const auto *b = static_cast<const uint8_t *>(p);
    return avail >= 2 && b[0] == kMagic0 && b[1] == kMagic1;
}

size_t announced_size(const void *p, size_t avail, std::string *why) noexcept {
    const auto *b = static_cast<const uint8_t *>(p);
    if (avail < kHeaderSize || !starts_scalable(p, avail)) {
        set_why(why, "not a scalable endpoint's name");
        return 0;
    }
    if (b[2] != kVersion) {
        set_why(why, "scalable name version " + std::to_string(b[2]) + " (ufi reads " +
                         std::to_string(kVersion) + ")");
        return 0;
    }
    const uint32_t rx = b[3], tx = b[4];
    const uint32_t len = load_u32(b + 8);
    if (rx == 0 || tx == 0 || rx > kMaxContexts || tx > kMaxContexts || b[5] != 0 || b[6] != 0 ||
        b[7] != 0) {
        set_why(why, "a scalable name's header is damaged (context counts " + std::to_string(rx) +
                         " and " + std::to_string(tx) + ")");
        return 0;
    }
    if (len < address::kHeaderSize || len > 65536) {
        set_why(why, "a scalable name's names are " + std::to_string(len) + " bytes long");
        return 0;
    }
    const size_t total = kHeaderSize + size_t{rx + tx} * len;
    if (total > kMaxSize) {
        set_why(why, "a scalable name of " + std::to_string(total) + " bytes is longer than " +
                         std::to_string(kMaxSize));
        return 0;
    }
    return total;
}

bool parse(const void *p, size_t avail, View &out, std::string *why) {
    const size_t total = announced_size(p, avail, why);
    if (total == 0) return false;
    if (total > avail) {
        set_why(why, "a scalable name of " + std::to_string(total) + " bytes is cut to " +
                         std::to_string(avail));
        return false;
    }
    const auto *b = static_cast<const uint8_t *>(p);
    if (fnv1a_skipping({b, total}, kChecksumOffset) != load_u32(b + kChecksumOffset)) {
        set_why(why, "a scalable name's checksum does not match (damaged or cut)");
        return false;
    }
    View v;
    v.rx_count = b[3];
    v.tx_count = b[4];
    v.name_len = load_u32(b + 8);
    v.names = b + kHeaderSize;
    v.total = total;
    for (uint32_t i = 0; i < v.count(); ++i) {
        std::string sub_why;
        if (!address::is_valid(v.sub(i), v.name_len, &sub_why)) {
            set_why(why, std::string("name ") + std::to_string(i) + " of a scalable name: " + sub_why);
            return false;
        }
    }
    out = v;
    return true;
}

std::vector<uint8_t> pack(std::span<const std::vector<uint8_t>> rx_names,
                          std::span<const std::vector<uint8_t>> tx_names, size_t name_len,
                          std::string *why) {
    if (rx_names.empty() || tx_names.empty() || rx_names.size() > kMaxContexts ||
        tx_names.size() > kMaxContexts) {
        set_why(why, "a scalable name holds 1 to " + std::to_string(kMaxContexts) +
                         " names of each kind");
        return {};
    }
    if (name_len < address::kHeaderSize || name_len > 65536) {
        set_why(why, "names of " + std::to_string(name_len) + " bytes");
        return {};
    }
    if (kHeaderSize + (rx_names.size() + tx_names.size()) * name_len > kMaxSize) {
        set_why(why, "the name would be longer than " + std::to_string(kMaxSize) + " bytes");
        return {};
    }
    std::vector<uint8_t> out(kHeaderSize + (rx_names.size() + tx_names.size()) * name_len, 0);
    out[0] = kMagic0;
    out[1] = kMagic1;
    out[2] = kVersion;
    out[3] = static_cast<uint8_t>(rx_names.size());
    out[4] = static_cast<uint8_t>(tx_names.size());
    const uint32_t len32 = static_cast<uint32_t>(name_len);
    std::memcpy(out.data() + 8, &len32, sizeof len32);
    size_t at = kHeaderSize;
    for (const auto *set : {&rx_names, &tx_names}) {
        for (const auto &n : *set) {
            if (n.size() != name_len) {
                set_why(why, "a context's name is " + std::to_string(n.size()) + " bytes, not " +
                                 std::to_string(name_len));
                return {};
            }
            std::memcpy(out.data() + at, n.data(), name_len);
            at += name_len;
        }
    }
    const uint32_t sum = fnv1a_skipping(out, kChecksumOffset);
    std::memcpy(out.data() + kChecksumOffset, &sum, sizeof sum);
    return out;
}

bool offset_tcp_ports(address::EndpointAddress &a, uint32_t by) noexcept {
    bool moved = false;
    for (auto &rec : a.records) {
        if (rec.tl != "tcp" || rec.iface_addr.size() != sizeof(uint16_t)) continue;
        uint16_t net = 0;
        std::memcpy(&net, rec.iface_addr.data(), sizeof net);
        const uint32_t port = ntohs(net);
        if (port == 0) continue;
        if (port + by > 65535) return false;
        net = htons(static_cast<uint16_t>(port + by));
        std::memcpy(rec.iface_addr.data(), &net, sizeof net);
        moved = true;
    }
    return moved;
}

}  // namespace ufi::transports::scalable
