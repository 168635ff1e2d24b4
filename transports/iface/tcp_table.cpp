#include "transports/iface/tcp_table.h"

#include "transports/address_svc.h"

#include <netinet/in.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace ufi::transports {

namespace {

bool hex(std::string_view s, uint32_t &out) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// "0100007F:1F90" (tcp) or 32 hex digits and a port (tcp6), told apart by their length: each
// 32-bit word is printed as the kernel's native integer of the address's bytes, so the bytes
// come back by copying it.
bool socket_field(std::string_view field, uint8_t (&ip)[16], uint16_t &port) {
    const size_t colon = field.find(':');
    if (colon != 8 && colon != 32) return false;
    const bool v6 = colon == 32;
    uint8_t raw[16] = {};
    for (size_t w = 0; w < colon / 8; ++w) {
        uint32_t word = 0;
        if (!hex(field.substr(w * 8, 8), word)) return false;
        std::memcpy(raw + w * 4, &word, 4);
    }
    uint32_t p = 0;
    if (!hex(field.substr(colon + 1), p) || p > 0xffff) return false;
    port = static_cast<uint16_t>(p);
    if (v6) {
        std::memcpy(ip, raw, 16);
    } else {  // as IPv4-mapped IPv6: ::ffff:a.b.c.d
        std::memset(ip, 0, 10);
        ip[10] = ip[11] = 0xff;
        std::memcpy(ip + 12, raw, 4);
    }
    return true;
}

std::string slurp(const char *path) {
    std::ifstream f(path);
    if (!f) return {};
    std::ostringstream text;
    text << f.rdbuf();
    return text.str();
}

}  // namespace

std::vector<TcpSocketRow> parse_tcp_table(std::string_view table) {
    // "sl: local remote st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...",
    // after a header line. The queue and retransmission fields are read where present.
    std::vector<TcpSocketRow> rows;
    size_t at = table.find('\n');
    while (at != std::string_view::npos && at + 1 < table.size()) {
        const size_t end = table.find('\n', at + 1);
        const std::string_view line =
            table.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1);
        at = end;
        std::string_view f[7];
        size_t count = 0, i = 0;
        while (count < 7 && i < line.size()) {
            while (i < line.size() && line[i] == ' ') ++i;
            const size_t start = i;
            while (i < line.size() && line[i] != ' ') ++i;
            if (i > start) f[count++] = line.substr(start, i - start);
        }
        TcpSocketRow r;
        uint32_t state = 0;
        if (count < 4 || !socket_field(f[1], r.local_ip, r.local_port) ||
            !socket_field(f[2], r.remote_ip, r.remote_port) || !hex(f[3], state)) {
            continue;
        }
        r.state = state;
        if (count == 7) {
            const size_t queues = f[4].find(':');
            if (queues == std::string_view::npos || !hex(f[4].substr(0, queues), r.tx_queue) ||
                !hex(f[6], r.retransmits)) {
                continue;
            }
        }
        rows.push_back(r);
    }
    return rows;
}

std::vector<TcpSocketRow> read_tcp_tables() {
    std::vector<TcpSocketRow> rows = parse_tcp_table(slurp("/proc/net/tcp"));
    std::vector<TcpSocketRow> v6 = parse_tcp_table(slurp("/proc/net/tcp6"));
    rows.insert(rows.end(), v6.begin(), v6.end());
    return rows;
}

bool row_address_of(const sockaddr *sa, uint8_t (&out)[16]) noexcept {
    if (sa == nullptr) return false;
    if (sa->sa_family == AF_INET) {
        std::memset(out, 0, 10);
        out[10] = out[11] = 0xff;
        std::memcpy(out + 12, &reinterpret_cast<const sockaddr_in *>(sa)->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        std::memcpy(out, &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

bool stalled_towards(const std::vector<TcpSocketRow> &rows, const uint8_t (&host)[16]) noexcept {
    for (const TcpSocketRow &r : rows) {
        if (r.state == kTcpEstablished && r.tx_queue > 0 && r.retransmits > 0 &&
            std::memcmp(r.remote_ip, host, 16) == 0) {
            return true;
        }
    }
    return false;
}

bool tcp_host_of(const Resource &lane, const address::EndpointAddress &peer,
                 uint8_t (&host)[16]) noexcept {
    if (lane.tl != "tcp") return false;
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (!address::tcp_socket_address(peer, AF_UNSPEC, ss, len, false)) return false;
    return row_address_of(reinterpret_cast<const sockaddr *>(&ss), host);
}

}  // namespace ufi::transports
