#include "oob.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace ufi::perf {

Oob::~Oob() {
    if (fd_ >= 0) ::close(fd_);
}

bool Oob::accept_one(uint16_t port, int timeout_s, std::string &error) {
    const int l = ::socket(AF_INET6, SOCK_STREAM, 0);
    const bool v6 = l >= 0;
    const int lfd = v6 ? l : ::socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) {
        error = std::string("socket: ") + std::strerror(errno);
        return false;
    }
    const int one = 1;
    ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len;
    if (v6) {
        const int zero = 0;  // accept IPv4 clients too
        ::setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        a->sin6_addr = in6addr_any;
        len = sizeof *a;
    } else {
        auto *a = reinterpret_cast<sockaddr_in *>(&ss);
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        a->sin_addr.s_addr = htonl(INADDR_ANY);
        len = sizeof *a;
    }
    if (::bind(lfd, reinterpret_cast<sockaddr *>(&ss), len) != 0 || ::listen(lfd, 1) != 0) {
        error = "cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno);
        ::close(lfd);
        return false;
    }
    pollfd p{lfd, POLLIN, 0};
    if (::poll(&p, 1, timeout_s * 1000) != 1) {
        error = "no client connected within " + std::to_string(timeout_s) + " s";
        ::close(lfd);
        return false;
    }
    fd_ = ::accept(lfd, nullptr, nullptr);
    ::close(lfd);
    if (fd_ < 0) {
        error = std::string("accept: ") + std::strerror(errno);
        return false;
    }
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return true;
}

bool Oob::connect_to(const std::string &host, uint16_t port, int timeout_s, std::string &error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *res = nullptr;
    const std::string service = std::to_string(port);
    const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    if (rc != 0) {
        error = "cannot resolve " + host + ": " + gai_strerror(rc);
        return false;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    for (;;) {
        for (addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
            const int fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd < 0) continue;
            if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                const int one = 1;
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fd_ = fd;
                ::freeaddrinfo(res);
                return true;
            }
            ::close(fd);
        }
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server is starting
    }
    ::freeaddrinfo(res);
    error = "cannot connect to " + host + ":" + service + " within " + std::to_string(timeout_s) + " s";
    return false;
}

bool Oob::send(const void *data, size_t len) {
    const auto *p = static_cast<const char *>(data);
    while (len > 0) {
        const ssize_t n = ::send(fd_, p, len, MSG_NOSIGNAL);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

bool Oob::recv(void *data, size_t len, int timeout_ms) {
    auto *p = static_cast<char *>(data);
    while (len > 0) {
        pollfd pfd{fd_, POLLIN, 0};
        if (::poll(&pfd, 1, timeout_ms) != 1) return false;
        const ssize_t n = ::recv(fd_, p, len, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

bool Oob::send_blob(const std::vector<uint8_t> &b) {
    const uint32_t n = static_cast<uint32_t>(b.size());
    return send(&n, sizeof n) && send(b.data(), b.size());
}

bool Oob::recv_blob(std::vector<uint8_t> &b) {
    uint32_t n = 0;
    if (!recv(&n, sizeof n) || n > (1u << 20)) return false;
    b.resize(n);
    return recv(b.data(), n);
}

bool Oob::barrier() {
    char c = 'b';
    return send(&c, 1) && recv(&c, 1);
}

}  // namespace ufi::perf
