#include "transports/iface/close_order.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace ufi::transports {

namespace {

constexpr unsigned kEstablished = 1;  // TCP_ESTABLISHED, as /proc/net/tcp writes it ("01")

// One hex field; false when it is not one.
bool hex(std::string_view s, unsigned &out) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
    return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

unsigned count_in_file(const char *path, uint16_t port) {
    std::ifstream f(path);
    if (!f) return 0;
    std::ostringstream text;
    text << f.rdbuf();
    return established_on_port_in(text.str(), port);
}

}  // namespace

unsigned established_on_port_in(std::string_view table, uint16_t port) noexcept {
    // Each line after the header: "sl: local_ip:port remote_ip:port st ...", hex fields.
    unsigned n = 0;
    size_t at = table.find('\n');  // the header
    while (at != std::string_view::npos && at + 1 < table.size()) {
        const size_t end = table.find('\n', at + 1);
        std::string_view line = table.substr(at + 1, end == std::string_view::npos
                                                         ? std::string_view::npos
                                                         : end - at - 1);
        at = end;
        std::string_view fields[4];
        size_t count = 0, i = 0;
        while (count < 4 && i < line.size()) {
            while (i < line.size() && line[i] == ' ') ++i;
            const size_t start = i;
            while (i < line.size() && line[i] != ' ') ++i;
            if (i > start) fields[count++] = line.substr(start, i - start);
        }
        if (count < 4) continue;
        const size_t colon = fields[1].rfind(':');
        unsigned local_port = 0, state = 0;
        if (colon == std::string_view::npos || !hex(fields[1].substr(colon + 1), local_port) ||
            !hex(fields[3], state)) {
            continue;
        }
        if (local_port == port && state == kEstablished) ++n;
    }
    return n;
}

unsigned established_on_port(uint16_t port) noexcept {
    try {
        return count_in_file("/proc/net/tcp", port) + count_in_file("/proc/net/tcp6", port);
    } catch (...) {
        return 0;  // (out of memory reading the tables: close at once)
    }
}

bool wait_for_peers_to_close(uint16_t port, std::chrono::milliseconds bound) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
        if (established_on_port(port) == 0) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

}  // namespace ufi::transports
