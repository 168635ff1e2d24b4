// A connected endpoint's connection (FI_EP_MSG): fi_connect from the client, fi_accept of a
// ConnRequest on the server, fi_shutdown, and what the connection manager reports, posted on
// the endpoint's EQ: FI_CONNECTED (with the peer's data on the client), an error event
// (refused, with the server's fi_reject data; unreachable), FI_SHUTDOWN when the peer ends
// the connection or dies. The two sides' data-path addresses travel in the CM's private data
// (cm_data.h); the endpoint then reaches its peer as an RDM endpoint reaches an AV entry.
#pragma once

#include "transports/cm/connection_manager.h"

#include <rdma/fabric.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace ufi::runtime::eq {
class Eq;
}

namespace ufi::runtime::ep {

class Endpoint;
struct ConnRequest;

class EndpointConnection {
  public:
    // For `ep`, whose events go to `eq` (bound, enabled endpoint).
    EndpointConnection(Endpoint &ep, eq::Eq &eq) noexcept : ep_(ep), eq_(eq) {}
    ~EndpointConnection();  // leaves the EQ; the CM connection ends with it

    // fi_connect to the listener at `addr`, announcing `address` (our data path's) and the
    // application's `param`. -FI_EINVAL (address, data size), -FI_EISCONN, -FI_ENODEV (no CM).
    int connect(const sockaddr *addr, size_t addrlen, const sockaddr *local, size_t local_len,
                std::span<const uint8_t> address,
                const void *param, size_t paramlen) noexcept;
    // fi_accept of `request`, answering with `address` and `param`.
    int accept(ConnRequest &request, std::span<const uint8_t> address, const void *param,
               size_t paramlen) noexcept;
    // fi_shutdown: ends the connection (the peer gets FI_SHUTDOWN). 0 also when it is over.
    int shutdown() noexcept;
    // fi_getpeer: the peer's socket address. -FI_ENOTCONN before one is known.
    int getpeer(void *addr, size_t *addrlen) noexcept;

  private:
    enum class State : uint8_t { kIdle, kConnecting, kAccepting, kConnected, kOver };
    static void progress_cb(void *arg);  // (EQ reads)
    static void wake_cb(void *arg);      // (UCX's async thread)
    void progress() noexcept;
    int start(State state) noexcept;  // (mu_ held)
    // Registers the connection's progress with the EQ, once, without mu_ held: the EQ runs
    // that progress (which takes mu_) under its own lock, so taking the EQ's lock under mu_
    // would order the two locks both ways (ThreadSanitizer reported it).
    int register_progress() noexcept;
    void post_cm(uint32_t event, std::span<const uint8_t> data) noexcept;
    void post_error(int err, std::span<const uint8_t> data) noexcept;

    Endpoint &ep_;
    eq::Eq &eq_;
    std::mutex mu_;
    State state_ = State::kIdle;
    std::atomic<bool> registered_{false};
    bool accepted_ = false;  // fi_accept made it: it lives on the listener's port
    // fi_shutdown of an accepted connection: the CM connection ends once the peer ended it,
    // or at disconnect_due_ (connection.cpp says why).
    bool disconnect_deferred_ = false;
    std::chrono::steady_clock::time_point disconnect_due_{};
    std::shared_ptr<transports::cm::ConnectionManager> cm_;
    std::unique_ptr<transports::cm::CmConnection> conn_;
    sockaddr_storage peer_{};
    size_t peer_len_ = 0;
};

}  // namespace ufi::runtime::ep
