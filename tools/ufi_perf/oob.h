// ufi_perf's out-of-band channel: one TCP connection between client and server, over which
// they exchange the test setup and their endpoint addresses, and synchronise. Every wait is
// bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ufi::perf {

class Oob {
  public:
    Oob() = default;
    ~Oob();
    Oob(const Oob &) = delete;
    Oob &operator=(const Oob &) = delete;

    // Server: listens on `port` (all addresses) and accepts one client within `timeout_s`.
    bool accept_one(uint16_t port, int timeout_s, std::string &error);
    // Client: connects to host:port, retrying for `timeout_s` while the server starts.
    bool connect_to(const std::string &host, uint16_t port, int timeout_s, std::string &error);

    bool send(const void *data, size_t len);
    bool recv(void *data, size_t len, int timeout_ms = 60000);
    bool send_blob(const std::vector<uint8_t> &b);
    bool recv_blob(std::vector<uint8_t> &b);
    // Both sides reach this point before either goes on.
    bool barrier();

  private:
    int fd_ = -1;
};

}  // namespace ufi::perf
