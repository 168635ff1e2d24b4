// UCT's connection manager (uct_cm_*: tcp's sockcm here, rdmacm on InfiniBand), as ufi's
// connected endpoints use it: a listener on a socket address that reports connection
// requests with the client's private data; a client connection that carries private data to
// the server and gets the server's back; accept, reject, disconnect. The CM connections carry
// no data: the two sides exchange their data-path addresses in the private data and build
// data lanes from them (uct-brief section 10).
//
// UCT calls the callbacks on UCS's async thread. They only record what happened (and wake the
// owner through its Waker); UCT calls they lead to (a client's notify once the server
// accepted, the disconnect that answers the peer's) are made on the owner's thread, in next(),
// as UCP defers them to progress. One is not: the client's connect request is sent from the
// resolve callback itself (connection_manager.cpp says why).
#pragma once

#include "transports/status.h"
#include "transports/ucx_fwd.h"
#include "transports/ucx_handles.h"

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace ufi::transports::cm {

// What a listener or a connection reports to its owner, in order.
struct CmEvent {
    enum class Kind : uint8_t {
        kRequest,       // listener: a client asks to connect (`request`, `data`, `peer`)
        kConnected,     // client: the server accepted (`data`: its private data); up
        kEstablished,   // server: the client confirmed the accepted connection; up
        kRefused,       // client: the server refused (uct_listener_reject)
        kFailed,        // client: the server cannot be reached, or the attempt broke (`status`)
        kDisconnected,  // either side, once up: the peer disconnected or the connection broke
    };
    Kind kind = Kind::kFailed;
    Status status = Status::kOk;
    std::vector<uint8_t> data;
    uct_conn_request_h request = nullptr;
    sockaddr_storage peer{};
};

// Called on UCX's async thread after an event was queued (or a step became due): wakes the
// owner, which then calls next(). Must not block or call into the CM.
struct Waker {
    void (*fn)(void *arg) = nullptr;
    void *arg = nullptr;
};

namespace detail {
struct EventQueue;
struct ConnState;
}  // namespace detail

class ConnectionManager;

class CmListener {
  public:
    ~CmListener();  // requests not taken are rejected
    CmListener(const CmListener &) = delete;
    CmListener &operator=(const CmListener &) = delete;

    // The oldest event, if any (kRequest only).
    bool next(CmEvent &out);
    // The address it listens on (the port the kernel chose for port 0).
    const sockaddr_storage &address() const noexcept { return address_; }

  private:
    friend class ConnectionManager;
    CmListener() = default;
    std::shared_ptr<ConnectionManager> cm_;
    std::shared_ptr<detail::EventQueue> queue_;  // (outlives the handle: callbacks use it)
    Listener handle_;
    sockaddr_storage address_{};
};

class CmConnection {
  public:
    ~CmConnection();  // disconnects if up, then destroys the CM endpoint
    CmConnection(const CmConnection &) = delete;
    CmConnection &operator=(const CmConnection &) = delete;

    // Makes the steps that became due, then pops the oldest event, if any.
    bool next(CmEvent &out);
    // Ends the connection (the peer gets kDisconnected); kOk also when it was over already.
    Status disconnect();
    // Waits, at most `bound`, for the peer to end a connection that is up: an accepted one
    // lives on its listener's port, and the side that closes a tcp connection first keeps it
    // in TIME_WAIT, which stops a listener of UCT's tcp iface (no SO_REUSEADDR) from taking
    // that port for a minute. Whether the peer ended it (or it was not up).
    bool await_peer_close(std::chrono::milliseconds bound) noexcept;

  private:
    friend class ConnectionManager;
    CmConnection() = default;
    // A client bound to a port the application chose resets its connection before its
    // uct_ep_disconnect (which sends a FIN), unless the peer ended it already: the side that
    // ends a tcp connection with the first FIN keeps its port in TIME_WAIT for a minute, and
    // that port is one the application may listen on again (fabtests' fi_msg_sockets client
    // binds to 9229, which its next test listens on). Whether it reset; under cm_->mu_. After
    // a reset, await_own_callback() before the socket may close (connection_manager.cpp).
    bool reset_if_bound();
    void await_own_callback() noexcept;
    std::shared_ptr<ConnectionManager> cm_;
    uint16_t bound_port_ = 0;      // client: the local port it was bound to, if any
    sockaddr_storage peer_{};      // client: the server's address
    socklen_t peer_len_ = 0;
    std::shared_ptr<detail::ConnState> state_;  // (outlives the handle: callbacks use it)
    CmEp ep_;
};

class ConnectionManager : public std::enable_shared_from_this<ConnectionManager> {
  public:
    // A CM on a worker of its own, of the first component whose CM opens (tcp's sockcm
    // here). An error, with `why` set, when none does.
    static Status open(std::shared_ptr<ConnectionManager> &out, std::string &why);
    // The process's one CM, opened on first use and kept while anyone holds it (passive and
    // connected endpoints share it: one async context and worker for all connections).
    static Status shared(std::shared_ptr<ConnectionManager> &out, std::string &why);
    ~ConnectionManager();

    // The most private data one connection request or answer carries.
    size_t max_private_data() const noexcept { return max_priv_; }

    // Listens on `addr` (port 0: one the kernel picks; UCT's listener reuses a port a closed
    // listener left in TIME_WAIT). `backlog` <= 0: the CM's default.
    Status listen(const sockaddr *addr, socklen_t len, int backlog, Waker waker,
                  std::unique_ptr<CmListener> &out);
    // Connects to a listener at `addr`, with `data` (at most max_private_data()) for it; from
    // the local socket address `local` where one is given (else the kernel picks one).
    Status connect(const sockaddr *addr, socklen_t len, const sockaddr *local, socklen_t local_len,
                   std::span<const uint8_t> data,
                   Waker waker, std::unique_ptr<CmConnection> &out);
    // Accepts a request `listener` reported, answering with `data`. The request is used up
    // whatever the result.
    Status accept(CmListener &listener, uct_conn_request_h request, std::span<const uint8_t> data,
                  Waker waker, std::unique_ptr<CmConnection> &out);
    // Refuses a request (the client gets kRefused).
    Status reject(CmListener &listener, uct_conn_request_h request);

    // Progresses the CM's worker (work UCT deferred to it). next() calls it.
    void progress() noexcept;

  private:
    friend class CmConnection;
    friend class CmListener;
    ConnectionManager() = default;
    std::mutex mu_;  // every UCT call on this CM from the owners' threads
    AsyncContext async_;
    Worker worker_;
    Cm cm_;
    size_t max_priv_ = 0;
};

}  // namespace ufi::transports::cm
