// A connected endpoint's connection (connection.h).
#include "runtime/ep/connection.h"

#include "base/config/config.h"
#include "base/log/log.h"
#include "runtime/ep/cm_data.h"
#include "runtime/ep/endpoint.h"
#include "runtime/ep/passive_endpoint.h"
#include "runtime/eq/eq.h"
#include "runtime/info/capabilities.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace ufi::runtime::ep {

using log::Subsys;
namespace cm = transports::cm;

namespace {

// How long the accepting side of a connection leaves its peer to end it first
// (UFI_NAMED_CLOSE_WAIT; the destructor's comment says why).
std::chrono::milliseconds named_close_wait() {
    static const auto bound = std::chrono::milliseconds(
        std::clamp<int64_t>(config::registry().get_int("UFI_NAMED_CLOSE_WAIT"), 0, 60000));
    return bound;
}

// fi_shutdown's bound for the sends already made to leave (Endpoint::settle_sends).
constexpr int kSettleMs = 1000;

}  // namespace

EndpointConnection::~EndpointConnection() {
    if (registered_) eq_.remove_progress({&EndpointConnection::progress_cb, this});
    std::lock_guard<std::mutex> lock(mu_);
    // An accepted connection lives on the listener's port: closing it first would keep that
    // port in TIME_WAIT (a server restarted there, or an RDM endpoint listening there next,
    // could not take it for a minute). Its peer gets UFI_NAMED_CLOSE_WAIT to close first, as
    // for RDM endpoints on named ports (transports/iface/close_order.h).
    if (conn_ && accepted_ && (state_ == State::kConnected || disconnect_deferred_)) {
        const auto bound = disconnect_deferred_
                               ? std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                              disconnect_due_ - std::chrono::steady_clock::now()),
                                          std::chrono::milliseconds(0))
                               : named_close_wait();
        if (!conn_->await_peer_close(bound)) {
            UFI_LOG_INFO(Subsys::EpCtrl,
                         "fi_close: the peer kept the connection after {} ms: closing it first "
                         "(the listener's port stays in TIME_WAIT for a while)",
                         named_close_wait().count());
        }
    }
    conn_.reset();  // (disconnects if up)
}

int EndpointConnection::start(State state) noexcept {
    // (mu_ held)
    if (state_ != State::kIdle) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: the endpoint is {}", state == State::kConnecting ? "fi_connect" : "fi_accept",
                     state_ == State::kOver ? "shut down" : "connecting or connected already");
        return state_ == State::kOver ? -FI_EOPBADSTATE : -FI_EISCONN;
    }
    state_ = state;
    return 0;
}

int EndpointConnection::register_progress() noexcept {
    bool expected = false;
    if (!registered_.compare_exchange_strong(expected, true)) return 0;
    if (const int rc = eq_.add_progress({&EndpointConnection::progress_cb, this}); rc != 0) {
        registered_ = false;
        return rc;
    }
    return 0;
}

int EndpointConnection::connect(const sockaddr *addr, size_t addrlen, const sockaddr *local,
                                size_t local_len, std::span<const uint8_t> address,
                                const void *param, size_t paramlen) noexcept {
    if (addr == nullptr || addrlen < sizeof(sockaddr_in) || addrlen > sizeof peer_ ||
        (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: the address is no IPv4 or IPv6 socket address");
        return -FI_EINVAL;
    }
    if (paramlen > info::kCmDataSize || (paramlen != 0 && param == nullptr)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: {} bytes of connection data (at most {})", paramlen,
                     info::kCmDataSize);
        return -FI_EINVAL;
    }
    if (const int rc = register_progress(); rc != 0) return rc;
    std::lock_guard<std::mutex> lock(mu_);
    if (const int rc = start(State::kConnecting); rc != 0) return rc;
    std::string why;
    if (cm::ConnectionManager::shared(cm_, why) != transports::kOk) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: no connection manager: {}", why);
        state_ = State::kIdle;
        return -FI_ENODEV;
    }
    try {
        const std::vector<uint8_t> data = cm_data::pack(cm_data::kConnect, address, param, paramlen);
        const transports::Status s =
            cm_->connect(addr, static_cast<socklen_t>(addrlen), local, static_cast<socklen_t>(local_len),
                         data, {&EndpointConnection::wake_cb, this}, conn_);
        if (s != transports::kOk) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: {}", transports::to_string(s));
            state_ = State::kIdle;
            return transports::fi_errno_of(s);
        }
    } catch (const std::bad_alloc &) {
        state_ = State::kIdle;
        return -FI_ENOMEM;
    }
    std::memcpy(&peer_, addr, addrlen);
    peer_len_ = addrlen;
    return 0;
}

int EndpointConnection::accept(ConnRequest &request, std::span<const uint8_t> address, const void *param,
                               size_t paramlen) noexcept {
    if (paramlen > info::kCmDataSize || (paramlen != 0 && param == nullptr)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_accept: {} bytes of connection data (at most {})", paramlen,
                     info::kCmDataSize);
        return -FI_EINVAL;
    }
    if (request.used) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_accept: the connection request was accepted or refused already");
        return -FI_EINVAL;
    }
    if (const int rc = register_progress(); rc != 0) return rc;
    std::lock_guard<std::mutex> lock(mu_);
    if (const int rc = start(State::kAccepting); rc != 0) return rc;
    // The client's data path first: it may send as soon as it sees FI_CONNECTED.
    if (const int rc = ep_.adopt_peer(request.peer_address); rc != 0) {
        state_ = State::kIdle;
        return rc;
    }
    request.used = true;
    accepted_ = true;
    cm_ = request.cm;
    try {
        const std::vector<uint8_t> data = cm_data::pack(cm_data::kAccept, address, param, paramlen);
        const transports::Status s =
            cm_->accept(*request.listener, request.request, data, {&EndpointConnection::wake_cb, this}, conn_);
        if (s != transports::kOk) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_accept: {}", transports::to_string(s));
            state_ = State::kOver;
            return transports::fi_errno_of(s);
        }
    } catch (const std::bad_alloc &) {
        (void)cm_->reject(*request.listener, request.request);
        state_ = State::kOver;
        return -FI_ENOMEM;
    }
    peer_ = request.peer;
    peer_len_ = peer_.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    return 0;
}

int EndpointConnection::shutdown() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kIdle) return -FI_ENOTCONN;
    const bool was_up = state_ == State::kConnected;
    // Sends that completed before the call reach the peer, as over a socket closed after
    // them: they leave this process before the connection ends (bounded: a peer that does
    // not progress or is gone costs at most kSettleMs).
    if (was_up) ep_.settle_sends(kSettleMs);
    state_ = State::kOver;
    if (conn_ && was_up && accepted_ && named_close_wait().count() > 0) {
        // The accepting side ends the CM connection after its peer did, or once
        // UFI_NAMED_CLOSE_WAIT passed (checked by EQ reads and at fi_close), not at once: both
        // sides of fabtests' programs call fi_shutdown together, and a close from both keeps
        // the listener's port in TIME_WAIT on this side. The data path stops now.
        disconnect_deferred_ = true;
        disconnect_due_ = std::chrono::steady_clock::now() + named_close_wait();
    } else if (conn_) {
        (void)conn_->disconnect();
    }
    ep_.connection_lost(-FI_ESHUTDOWN);
    // This side's EQ hears of it too, as with libfabric's verbs and tcp providers (fabtests'
    // fi_cm_data waits for it after its own fi_shutdown).
    if (was_up) post_cm(FI_SHUTDOWN, {});
    return 0;
}

int EndpointConnection::getpeer(void *addr, size_t *addrlen) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (peer_len_ == 0) return -FI_ENOTCONN;
    const size_t room = *addrlen;
    *addrlen = peer_len_;
    if (addr == nullptr || room < peer_len_) return -FI_ETOOSMALL;
    std::memcpy(addr, &peer_, peer_len_);
    return 0;
}

void EndpointConnection::progress_cb(void *arg) {
    static_cast<EndpointConnection *>(arg)->progress();
}

void EndpointConnection::wake_cb(void *arg) {
    static_cast<EndpointConnection *>(arg)->eq_.nudge();
}

void EndpointConnection::post_cm(uint32_t event, std::span<const uint8_t> data) noexcept {
    try {
        fi_eq_cm_entry entry{};
        entry.fid = &ep_.fid;
        std::vector<uint8_t> bytes(sizeof entry + data.size());
        std::memcpy(bytes.data(), &entry, sizeof entry);
        if (!data.empty()) std::memcpy(bytes.data() + sizeof entry, data.data(), data.size());
        (void)eq_.post(event, bytes.data(), bytes.size(), eq::Eq::Origin::Provider);
    } catch (const std::bad_alloc &) {
        UFI_LOG_WARN(Subsys::EpCtrl, "a connection event was lost: out of memory");
    }
}

void EndpointConnection::post_error(int err, std::span<const uint8_t> data) noexcept {
    fi_eq_err_entry e{};
    e.fid = &ep_.fid;
    e.err = err;
    e.prov_errno = -err;
    e.err_data = data.empty() ? nullptr : const_cast<uint8_t *>(data.data());
    e.err_data_size = data.size();
    (void)eq_.post_error(e, eq::Eq::Origin::Provider);
}

void EndpointConnection::progress() noexcept {
    std::unique_lock<std::mutex> lock(mu_);
    if (!conn_) return;
    if (disconnect_deferred_ && (conn_->await_peer_close(std::chrono::milliseconds(0)) ||
                                 std::chrono::steady_clock::now() >= disconnect_due_)) {
        disconnect_deferred_ = false;
        (void)conn_->disconnect();  // (kOk when the peer ended it already)
    }
    cm::CmEvent e;
    while (conn_ && conn_->next(e)) {
        switch (e.kind) {
            case cm::CmEvent::Kind::kConnected: {  // client: the server answered
                cm_data::Parsed d;
                if (!cm_data::parse(e.data, d) || d.kind == cm_data::kConnect) {
                    UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: the server's answer is not ufi's");
                    (void)conn_->disconnect();
                    state_ = State::kOver;
                    post_error(FI_ECONNREFUSED, {});
                    break;
                }
                if (d.kind == cm_data::kReject) {
                    (void)conn_->disconnect();
                    state_ = State::kOver;
                    post_error(FI_ECONNREFUSED, d.data);
                    break;
                }
                if (const int rc = ep_.adopt_peer(d.address); rc != 0) {
                    (void)conn_->disconnect();
                    state_ = State::kOver;
                    post_error(-rc, {});
                    break;
                }
                state_ = State::kConnected;
                post_cm(FI_CONNECTED, d.data);
                break;
            }
            case cm::CmEvent::Kind::kEstablished:  // server: the client confirmed
                if (state_ == State::kAccepting) {
                    state_ = State::kConnected;
                    post_cm(FI_CONNECTED, {});
                }
                break;
            case cm::CmEvent::Kind::kRefused:
                state_ = State::kOver;
                post_error(FI_ECONNREFUSED, {});
                break;
            case cm::CmEvent::Kind::kFailed:
                state_ = State::kOver;
                post_error(e.status == transports::Status::kUnreachable ? FI_EHOSTUNREACH : FI_ECONNREFUSED, {});
                break;
            case cm::CmEvent::Kind::kDisconnected:
                if (state_ != State::kOver) {
                    state_ = State::kOver;
                    ep_.connection_lost(-FI_ECONNRESET);
                    post_cm(FI_SHUTDOWN, {});
                }
                break;
            case cm::CmEvent::Kind::kRequest:
                break;
        }
    }
}

}  // namespace ufi::runtime::ep
