#include "transports/iface/close_order.h"

#include "transports/iface/tcp_table.h"

#include <new>
#include <thread>

namespace ufi::transports {

unsigned established_on_port_in(std::string_view table, uint16_t port) noexcept {
    try {
        unsigned n = 0;
        for (const TcpSocketRow &r : parse_tcp_table(table)) {
            n += r.local_port == port && r.state == kTcpEstablished;
        }
        return n;
    } catch (const std::bad_alloc &) {
        return 0;  // (close at once)
    }
}

unsigned established_on_port(uint16_t port) noexcept {
    try {
        unsigned n = 0;
        for (const TcpSocketRow &r : read_tcp_tables()) {
            n += r.local_port == port && r.state == kTcpEstablished;
        }
        return n;
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
