#include "transports/failure_cause.h"

#include "transports/address.h"
#include "transports/address_svc.h"
#include "transports/resource.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace ufi::transports {

namespace {

// What one non-blocking connect to `sa` answers within `bound_ms`: 0 (connected), an errno,
// or ETIMEDOUT when nothing came back in time.
int try_connect(const sockaddr_storage &sa, socklen_t len, int bound_ms) noexcept {
    const int fd = ::socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    int err = 0;
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&sa), len) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            const int ready = ::poll(&p, 1, bound_ms);
            if (ready <= 0) {
                err = ETIMEDOUT;
            } else {
                socklen_t n = sizeof err;
                if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &n) != 0) err = errno;
            }
        }
    }
    ::close(fd);  // (a listener that accepted sees a connection that closes at once)
    return err;
}

}  // namespace

FailureCause tcp_failure_cause(const address::EndpointAddress &peer, bool over_loopback,
                               base::Status status, bool was_connected, int bound_ms) noexcept {
    switch (status) {
        case base::Status::kConnectionReset: return FailureCause::kReset;
        case base::Status::kRejected: return FailureCause::kRefused;
        case base::Status::kTimedOut: return FailureCause::kTimedOut;
        case base::Status::kEndpointTimeout:
        case base::Status::kUnreachable: break;
        default: return FailureCause::kAsReported;
    }
    if (bound_ms <= 0) return FailureCause::kAsReported;  // no time left to ask
    sockaddr_storage sa{};
    socklen_t len = 0;
    if (!address::tcp_socket_address(peer, AF_UNSPEC, sa, len, over_loopback)) return FailureCause::kAsReported;
    switch (try_connect(sa, len, bound_ms)) {
        case 0:  // its listener is there
            return was_connected ? FailureCause::kReset : FailureCause::kAsReported;
        case ECONNREFUSED:  // nothing listens: a connected peer's process is gone
            return was_connected ? FailureCause::kReset : FailureCause::kRefused;
        case ETIMEDOUT: return FailureCause::kTimedOut;
        case ENETUNREACH:
        case EHOSTUNREACH:
        case EHOSTDOWN:
        case ENETDOWN: return FailureCause::kUnreachable;
        default: return FailureCause::kAsReported;
    }
}

FailureCause failure_cause(const Resource &local, const address::EndpointAddress &peer,
                           base::Status status, bool was_connected, int bound_ms) noexcept {
    if (local.tl == "tcp") {
        return tcp_failure_cause(peer, local.is_loopback_netdev, status, was_connected, bound_ms);
    }
    if (local.type == DeviceType::SharedMemory && was_connected &&
        status == base::Status::kEndpointTimeout) {
        return FailureCause::kReset;
    }
    if (status == base::Status::kConnectionReset) return FailureCause::kReset;
    return FailureCause::kAsReported;
}

const char *describe(FailureCause cause) noexcept {
    switch (cause) {
        case FailureCause::kReset: return "connection reset by the peer (it closed the connection or exited)";
        case FailureCause::kRefused: return "connection refused (nothing listens at the peer's address)";
        case FailureCause::kTimedOut: return "connection timed out (the peer's host did not answer)";
        case FailureCause::kUnreachable: return "host unreachable (no route to the peer's host)";
        case FailureCause::kAsReported: break;
    }
    return "";
}

}  // namespace ufi::transports
