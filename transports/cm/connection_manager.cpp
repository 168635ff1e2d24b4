// UCT's connection manager for ufi's connected endpoints (connection_manager.h).
#include "transports/cm/connection_manager.h"

#include "base/log/log.h"
#include "transports/iface/abortive_close.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>
#include <ucs/async/async_fwd.h>
#include <ucs/sys/sock.h>

#include <netinet/in.h>

#include <cstring>
#include <thread>

namespace ufi::transports::cm {

using log::Subsys;

namespace detail {

struct EventQueue {
    std::mutex mu;
    std::deque<CmEvent> events;
    Waker waker;

    void push(CmEvent &&e) {
        {
            std::lock_guard<std::mutex> lock(mu);
            events.push_back(std::move(e));
        }
        wake();
    }
    void wake() const {
        if (waker.fn != nullptr) waker.fn(waker.arg);
    }
    bool pop(CmEvent &out) {
        std::lock_guard<std::mutex> lock(mu);
        if (events.empty()) return false;
        out = std::move(events.front());
        events.pop_front();
        return true;
    }
};

// One connection's state, shared with UCT's callbacks (through their `arg`).
struct ConnState {
    EventQueue queue;
    uct_ep_h ep = nullptr;   // set once uct_ep_create returned (callbacks may come before)
    // Client: held from before uct_ep_create until `ep` is set, so that the resolve callback
    // (which may come in between) finds the handle it must connect.
    std::mutex creating;
    bool client = false;
    std::vector<uint8_t> request_data;  // client: sent once the address resolved
    // Steps the callbacks left to the owner's thread (under queue.mu).
    bool accepted = false;       // client: the server accepted; uct_cm_client_ep_conn_notify
    std::vector<uint8_t> answer; //   is due, then kConnected with this data
    bool peer_gone = false;      // the peer disconnected: our uct_ep_disconnect is due
    bool disconnect_called = false;  // uct_ep_disconnect was called (once only: UCT logs an
                                     // error on a second call)
    bool callback_seen = false;  // UCT's disconnect callback fired (never cleared)
    bool up = false;             // connected (client: notified; server: accepted)
    bool ended = false;          // disconnected (either way) or failed
};

}  // namespace detail

namespace {

uint16_t port_of(const sockaddr *sa) noexcept {
    if (sa->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in *>(sa)->sin_port);
    if (sa->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_port);
    return 0;
}

std::vector<uint8_t> private_data_of(const uct_cm_remote_data_t *remote) {
    std::vector<uint8_t> out;
    if (remote != nullptr && (remote->field_mask & UCT_CM_REMOTE_DATA_FIELD_CONN_PRIV_DATA) &&
        (remote->field_mask & UCT_CM_REMOTE_DATA_FIELD_CONN_PRIV_DATA_LENGTH) &&
        remote->conn_priv_data != nullptr) {
        const auto *p = static_cast<const uint8_t *>(remote->conn_priv_data);
        out.assign(p, p + remote->conn_priv_data_length);
    }
    return out;
}

// ---- callbacks (UCS's async thread) ----

void on_request(uct_listener_h, void *arg, const uct_cm_listener_conn_request_args_t *args) {
    auto *q = static_cast<detail::EventQueue *>(arg);
    UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager: connection request");
    CmEvent e;
    e.kind = CmEvent::Kind::kRequest;
    e.request = args->conn_request;
    if (args->field_mask & UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_REMOTE_DATA) {
        e.data = private_data_of(args->remote_data);
    }
    if ((args->field_mask & UCT_CM_LISTENER_CONN_REQUEST_ARGS_FIELD_CLIENT_ADDR) &&
        args->client_address.addr != nullptr &&
        args->client_address.addrlen <= sizeof e.peer) {
        std::memcpy(&e.peer, args->client_address.addr, args->client_address.addrlen);
    }
    q->push(std::move(e));
}

// The client's socket connected: send the request with its data. uct_ep_connect is called
// here, on UCX's async thread with the CM's async context blocked (UCT allows it in this
// callback), not deferred to the owner's thread as the other steps are: UCX 1.13's tcp sockcm
// updates the endpoint's state in uct_ep_connect without blocking the async context, and that
// update raced with the async thread's own, losing about 1 connection request in 100.
ucs_status_t on_resolved(void *arg, const uct_cm_ep_resolve_args_t *args) {
    auto *s = static_cast<detail::ConnState *>(arg);
    ucs_status_t status =
        (args->field_mask & UCT_CM_EP_RESOLVE_ARGS_FIELD_STATUS) ? args->status : UCS_OK;
    if (status == UCS_OK) {
        uct_ep_h ep;
        {
            std::lock_guard<std::mutex> created(s->creating);
            ep = s->ep;
        }
        uct_ep_connect_params_t params{};
        params.field_mask = UCT_EP_CONNECT_PARAM_FIELD_PRIVATE_DATA | UCT_EP_CONNECT_PARAM_FIELD_PRIVATE_DATA_LENGTH;
        params.private_data = s->request_data.data();
        params.private_data_length = s->request_data.size();
        status = ep != nullptr ? uct_ep_connect(ep, &params) : UCS_ERR_NO_ELEM;
        UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager: address resolved, connect request: {}",
                      ucs_status_string(status));
        if (status == UCS_OK) return UCS_OK;
    }
    CmEvent e;
    e.kind = CmEvent::Kind::kFailed;
    e.status = status_of(status);
    {
        std::lock_guard<std::mutex> lock(s->queue.mu);
        s->ended = true;
    }
    s->queue.push(std::move(e));
    // (An error from uct_ep_connect goes back to UCT, which then stops the endpoint; one UCT
    // reported is already known to it.)
    return args->field_mask & UCT_CM_EP_RESOLVE_ARGS_FIELD_STATUS && args->status != UCS_OK ? UCS_OK : status;
}

void on_client_connect(uct_ep_h, void *arg, const uct_cm_ep_client_connect_args_t *args) {
    auto *s = static_cast<detail::ConnState *>(arg);
    UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager: client connect callback");
    const ucs_status_t status =
        (args->field_mask & UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_STATUS) ? args->status : UCS_OK;
    if (status == UCS_OK) {
        std::vector<uint8_t> data;
        if (args->field_mask & UCT_CM_EP_CLIENT_CONNECT_ARGS_FIELD_REMOTE_DATA) {
            data = private_data_of(args->remote_data);
        }
        {
            std::lock_guard<std::mutex> lock(s->queue.mu);
            s->accepted = true;
            s->answer = std::move(data);
        }
        s->queue.wake();
        return;
    }
    CmEvent e;
    e.kind = status == UCS_ERR_REJECTED ? CmEvent::Kind::kRefused : CmEvent::Kind::kFailed;
    e.status = status_of(status);
    {
        std::lock_guard<std::mutex> lock(s->queue.mu);
        s->ended = true;
    }
    s->queue.push(std::move(e));
}

void on_server_notify(uct_ep_h, void *arg, const uct_cm_ep_server_conn_notify_args_t *args) {
    auto *s = static_cast<detail::ConnState *>(arg);
    const ucs_status_t status =
        (args->field_mask & UCT_CM_EP_SERVER_CONN_NOTIFY_ARGS_FIELD_STATUS) ? args->status : UCS_OK;
    UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager: the client confirmed: {}", ucs_status_string(status));
    CmEvent e;
    if (status == UCS_OK) {
        e.kind = CmEvent::Kind::kEstablished;
        std::lock_guard<std::mutex> lock(s->queue.mu);
        s->up = true;
    } else {
        e.kind = CmEvent::Kind::kFailed;
        e.status = status_of(status);
        std::lock_guard<std::mutex> lock(s->queue.mu);
        s->ended = true;
    }
    s->queue.push(std::move(e));
}

void on_disconnect(uct_ep_h, void *arg) {
    auto *s = static_cast<detail::ConnState *>(arg);
    UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager: the peer disconnected");
    bool report;
    {
        std::lock_guard<std::mutex> lock(s->queue.mu);
        report = !s->ended;
        s->ended = true;
        s->peer_gone = true;
        s->callback_seen = true;
    }
    if (report) {
        CmEvent e;
        e.kind = CmEvent::Kind::kDisconnected;
        s->queue.push(std::move(e));
    } else {
        s->queue.wake();
    }
}

}  // namespace

// ---- ConnectionManager ----

Status ConnectionManager::open(std::shared_ptr<ConnectionManager> &out, std::string &why) {
    std::shared_ptr<ConnectionManager> m(new (std::nothrow) ConnectionManager());
    if (!m) return Status::kNoMemory;
    Status s = AsyncContext::create(AsyncMode::kThreadSpinlock, m->async_);
    if (s != kOk) {
        why = "ucs_async_context_create: " + std::string(ucs_status_string(ucs_status_of(s)));
        return s;
    }
    s = Worker::create(m->async_, ThreadMode::kSerialized, m->worker_);
    if (s != kOk) {
        why = "uct_worker_create: " + std::string(ucs_status_string(ucs_status_of(s)));
        return s;
    }
    ComponentList components;
    s = ComponentList::query(components);
    if (s != kOk) {
        why = "uct_query_components: " + std::string(ucs_status_string(ucs_status_of(s)));
        return s;
    }
    why = "no UCT component has a connection manager";
    for (uct_component_h comp : components.components()) {
        uct_component_attr_t attr{};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_FLAGS;
        if (uct_component_query(comp, &attr) != UCS_OK || !(attr.flags & UCT_COMPONENT_FLAG_CM)) continue;
        CmConfig config;
        if (CmConfig::read(comp, config) != kOk) continue;
        // Listeners bind with SO_REUSEADDR (UCX_TCP_CM_REUSEADDR, off by default): a server
        // restarted at once listens again on its port, which its closed connections may still
        // hold in TIME_WAIT. (Every CM's configuration has the field: uct_cm_config_t's.)
        if (uct_config_modify(config.get(), "CM_REUSEADDR", "y") != UCS_OK) {
            UFI_LOG_DEBUG(Subsys::EpCtrl, "{}: its CM has no CM_REUSEADDR setting", attr.name);
        }
        Cm cm;
        const Status opened = Cm::open(comp, m->worker_, config, cm);
        if (opened != kOk) {
            why = std::string(attr.name) + ": uct_cm_open: " + ucs_status_string(ucs_status_of(opened));
            continue;  // (rdmacm without InfiniBand)
        }
        uct_cm_attr_t cm_attr{};
        cm_attr.field_mask = UCT_CM_ATTR_FIELD_MAX_CONN_PRIV;
        if (uct_cm_query(cm.get(), &cm_attr) != UCS_OK) continue;
        m->cm_ = std::move(cm);
        m->max_priv_ = cm_attr.max_conn_priv;
        UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager of component {}: private data up to {} B",
                      attr.name, m->max_priv_);
        out = std::move(m);
        why.clear();
        return kOk;
    }
    return Status::kUnsupported;
}

Status ConnectionManager::shared(std::shared_ptr<ConnectionManager> &out, std::string &why) {
    static std::mutex mu;
    static std::weak_ptr<ConnectionManager> one;
    std::lock_guard<std::mutex> lock(mu);
    if (auto cm = one.lock()) {
        out = std::move(cm);
        return kOk;
    }
    std::shared_ptr<ConnectionManager> cm;
    const Status s = open(cm, why);
    if (s != kOk) return s;
    one = cm;
    // Kept for the process's life once opened (never closed: its async thread and sockets go
    // with the process): UCX 1.13's tcp CM, closed and opened again in one process, sometimes
    // never reported the next connection request (6 runs in 100 of a connect-and-refuse test).
    static auto *kept = new std::shared_ptr<ConnectionManager>();
    *kept = cm;
    out = std::move(cm);
    return kOk;
}

ConnectionManager::~ConnectionManager() = default;

Status ConnectionManager::listen(const sockaddr *addr, socklen_t len, int backlog, Waker waker,
                                 std::unique_ptr<CmListener> &out) {
    std::unique_ptr<CmListener> l(new (std::nothrow) CmListener());
    if (!l) return Status::kNoMemory;
    try {
        l->queue_ = std::make_shared<detail::EventQueue>();
    } catch (const std::bad_alloc &) {
        return Status::kNoMemory;
    }
    l->queue_->waker = waker;
    l->cm_ = shared_from_this();
    uct_listener_params_t params{};
    params.field_mask = UCT_LISTENER_PARAM_FIELD_CONN_REQUEST_CB | UCT_LISTENER_PARAM_FIELD_USER_DATA;
    params.conn_request_cb = on_request;
    params.user_data = l->queue_.get();
    if (backlog > 0) {
        params.field_mask |= UCT_LISTENER_PARAM_FIELD_BACKLOG;
        params.backlog = backlog;
    }
    std::lock_guard<std::mutex> lock(mu_);
    uct_listener_h h = nullptr;
    const Status s = status_of(uct_listener_create(cm_.get(), addr, len, &params, &h));
    if (s != kOk) return s;
    l->handle_ = Listener(h);
    uct_listener_attr_t attr{};
    attr.field_mask = UCT_LISTENER_ATTR_FIELD_SOCKADDR;
    if (uct_listener_query(h, &attr) == UCS_OK) {
        l->address_ = attr.sockaddr;
    } else if (len <= sizeof l->address_) {
        std::memcpy(&l->address_, addr, len);
    }
    out = std::move(l);
    return kOk;
}

Status ConnectionManager::connect(const sockaddr *addr, socklen_t len, const sockaddr *local,
                                  socklen_t local_len, std::span<const uint8_t> data,
                                  Waker waker, std::unique_ptr<CmConnection> &out) {
    if (data.size() > max_priv_) return Status::kInvalidParam;
    std::unique_ptr<CmConnection> c(new (std::nothrow) CmConnection());
    if (!c) return Status::kNoMemory;
    try {
        c->state_ = std::make_shared<detail::ConnState>();
        c->state_->request_data.assign(data.begin(), data.end());
    } catch (const std::bad_alloc &) {
        return Status::kNoMemory;
    }
    c->state_->queue.waker = waker;
    c->state_->client = true;
    c->cm_ = shared_from_this();
    ucs_sock_addr_t sa{addr, len};
    uct_ep_params_t params{};
    params.field_mask = UCT_EP_PARAM_FIELD_CM | UCT_EP_PARAM_FIELD_SOCKADDR |
                        UCT_EP_PARAM_FIELD_CM_RESOLVE_CB | UCT_EP_PARAM_FIELD_SOCKADDR_CONNECT_CB_CLIENT |
                        UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB | UCT_EP_PARAM_FIELD_USER_DATA |
                        UCT_EP_PARAM_FIELD_SOCKADDR_CB_FLAGS;
    params.cm = cm_.get();
    params.sockaddr = &sa;
    params.cm_resolve_cb = on_resolved;
    params.sockaddr_cb_client = on_client_connect;
    params.disconnect_cb = on_disconnect;
    params.user_data = c->state_.get();
    params.sockaddr_cb_flags = UCT_CB_FLAG_ASYNC;
    ucs_sock_addr_t local_sa{local, local_len};
    if (local != nullptr) {
        params.field_mask |= UCT_EP_PARAM_FIELD_LOCAL_SOCKADDR;
        params.local_sockaddr = &local_sa;
        c->bound_port_ = port_of(local);
        if (len <= sizeof c->peer_) {
            std::memcpy(&c->peer_, addr, len);
            c->peer_len_ = len;
        }
    }
    std::lock_guard<std::mutex> lock(mu_);
    uct_ep_h ep = nullptr;
    {
        std::lock_guard<std::mutex> creating(c->state_->creating);
        const Status s = status_of(uct_ep_create(&params, &ep));
        if (s != kOk) return s;
        std::lock_guard<std::mutex> slock(c->state_->queue.mu);
        c->state_->ep = ep;
    }
    c->ep_ = CmEp(ep);
    out = std::move(c);
    return kOk;
}

Status ConnectionManager::accept(CmListener &listener, uct_conn_request_h request,
                                 std::span<const uint8_t> data, Waker waker,
                                 std::unique_ptr<CmConnection> &out) {
    std::unique_ptr<CmConnection> c(new (std::nothrow) CmConnection());
    if (!c || data.size() > max_priv_) {
        (void)reject(listener, request);  // (the request must not be left behind)
        return !c ? Status::kNoMemory : Status::kInvalidParam;
    }
    try {
        c->state_ = std::make_shared<detail::ConnState>();
    } catch (const std::bad_alloc &) {
        (void)reject(listener, request);
        return Status::kNoMemory;
    }
    c->state_->queue.waker = waker;
    c->cm_ = shared_from_this();
    uct_ep_params_t params{};
    params.field_mask = UCT_EP_PARAM_FIELD_CM | UCT_EP_PARAM_FIELD_CONN_REQUEST |
                        UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER |
                        UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB | UCT_EP_PARAM_FIELD_USER_DATA |
                        UCT_EP_PARAM_FIELD_SOCKADDR_CB_FLAGS | UCT_EP_PARAM_FIELD_PRIV_DATA |
                        UCT_EP_PARAM_FIELD_PRIV_DATA_LENGTH;
    params.cm = cm_.get();
    params.conn_request = request;
    params.sockaddr_cb_server = on_server_notify;
    params.disconnect_cb = on_disconnect;
    params.user_data = c->state_.get();
    params.sockaddr_cb_flags = UCT_CB_FLAG_ASYNC;
    params.private_data = data.data();
    params.private_data_length = data.size();
    std::lock_guard<std::mutex> lock(mu_);
    uct_ep_h ep = nullptr;
    const Status s = status_of(uct_ep_create(&params, &ep));  // (uses the request up)
    if (s != kOk) return s;
    c->ep_ = CmEp(ep);
    {
        std::lock_guard<std::mutex> slock(c->state_->queue.mu);
        c->state_->ep = ep;
    }
    out = std::move(c);
    return kOk;
}

Status ConnectionManager::reject(CmListener &listener, uct_conn_request_h request) {
    std::lock_guard<std::mutex> lock(mu_);
    return status_of(uct_listener_reject(listener.handle_.get(), request));
}

void ConnectionManager::progress() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    // Events UCS's async thread could not deliver while the context was blocked (a UCT call
    // of ours held it) wait in its "missed" queue until someone polls it: without this, a
    // connection request now and then never reached the listener.
    __ucs_async_poll_missed(async_.get());
    while (uct_worker_progress(worker_.get()) != 0) {
    }
}

// ---- CmListener ----

bool CmListener::next(CmEvent &out) {
    if (!queue_) return false;
    cm_->progress();
    return queue_->pop(out);
}

CmListener::~CmListener() {
    if (!cm_) return;
    {
        // Nothing new arrives once the handle is gone: take what came, refuse it.
        std::lock_guard<std::mutex> lock(cm_->mu_);
        handle_.reset();
    }
    CmEvent e;
    while (queue_->pop(e)) {
        // (A request of a destroyed listener: UCT releases it with the listener. Nothing to do.)
    }
}

// ---- CmConnection ----

bool CmConnection::next(CmEvent &out) {
    cm_->progress();
    detail::ConnState &s = *state_;
    bool notify = false, answer_peer = false;
    std::vector<uint8_t> answer;
    {
        std::lock_guard<std::mutex> lock(s.queue.mu);
        if (s.ep != nullptr) {
            notify = std::exchange(s.accepted, false);
            if (notify) answer = std::move(s.answer);
            answer_peer = std::exchange(s.peer_gone, false) && !s.disconnect_called;
            if (answer_peer) s.disconnect_called = true;
        }
    }
    if (notify) {
        Status st;
        {
            std::lock_guard<std::mutex> lock(cm_->mu_);
            st = status_of(uct_cm_client_ep_conn_notify(ep_.get()));
        }
        UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager: accepted; confirming: {}", to_string(st));
        CmEvent e;
        if (st == kOk) {
            e.kind = CmEvent::Kind::kConnected;
            e.data = std::move(answer);
        } else {
            e.kind = CmEvent::Kind::kFailed;
            e.status = st;
        }
        {
            std::lock_guard<std::mutex> lock(s.queue.mu);
            if (st == kOk && !s.ended) s.up = true;
            if (st != kOk) s.ended = true;
        }
        s.queue.push(std::move(e));
    }
    if (answer_peer) {
        // The peer disconnected: our side answers, as UCT asks (its callback fired once).
        std::lock_guard<std::mutex> lock(cm_->mu_);
        (void)uct_ep_disconnect(ep_.get(), 0);
    }
    return s.queue.pop(out);
}

Status CmConnection::disconnect() {
    {
        std::lock_guard<std::mutex> lock(state_->queue.mu);
        if (state_->ended || state_->disconnect_called) return kOk;
        state_->ended = true;
        state_->disconnect_called = true;
    }
    bool reset;
    ucs_status_t s;
    {
        std::lock_guard<std::mutex> lock(cm_->mu_);
        reset = reset_if_bound();
        s = uct_ep_disconnect(ep_.get(), 0);
    }
    if (reset) await_own_callback();
    return s == UCS_ERR_NOT_CONNECTED || s == UCS_ERR_CONNECTION_RESET ? kOk : status_of(s);
}

bool CmConnection::reset_if_bound() {
    if (bound_port_ == 0 || peer_len_ == 0) return false;
    {
        std::lock_guard<std::mutex> lock(state_->queue.mu);
        if (state_->callback_seen) return false;  // (the peer ended it: nothing to reset)
    }
    const unsigned n = reset_connections(bound_port_, reinterpret_cast<const sockaddr *>(&peer_),
                                         peer_len_);
    UFI_LOG_DEBUG(Subsys::EpCtrl,
                  "connection manager: reset {} connection(s) from bound port {} (no TIME_WAIT)",
                  n, bound_port_);
    return n != 0;
}

// The reset raises an error event on the socket. UCS's async thread may have queued it as
// "missed" (a UCT call of ours held the context), and a missed event delivered after the
// socket closed goes to whatever socket takes its number next (UCT then fails that
// connection). So the event is delivered now, while the socket is still this endpoint's: UCT
// handles it as the end of the connection and calls our disconnect callback.
void CmConnection::await_own_callback() noexcept {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(state_->queue.mu);
            if (state_->callback_seen) return;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            UFI_LOG_DEBUG(Subsys::EpCtrl, "connection manager: UCT did not report the reset within 200 ms");
            return;
        }
        cm_->progress();
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

bool CmConnection::await_peer_close(std::chrono::milliseconds bound) noexcept {
    if (!cm_) return true;
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
        {
            // (UCX's async thread records the peer's disconnect: nothing to progress here.)
            std::lock_guard<std::mutex> lock(state_->queue.mu);
            if (!state_->up || state_->ended || state_->disconnect_called || state_->peer_gone) {
                return true;
            }
        }
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

CmConnection::~CmConnection() {
    if (!cm_) return;
    bool up;
    {
        std::lock_guard<std::mutex> lock(state_->queue.mu);
        up = state_->up && !state_->ended && !state_->disconnect_called;
        state_->ended = true;
        state_->disconnect_called = true;
    }
    bool reset = false;
    if (up) {
        std::lock_guard<std::mutex> lock(cm_->mu_);
        reset = reset_if_bound();
        (void)uct_ep_disconnect(ep_.get(), 0);
    }
    if (reset) await_own_callback();
    std::lock_guard<std::mutex> lock(cm_->mu_);
    ep_.reset();  // (no callback runs after uct_ep_destroy returned)
}

}  // namespace ufi::transports::cm
