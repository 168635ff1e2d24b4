// The passive endpoint (passive_endpoint.h).
#include "runtime/ep/passive_endpoint.h"

#include "base/log/log.h"
#include "runtime/eq/binding.h"
#include "runtime/eq/eq.h"
#include "runtime/ep/cm_data.h"
#include "runtime/fabric/fabric.h"
#include "runtime/info/capabilities.h"
#include "runtime/info/info_alloc.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <netinet/in.h>

#include <cstring>
#include <new>
#include <unordered_set>

namespace ufi::runtime::ep {

using log::Subsys;
namespace cm = transports::cm;

namespace {

int conn_request_close(fid_t fid);

fi_ops g_conn_request_ops = {
    .size = sizeof(fi_ops),
    .close = conn_request_close,
    .bind = nullptr,
    .control = nullptr,
    .ops_open = nullptr,
    .tostr = nullptr,
    .ops_set = nullptr,
};

// The requests alive (pending, or owned by an endpoint not yet accepting), so that a handle
// freed meanwhile is recognised as stale rather than read.
// Live connection requests and passive endpoints, so that a handle an fi_info still holds
// after its object went (a request refused when its passive endpoint closed) is recognised
// without reading it.
std::mutex g_live_mu;
std::unordered_set<const fid *> g_live;

// fi_close of a pending request: refused.
int conn_request_close(fid_t fid) {
    ConnRequest *r = conn_request_of(fid);
    if (r == nullptr) return -FI_EINVAL;
    if (r->taken) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_close(connection request): an endpoint was opened from it; close that endpoint to refuse it");
        return -FI_EBUSY;
    }
    if (r->pep != nullptr) r->pep->forget(r);
    drop_conn_request(r);
    return 0;
}

size_t sockaddr_len(const sockaddr_storage &ss) {
    return ss.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace

ConnRequest *conn_request_of(fid_t handle) noexcept {
    {
        std::lock_guard<std::mutex> lock(g_live_mu);
        if (handle == nullptr || !g_live.contains(handle)) return nullptr;
    }
    if (handle->fclass != FI_CLASS_CONNREQ || handle->ops != &g_conn_request_ops) return nullptr;
    return static_cast<ConnRequest *>(handle);
}

bool take_conn_request(ConnRequest *r) noexcept {
    if (r->used || r->taken) return false;
    r->taken = true;
    if (r->pep != nullptr) r->pep->forget(r);
    r->pep = nullptr;
    return true;
}

void drop_conn_request(ConnRequest *r) noexcept {
    if (!r->used) {
        (void)r->cm->reject(*r->listener, r->request);
        r->used = true;
    }
    {
        std::lock_guard<std::mutex> lock(g_live_mu);
        g_live.erase(r);
    }
    delete r;
}

int PassiveEndpoint::open(Fabric *fabric, const fi_info *info, void *context,
                          const PassiveEndpointOps &ops, PassiveEndpoint **out) noexcept {
    if (info == nullptr || info->ep_attr == nullptr || info->ep_attr->type != FI_EP_MSG) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_passive_ep: the info is not one of ufi's FI_EP_MSG entries");
        return -FI_EINVAL;
    }
    auto *p = new (std::nothrow) PassiveEndpoint();
    if (p == nullptr) return -FI_ENOMEM;
    p->info_ = info::dup_info(info);
    if (p->info_ == nullptr) {
        delete p;
        return -FI_ENOMEM;
    }
    p->fabric_ = fabric;
    p->fid.fclass = FI_CLASS_PEP;
    p->fid.context = context;
    p->fid.ops = ops.fid;
    p->ops = ops.ep;
    p->cm = ops.cm;
    if (info->src_addr != nullptr && info->src_addrlen <= sizeof p->addr_ && info->src_addrlen != 0) {
        std::memcpy(&p->addr_, info->src_addr, info->src_addrlen);
        p->addrlen_ = static_cast<socklen_t>(info->src_addrlen);
    } else {
        // No source: every IPv4 address of the host, a port the kernel picks.
        auto &sin = reinterpret_cast<sockaddr_in &>(p->addr_);
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_ANY);
        p->addrlen_ = sizeof sin;
    }
    try {
        std::lock_guard<std::mutex> lock(g_live_mu);
        g_live.insert(&p->fid);
    } catch (const std::bad_alloc &) {
        delete p;
        return -FI_ENOMEM;
    }
    fabric->open_children.fetch_add(1);
    *out = p;
    return 0;
}

PassiveEndpoint::~PassiveEndpoint() {
    {
        std::lock_guard<std::mutex> lock(g_live_mu);
        g_live.erase(&fid);
    }
    info::free_info(info_);
}

PassiveEndpoint *live_passive_endpoint(fid_t handle) noexcept {
    {
        std::lock_guard<std::mutex> lock(g_live_mu);
        if (handle == nullptr || !g_live.contains(handle)) return nullptr;
    }
    if (handle->fclass != FI_CLASS_PEP) return nullptr;
    return static_cast<PassiveEndpoint *>(reinterpret_cast<fid_pep *>(handle));
}

Shut PassiveEndpoint::shut() noexcept {
    if (eq_ != nullptr) eq_->remove_progress({&PassiveEndpoint::progress_cb, this});
    std::list<ConnRequest *> pending;
    {
        std::lock_guard<std::mutex> lock(mu_);
        pending.swap(pending_);
    }
    for (ConnRequest *r : pending) drop_conn_request(r);  // (refused: nobody took them)
    listener_.reset();
    cm_.reset();
    if (eq_ != nullptr) eq::detach(eq_);
    fabric_->open_children.fetch_sub(1);
    return Shut::kFree;
}

int PassiveEndpoint::bind(fid_t bfid, uint64_t flags) noexcept {
    eq::Eq *e = eq::eq_of(bfid);
    if (e == nullptr || flags != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_pep_bind: {}",
                     e == nullptr ? "only an event queue binds to a passive endpoint" : "flags must be 0");
        return e == nullptr ? -FI_EINVAL : -FI_EBADFLAGS;
    }
    {
        std::lock_guard<std::mutex> lock(mu_);
        if (eq_ != nullptr) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_pep_bind: an event queue is bound already");
            return -FI_EINVAL;
        }
        eq_ = e;  // claimed
    }
    // Registered without mu_ held: the EQ runs our progress (which takes mu_) under its own
    // lock, so taking that lock under mu_ would order the two both ways.
    if (const int rc = e->add_progress({&PassiveEndpoint::progress_cb, this, true}); rc != 0) {
        std::lock_guard<std::mutex> lock(mu_);
        eq_ = nullptr;
        return rc;
    }
    eq::attach(e);
    return 0;
}

int PassiveEndpoint::listen() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (eq_ == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_listen: bind an event queue first (fi_pep_bind)");
        return -FI_ENOEQ;
    }
    if (listener_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_listen: the passive endpoint listens already");
        return -FI_EOPBADSTATE;
    }
    std::string why;
    if (!cm_ && cm::ConnectionManager::shared(cm_, why) != transports::kOk) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_listen: no connection manager: {}", why);
        return -FI_ENODEV;
    }
    std::unique_ptr<cm::CmListener> l;
    const transports::Status s = cm_->listen(reinterpret_cast<const sockaddr *>(&addr_), addrlen_,
                                             backlog_, {&PassiveEndpoint::wake_cb, this}, l);
    if (s != transports::kOk) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_listen: {}", transports::to_string(s));
        return s == transports::Status::kBusy ? -FI_EADDRINUSE : transports::fi_errno_of(s);
    }
    addr_ = l->address();
    addrlen_ = static_cast<socklen_t>(sockaddr_len(addr_));
    listener_ = std::move(l);
    return 0;
}

int PassiveEndpoint::getname(void *addr, size_t *addrlen) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t need = addrlen_;
    const size_t room = *addrlen;
    *addrlen = need;
    if (addr == nullptr || room < need) {
        if (addr != nullptr && room != 0) std::memcpy(addr, &addr_, room);
        return -FI_ETOOSMALL;
    }
    std::memcpy(addr, &addr_, need);
    return 0;
}

int PassiveEndpoint::setname(const void *addr, size_t addrlen) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (listener_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_setname: the passive endpoint listens already");
        return -FI_EOPBADSTATE;
    }
    const auto *sa = static_cast<const sockaddr *>(addr);
    if (addrlen < sizeof(sockaddr_in) || addrlen > sizeof addr_ ||
        (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_setname: a passive endpoint's name is an IPv4 or IPv6 socket address");
        return -FI_EINVAL;
    }
    std::memset(&addr_, 0, sizeof addr_);
    std::memcpy(&addr_, addr, addrlen);
    addrlen_ = static_cast<socklen_t>(addrlen);
    return 0;
}

int PassiveEndpoint::set_backlog(int backlog) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (listener_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_control(FI_BACKLOG): set it before fi_listen");
        return -FI_EOPBADSTATE;
    }
    if (backlog < 0) return -FI_EINVAL;
    backlog_ = backlog;
    return 0;
}

int PassiveEndpoint::reject(fid_t handle, const void *param, size_t paramlen) noexcept {
    ConnRequest *r = conn_request_of(handle);
    if (r != nullptr && r->taken) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_reject: an endpoint was opened from the request; close that endpoint to refuse it");
        return -FI_EBUSY;
    }
    if (r == nullptr || r->pep != this || r->used) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_reject: the handle is not a pending request of this passive endpoint");
        return -FI_EINVAL;
    }
    if (paramlen > info::kCmDataSize || (paramlen != 0 && param == nullptr)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_reject: {} bytes of data (at most {})", paramlen, info::kCmDataSize);
        return -FI_EINVAL;
    }
    r->used = true;
    forget(r);
    int rc = 0;
    if (paramlen == 0) {
        rc = transports::fi_errno_of(cm_->reject(*r->listener, r->request));
    } else {
        // UCT's refusal carries no data: the refusal goes as an answer the client reads as one,
        // with the data, and the connection ends.
        try {
            const std::vector<uint8_t> answer = cm_data::pack(cm_data::kReject, {}, param, paramlen);
            std::unique_ptr<cm::CmConnection> c;
            const transports::Status s = cm_->accept(*r->listener, r->request, answer, {}, c);
            rc = transports::fi_errno_of(s);
            if (s == transports::kOk) {
                std::lock_guard<std::mutex> lock(mu_);
                refusing_.push_back(std::move(c));
            }
        } catch (const std::bad_alloc &) {
            rc = -FI_ENOMEM;
        }
    }
    drop_conn_request(r);  // (used up above: only freed)
    return rc;
}

int PassiveEndpoint::getopt(int level, int optname, void *optval, size_t *optlen) noexcept {
    if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE) return -FI_ENOPROTOOPT;
    if (*optlen < sizeof(size_t)) {
        *optlen = sizeof(size_t);
        return -FI_ETOOSMALL;
    }
    const size_t v = info::kCmDataSize;
    std::memcpy(optval, &v, sizeof v);
    *optlen = sizeof v;
    return 0;
}

void PassiveEndpoint::forget(ConnRequest *r) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.remove(r);
}

void PassiveEndpoint::progress_cb(void *arg) {
    static_cast<PassiveEndpoint *>(arg)->progress();
}

void PassiveEndpoint::wake_cb(void *arg) {
    auto *p = static_cast<PassiveEndpoint *>(arg);
    if (p->eq_ != nullptr) p->eq_->nudge();
}

void PassiveEndpoint::progress() noexcept {
    std::shared_ptr<cm::CmListener> l;
    {
        std::lock_guard<std::mutex> lock(mu_);
        l = listener_;
        // Refusals that carried data: dropped once their connection ended.
        for (auto it = refusing_.begin(); it != refusing_.end();) {
            cm::CmEvent e;
            bool over = false;
            while ((*it)->next(e)) over |= e.kind != cm::CmEvent::Kind::kEstablished;
            it = over ? refusing_.erase(it) : std::next(it);
        }
    }
    if (!l) return;
    cm::CmEvent e;
    while (l->next(e)) {
        if (e.kind != cm::CmEvent::Kind::kRequest) continue;
        cm_data::Parsed d;
        if (!cm_data::parse(e.data, d) || d.kind != cm_data::kConnect) {
            UFI_LOG_WARN(Subsys::EpCtrl, "a connection request that is not ufi's ({} bytes of private data): refused",
                         e.data.size());
            (void)cm_->reject(*l, e.request);
            continue;
        }
        auto *r = new (std::nothrow) ConnRequest();
        fi_info *info = r != nullptr ? info::dup_info(info_) : nullptr;
        std::vector<uint8_t> event;
        try {
            if (r == nullptr || info == nullptr) throw std::bad_alloc();
            r->fclass = FI_CLASS_CONNREQ;
            r->context = nullptr;
            r->ops = &g_conn_request_ops;
            r->pep = this;
            r->cm = cm_;
            r->listener = l;
            r->request = e.request;
            r->peer_address.assign(d.address.begin(), d.address.end());
            r->peer = e.peer;
            info->handle = r;
            // The client's socket address as the request's destination.
            free(info->dest_addr);
            info->dest_addrlen = sockaddr_len(e.peer);
            info->dest_addr = malloc(info->dest_addrlen);
            if (info->dest_addr == nullptr) throw std::bad_alloc();
            std::memcpy(info->dest_addr, &e.peer, info->dest_addrlen);
            fi_eq_cm_entry entry{};
            entry.fid = &fid;
            entry.info = info;
            event.resize(sizeof entry + d.data.size());
            std::memcpy(event.data(), &entry, sizeof entry);
            if (!d.data.empty()) std::memcpy(event.data() + sizeof entry, d.data.data(), d.data.size());
            {
                std::lock_guard<std::mutex> live(g_live_mu);
                g_live.insert(r);
            }
            std::lock_guard<std::mutex> lock(mu_);
            pending_.push_back(r);
        } catch (const std::bad_alloc &) {
            UFI_LOG_WARN(Subsys::EpCtrl, "a connection request: out of memory; refused");
            if (info != nullptr) info::free_info(info);
            if (r != nullptr) {
                std::lock_guard<std::mutex> live(g_live_mu);
                g_live.erase(r);
            }
            delete r;
            (void)cm_->reject(*l, e.request);
            continue;
        }
        if (eq_->post(FI_CONNREQ, event.data(), event.size(), eq::Eq::Origin::Provider) != 0) {
            forget(r);
            info::free_info(info);
            drop_conn_request(r);  // (refused)
        }
    }
}

}  // namespace ufi::runtime::ep
