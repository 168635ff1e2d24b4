#include "transports/iface/abortive_close.h"

#include <dirent.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>

namespace ufi::transports {

namespace {

// Whether a socket's peer address is `b` (family, address and port).
bool same_address(const sockaddr_storage &a, const sockaddr *b, socklen_t b_len) noexcept {
    if (a.ss_family != b->sa_family) return false;
    if (a.ss_family == AF_INET && b_len >= sizeof(sockaddr_in)) {
        const auto *x = reinterpret_cast<const sockaddr_in *>(&a);
        const auto *y = reinterpret_cast<const sockaddr_in *>(b);
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (a.ss_family == AF_INET6 && b_len >= sizeof(sockaddr_in6)) {
        const auto *x = reinterpret_cast<const sockaddr_in6 *>(&a);
        const auto *y = reinterpret_cast<const sockaddr_in6 *>(b);
        return x->sin6_port == y->sin6_port &&
               std::memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
    }
    return false;
}

// Calls `each(fd)` for every connected (not listening) tcp socket of this process whose local
// port is `port`; `peer_only`, where given, narrows it to the sockets connected to that
// address. The fds are UCT's: another thread may close one meanwhile, and its number may then
// name a new socket, which is checked afresh (a socket that is not one accepted on `port` is
// never touched).
template <typename Each>
void each_accepted_on(uint16_t port, Each &&each, const sockaddr *peer_only = nullptr,
                      socklen_t peer_only_len = 0) noexcept {
    DIR *dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return;
    const int own = ::dirfd(dir);
    while (const dirent *d = ::readdir(dir)) {
        char *end = nullptr;
        const long fd = std::strtol(d->d_name, &end, 10);
        if (end == d->d_name || *end != '\0' || fd < 0 || fd == own) continue;
        const int f = static_cast<int>(fd);
        int type = 0, listening = 0;
        socklen_t n = sizeof type;
        if (::getsockopt(f, SOL_SOCKET, SO_TYPE, &type, &n) != 0 || type != SOCK_STREAM) continue;
        n = sizeof listening;
        if (::getsockopt(f, SOL_SOCKET, SO_ACCEPTCONN, &listening, &n) != 0 || listening) continue;
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        if (::getsockname(f, reinterpret_cast<sockaddr *>(&ss), &len) != 0) continue;
        uint16_t local = 0;
        if (ss.ss_family == AF_INET) {
            local = ntohs(reinterpret_cast<const sockaddr_in *>(&ss)->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            local = ntohs(reinterpret_cast<const sockaddr_in6 *>(&ss)->sin6_port);
        } else {
            continue;
        }
        sockaddr_storage peer{};
        len = sizeof peer;
        if (local != port || ::getpeername(f, reinterpret_cast<sockaddr *>(&peer), &len) != 0) continue;
        if (peer_only != nullptr && !same_address(peer, peer_only, peer_only_len)) continue;
        each(f);
    }
    ::closedir(dir);
}

}  // namespace

unsigned close_abortively_on(uint16_t port) noexcept {
    unsigned n = 0;
    each_accepted_on(port, [&](int fd) {
        const linger l{1, 0};
        n += ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l) == 0;
    });
    return n;
}

bool wait_for_sent_on(uint16_t port, std::chrono::milliseconds bound) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
        bool pending = false;
        each_accepted_on(port, [&](int fd) {
            int queued = 0;
            if (::ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0) pending = true;
        });
        if (!pending) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

unsigned reset_connections(uint16_t local_port, const sockaddr *peer, socklen_t peer_len) noexcept {
    unsigned n = 0;
    each_accepted_on(
        local_port,
        [&](int fd) {
            sockaddr unspec{};
            unspec.sa_family = AF_UNSPEC;
            n += ::connect(fd, &unspec, sizeof unspec) == 0;
        },
        peer, peer_len);
    return n;
}

}  // namespace ufi::transports
