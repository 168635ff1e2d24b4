#include "runtime/ep/endpoint.h"
#include "runtime/ep/scalable.h"
#include "runtime/ep/shared_rx.h"
#include "runtime/ep/shared_tx.h"

#include "runtime/ep/alias.h"
#include "runtime/ep/connection.h"
#include "runtime/ep/passive_endpoint.h"
#include "runtime/av/av.h"

#include "runtime/av/av.h"
#include "base/config/config.h"
#include "runtime/av/binding.h"
#include "runtime/av/socket_format.h"
#include "runtime/cntr/binding.h"
#include "runtime/cntr/cntr.h"
#include "runtime/cq/binding.h"
#include "runtime/cq/cq.h"
#include "runtime/domain/domain.h"
#include "runtime/ep/identity.h"
#include "runtime/eq/binding.h"
#include "runtime/eq/eq.h"
#include "runtime/c_enum.h"
#include "runtime/info/capabilities.h"
#include "runtime/info/hint_match.h"
#include "runtime/info/info_alloc.h"
#include "runtime/info/names.h"
#include "runtime/info/provider_info.h"
#include "base/log/log.h"
#include "runtime/proto/data_path.h"
#include "transports/status.h"
#include "transports/address_name.h"
#include "transports/iface/abortive_close.h"
#include "transports/iface/close_order.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/resource.h"

#include <rdma/fi_errno.h>

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

namespace ufi::runtime::ep {

namespace {

using log::Subsys;
namespace address = transports::address;

constexpr uint64_t kCqBindFlags = FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION;
constexpr uint64_t kCntrBindFlags[kCntrCount] = {FI_SEND,  FI_RECV,        FI_READ,
                                                 FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE};
constexpr uint64_t kAllCntrBindFlags =
    FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
constexpr uint64_t kDirectionCaps =
    FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;

const char *cntr_flag_name(int i) {
    static const char *const names[kCntrCount] = {"FI_SEND",  "FI_RECV",        "FI_READ",
                                                  "FI_WRITE", "FI_REMOTE_READ", "FI_REMOTE_WRITE"};
    return names[i];
}

// The endpoint initiates transfers whose completions need a transmit CQ: any primary
// capability with an outbound direction (or no direction bits, meaning all).
bool needs_tx_cq(uint64_t caps) {
    if (!(caps & (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_COLLECTIVE))) return false;
    return (caps & kDirectionCaps) == 0 || (caps & (FI_SEND | FI_READ | FI_WRITE)) != 0;
}

// It receives messages, which complete in a receive CQ (RMA/atomic targets need none).
bool needs_rx_cq(uint64_t caps) {
    if (!(caps & (FI_MSG | FI_TAGGED | FI_COLLECTIVE))) return false;
    return (caps & kDirectionCaps) == 0 || (caps & FI_RECV) != 0;
}

// Copies `data` into the caller's buffer fi_getname-style: truncated when short, with
// *addrlen set to the size needed either way.
int copy_out(const void *data, size_t len, void *addr, size_t *addrlen, bool nul_terminate) {
    const size_t have = *addrlen;
    *addrlen = len;
    if (have >= len) {
        std::memcpy(addr, data, len);
        return 0;
    }
    if (have > 0 && addr != nullptr) {
        std::memcpy(addr, data, have);
        if (nul_terminate) static_cast<char *>(addr)[have - 1] = '\0';
    }
    return -FI_ETOOSMALL;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Opening

Endpoint::Endpoint(Domain *domain, fi_info *info, void *context, const EndpointOps &ops)
    : EndpointFace{},
      domain_(domain),
      info_(info),
      addr_format_(domain->info != nullptr ? domain->info->addr_format : uint32_t{FI_ADDR_UCX}),
      options_(EndpointOptions::defaults_for(*info)),
      // The worker is driven by data calls and by every CQ/counter read, which other threads
      // may make beside them unless the threading model serializes the endpoint with its
      // completion objects (runtime/threading.h).
      enabled_ops_(domain->locking.endpoints ? ops.locked : ops.lock_free),
      worker_lock_(domain->locking.endpoints) {
    fid.fclass = FI_CLASS_EP;
    fid.context = context;
    fid.ops = ops.fid;
    this->ops = ops.ep;
    cm = ops.cm;
    msg = ops.locked.msg;
    rma = ops.locked.rma;
    tagged = ops.locked.tagged;
    atomic = ops.locked.atomic;
    collective = ops.collective;
    endpoint = this;
    connected_type_ = info->ep_attr != nullptr && info->ep_attr->type == FI_EP_MSG;
    tx_op_flags_.store(info->tx_attr != nullptr ? info->tx_attr->op_flags : 0, std::memory_order_relaxed);
    rx_op_flags_.store(info->rx_attr != nullptr ? info->rx_attr->op_flags : 0, std::memory_order_relaxed);
    source_.arg = this;
    source_.progress = domain->locking.endpoints ? &Endpoint::progress_cb<true>
                                                 : &Endpoint::progress_cb<false>;
    source_.arm = &Endpoint::arm_cb;
    source_.wait_fds = &Endpoint::wait_fds_cb;
}

Endpoint::~Endpoint() {
    if (request_ != nullptr) drop_conn_request(request_);  // opened from it, never accepted: refused
    release_id();
    info::free_info(info_);
}

int open_endpoint(Domain *domain, const fi_info *info, uint64_t flags, void *context,
                  const EndpointOps &ops, Endpoint **out) noexcept {
    const char *call = flags != 0 ? "fi_endpoint2" : "fi_endpoint";
    if (flags & FI_PEER) {
        UFI_LOG_INFO(Subsys::EpCtrl, "{}: FI_PEER (peer providers) is not supported by ufi", call);
        return -FI_ENOSYS;
    }
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: flags {:#x} are not defined", call, flags);
        return -FI_EBADFLAGS;
    }
    if (info->ep_attr == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: info->ep_attr is NULL (use an fi_info from fi_getinfo)",
                     call);
        return -FI_EINVAL;
    }
    const int type = raw_enum(info->ep_attr->type);
    if (type != FI_EP_RDM && type != FI_EP_DGRAM && type != FI_EP_MSG) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "{}: info->ep_attr->type {} is not an endpoint type ufi offers (FI_EP_RDM, FI_EP_DGRAM, FI_EP_MSG)",
                     call, type);
        return -FI_EINVAL;
    }
    ConnRequest *request = nullptr;
    PassiveEndpoint *source_pep = nullptr;  // the passive endpoint whose address it takes over
    if (type == FI_EP_MSG && info->handle != nullptr) {
        // (Looked up, never read: a request refused since the info was made is gone.)
        request = conn_request_of(info->handle);
        source_pep = request == nullptr ? live_passive_endpoint(info->handle) : nullptr;
        if (source_pep == nullptr && (request == nullptr || request->used || request->taken)) {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "{}: info->handle is neither a pending connection request nor a passive "
                         "endpoint of ufi's",
                         call);
            return -FI_EINVAL;
        }
    }
    if (type == FI_EP_DGRAM && domain->offer.datagram_size == 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: domain {} has no transport that carries datagrams", call,
                     domain->offer.name);
        return -FI_EINVAL;
    }
    if (info->domain_attr != nullptr) {
        const fi_domain_attr &da = *info->domain_attr;
        if (da.domain != nullptr && da.domain != static_cast<fid_domain *>(domain)) {
            UFI_LOG_WARN(Subsys::EpCtrl, "{}: info->domain_attr->domain is another domain", call);
            return -FI_EINVAL;
        }
        if (da.name != nullptr && domain->offer.name != da.name) {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "{}: info->domain_attr->name \"{}\" is not this domain ({})", call,
                         da.name, domain->offer.name);
            return -FI_EINVAL;
        }
    }
    if (info->addr_format != FI_FORMAT_UNSPEC && domain->info != nullptr &&
        info->addr_format != domain->info->addr_format) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: info->addr_format {} differs from the domain's {}", call,
                     info->addr_format, domain->info->addr_format);
        return -FI_EINVAL;
    }
    if (info->ep_attr->auth_key_size != 0 || info->ep_attr->auth_key != nullptr) {
        if (domain->av_auth_keys) {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "{}: ep_attr->auth_key must be unset on an FI_AV_AUTH_KEY domain", call);
            return -FI_EINVAL;
        }
    }

    // Negotiate the info against this domain's offer, as fi_getinfo would: the endpoint's
    // attributes are then ones ufi honours.
    fi_info *cand = info::make_provider_info(domain->offer, static_cast<fi_ep_type>(type),
                                             domain->api_version, info::offers_msg_prefix(info));
    if (cand == nullptr) return -FI_ENOMEM;
    info::MatchResult m = info::match_hints(*cand, info, domain->api_version);
    info::free_info(cand);
    if (m.info == nullptr) {
        if (m.error != 0) return m.error;
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "{}: the fi_info does not describe an endpoint of domain {}: {}", call,
                     domain->offer.name, m.reason);
        return -FI_EINVAL;
    }
    if (domain->info != nullptr) m.info->addr_format = domain->info->addr_format;
    // A connected endpoint keeps its destination: fi_connect with no address goes there.
    if (type == FI_EP_MSG && info->dest_addr != nullptr && info->dest_addrlen != 0 &&
        m.info->dest_addr == nullptr) {
        m.info->dest_addr = std::malloc(info->dest_addrlen);
        if (m.info->dest_addr == nullptr) {
            info::free_info(m.info);
            return -FI_ENOMEM;
        }
        std::memcpy(m.info->dest_addr, info->dest_addr, info->dest_addrlen);
        m.info->dest_addrlen = info->dest_addrlen;
    }

    auto *ep = new (std::nothrow) Endpoint(domain, m.info, context, ops);
    if (ep == nullptr) {
        info::free_info(m.info);
        return -FI_ENOMEM;
    }
    try {
        // The classic authorization key: the endpoint's own, else the domain's (API >= 1.5).
        if (!domain->av_auth_keys && domain->api_version >= FI_VERSION(1, 5)) {
            const fi_ep_attr &ea = *info->ep_attr;
            if (ea.auth_key_size != 0 && ea.auth_key != nullptr) {
                ep->auth_key_.assign(ea.auth_key, ea.auth_key + ea.auth_key_size);
            } else {
                ep->auth_key_ = domain->auth_key;
            }
        }
        if (request != nullptr) {
            (void)take_conn_request(request);  // (pending: checked above) ours from now on
            ep->request_ = request;
            // (An accepted connection's local address is its listener's, as a socket's is.)
            const sockaddr_storage &la = request->listener->address();
            ep->cm_name_ = la;
            ep->cm_name_len_ = la.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
        }
        if (source_pep != nullptr) {
            size_t len = sizeof ep->cm_name_;
            if (source_pep->getname(&ep->cm_name_, &len) == 0) {
                ep->cm_name_len_ = static_cast<socklen_t>(len);
            }
        }
        // A source address names the identity to take, as fi_setname does. (A connected
        // endpoint's names its listener's or the passive endpoint's socket: not its data path's.)
        if (type != FI_EP_MSG && info->src_addr != nullptr && info->src_addrlen != 0) {
            const int rc = ep->adopt_identity(info->src_addr, info->src_addrlen, call);
            if (rc != 0) {
                delete ep;
                return rc == -FI_EADDRINUSE ? rc : -FI_EINVAL;
            }
        }
    } catch (const std::bad_alloc &) {
        delete ep;
        return -FI_ENOMEM;
    }
    domain->add_child();
    UFI_LOG_DEBUG(Subsys::EpCtrl, "endpoint opened on domain {}", domain->offer.name);
    *out = ep;
    return 0;
}

// ---------------------------------------------------------------------------------------
// Binding

int Endpoint::bind(fid_t bfid, uint64_t flags) noexcept {
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    if (enabled()) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind: the endpoint is enabled; bind before fi_enable");
        return -FI_EOPBADSTATE;
    }
    switch (bfid->fclass) {
        case FI_CLASS_AV:
            return bind_av(bfid, flags);
        case FI_CLASS_CQ:
            return bind_cq(bfid, flags);
        case FI_CLASS_CNTR:
            return bind_cntr(bfid, flags);
        case FI_CLASS_EQ:
            return bind_eq(bfid, flags);
        case FI_CLASS_STX_CTX:
        case FI_CLASS_SRX_CTX:
            return bind_shared(bfid, flags);
        case FI_CLASS_MR:
            UFI_LOG_WARN(
                Subsys::EpCtrl,
                "fi_ep_bind: an MR is bound to an endpoint with fi_mr_bind, not fi_ep_bind");
            return -FI_EINVAL;
        default:
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind: fid class {} cannot be bound to an endpoint",
                         bfid->fclass);
            return -FI_EINVAL;
    }
}

int Endpoint::bind_av(fid_t bfid, uint64_t flags) {
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(AV): flags {:#x} are not defined for an AV",
                     flags);
        return -FI_EBADFLAGS;
    }
    av::Av *av = av::av_of(bfid);
    if (av == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(AV): not a ufi address vector");
        return -FI_EINVAL;
    }
    if (av->domain != domain_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(AV): the AV belongs to another domain");
        return -FI_EDOMAIN;
    }
    if (av_ != nullptr) {
        UFI_LOG_WARN(
            Subsys::EpCtrl,
            "fi_ep_bind(AV): an address vector is already bound (an RDM endpoint has one)");
        return -FI_EINVAL;
    }
    av::attach_endpoint(av);
    av_ = av;
    return 0;
}

int Endpoint::bind_shared(fid_t bfid, uint64_t flags) {
    const bool rx = bfid->fclass == FI_CLASS_SRX_CTX;
    const char *what = rx ? "shared receive context" : "shared transmit context";
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind({}): flags {:#x} are not defined for it", what, flags);
        return -FI_EBADFLAGS;
    }
    SharedRx *srx = rx ? shared_rx_of(bfid) : nullptr;
    SharedTx *stx = rx ? nullptr : shared_tx_of(bfid);
    if (srx == nullptr && stx == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind: not a ufi {}", what);
        return -FI_EINVAL;
    }
    if ((srx != nullptr ? srx->domain() : stx->domain()) != domain_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind: the {} belongs to another domain", what);
        return -FI_EDOMAIN;
    }
    if ((rx && srx_ != nullptr) || (!rx && stx_ != nullptr)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind: a {} is bound already", what);
        return -FI_EINVAL;
    }
    if (rx) {
        srx->attach();
        srx_ = srx;
    } else {
        stx->attach();
        stx_ = stx;
    }
    return 0;
}

int Endpoint::bind_cq(fid_t bfid, uint64_t flags) {
    if (flags & ~kCqBindFlags) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(CQ): flags {:#x} are not defined for a CQ",
                     flags & ~kCqBindFlags);
        return -FI_EBADFLAGS;
    }
    if (!(flags & (FI_TRANSMIT | FI_RECV))) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_ep_bind(CQ): flags {:#x} name neither FI_TRANSMIT nor FI_RECV", flags);
        return -FI_EBADFLAGS;
    }
    cq::Cq *cq = cq::cq_of(bfid);
    if (cq == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(CQ): not a ufi completion queue");
        return -FI_EINVAL;
    }
    if (cq->domain() != domain_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(CQ): the CQ belongs to another domain");
        return -FI_EDOMAIN;
    }
    if ((flags & FI_TRANSMIT) && tx_cq_.cq != nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(CQ): a CQ is already bound for FI_TRANSMIT");
        return -FI_EINVAL;
    }
    if ((flags & FI_RECV) && rx_cq_.cq != nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(CQ): a CQ is already bound for FI_RECV");
        return -FI_EINVAL;
    }
    // One progress source per distinct CQ.
    if (tx_cq_.cq != cq && rx_cq_.cq != cq) {
        const int rc = cq::attach_source(cq, source_);
        if (rc != 0) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(CQ): the CQ refused the endpoint: {}", rc);
            return rc;
        }
    }
    const bool selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
    if (flags & FI_TRANSMIT) tx_cq_ = {cq, selective};
    if (flags & FI_RECV) rx_cq_ = {cq, selective};
    return 0;
}

int Endpoint::bind_cntr(fid_t bfid, uint64_t flags) {
    if (flags & ~kAllCntrBindFlags) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_ep_bind(counter): flags {:#x} are not defined for a counter",
                     flags & ~kAllCntrBindFlags);
        return -FI_EBADFLAGS;
    }
    if (flags == 0) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_ep_bind(counter): flags name no event (FI_SEND, FI_RECV, FI_READ, ...)");
        return -FI_EBADFLAGS;
    }
    if ((flags & (FI_REMOTE_READ | FI_REMOTE_WRITE)) && !(info_->caps & FI_RMA_EVENT)) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_ep_bind(counter): FI_REMOTE_READ/FI_REMOTE_WRITE need an endpoint with "
                     "FI_RMA_EVENT");
        return -FI_EINVAL;
    }
    cntr::Cntr *c = cntr::cntr_of(bfid);
    if (c == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(counter): not a ufi counter");
        return -FI_EINVAL;
    }
    if (c->domain() != domain_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(counter): the counter belongs to another domain");
        return -FI_EDOMAIN;
    }
    for (int i = 0; i < kCntrCount; ++i) {
        if ((flags & kCntrBindFlags[i]) && cntrs_[i] != nullptr) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(counter): a counter is already bound for {}",
                         cntr_flag_name(i));
            return -FI_EINVAL;
        }
    }
    if (std::find(cntrs_.begin(), cntrs_.end(), c) == cntrs_.end()) {
        const int rc = cntr::attach_source(c, source_);
        if (rc != 0) {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "fi_ep_bind(counter): the counter refused the endpoint: {}", rc);
            return rc;
        }
    }
    for (int i = 0; i < kCntrCount; ++i) {
        if (flags & kCntrBindFlags[i]) cntrs_[i] = c;
    }
    return 0;
}

int Endpoint::bind_eq(fid_t bfid, uint64_t flags) {
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(EQ): flags {:#x} are not defined for an EQ",
                     flags);
        return -FI_EBADFLAGS;
    }
    eq::Eq *e = eq::eq_of(bfid);
    if (e == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(EQ): not a ufi event queue");
        return -FI_EINVAL;
    }
    if (eq_ != nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_bind(EQ): an event queue is already bound");
        return -FI_EINVAL;
    }
    eq::attach(e);
    eq_ = e;
    return 0;
}

// ---------------------------------------------------------------------------------------
// Enabling

int Endpoint::enable() noexcept {
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    if (enabled()) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable: the endpoint is already enabled");
        return -FI_EOPBADSTATE;
    }
    if (connected_type_ && eq_ == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable: a connected endpoint needs an event queue (fi_ep_bind an EQ first)");
        return -FI_ENOEQ;
    }
    if (av_ == nullptr && connected_type_) {
        // Its one peer's address goes in an AV of its own (the data path finds peers there).
        fi_av_attr attr{};
        attr.type = FI_AV_TABLE;
        attr.count = 1;
        static fi_ops own_av_ops{sizeof(fi_ops), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
        if (const int rc = av::open_av(domain_, &attr, nullptr, &own_av_ops, nullptr, &own_av_); rc != 0) {
            return rc;
        }
        av::attach_endpoint(own_av_);
        av_ = own_av_;
    }
    if (av_ == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_enable: an RDM endpoint needs an address vector (fi_ep_bind an AV first)");
        return -FI_ENOAV;
    }
    if (needs_tx_cq(info_->caps) && tx_cq_.cq == nullptr) {
        UFI_LOG_WARN(
            Subsys::EpCtrl,
            "fi_enable: the endpoint's capabilities transmit, but no CQ is bound with FI_TRANSMIT");
        return -FI_ENOCQ;
    }
    if (needs_rx_cq(info_->caps) && rx_cq_.cq == nullptr) {
        UFI_LOG_WARN(
            Subsys::EpCtrl,
            "fi_enable: the endpoint's capabilities receive, but no CQ is bound with FI_RECV");
        return -FI_ENOCQ;
    }
    try {
        // FI_AV_AUTH_KEY domains: the keys the AV holds now (later insertions do not reach
        // this endpoint).
        std::vector<fi_addr_t> keys;
        if (domain_->av_auth_keys) {
            keys = av::hold_auth_keys(av_);
            if (keys.size() > info::kMaxEpAuthKeys) {
                UFI_LOG_WARN(
                    Subsys::EpCtrl,
                    "fi_enable: the AV holds {} authorization keys; an endpoint takes at most {}",
                    keys.size(), info::kMaxEpAuthKeys);
                av::release_auth_keys(av_, keys);
                return -FI_EINVAL;
            }
        }

        bool acquired_id = false;
        if (!given_identity_) {
            endpoint_id_ = ids::acquire();
            if (endpoint_id_ == 0) {
                av::release_auth_keys(av_, keys);
                return -FI_ENOMEM;
            }
            uuid_ = random_uuid();
            ids::set_uuid(endpoint_id_, uuid_);
            acquired_id = true;
        }
        auto undo = [&] {
            if (srx_ != nullptr) srx_->leave(this);
            if (!keys.empty()) av::release_auth_keys(av_, keys);
            if (acquired_id) {
                ids::release(endpoint_id_);
                endpoint_id_ = 0;
            }
        };

        if (srx_ != nullptr) {
            // It serves the shared receive context once its data path exists (skipped before).
            if (const int rc = srx_->join(this, connected_type_ ? nullptr : av_); rc != 0) {
                undo();
                return rc;
            }
        }

        transports::WorkerOptions wopts;
        wopts.shared_memory = options_.shared_memory_permitted;
        wopts.rx_headroom = kRxHeadroom;
        wopts.listen = listen_;
        if (request_ != nullptr && !request_->peer_address.empty()) {
            // Accepting a connection: the one peer is known now. Where shared memory reaches
            // it, the endpoint opens no network transport (transports/iface/endpoint_worker.h).
            address::EndpointAddress peer;
            if (address::unpack(request_->peer_address.data(), request_->peer_address.size(), peer)) {
                wopts.only_peer = std::move(peer.records);
            }
        }
        std::unique_ptr<transports::EndpointWorker> worker;
        std::vector<transports::SkippedResource> skipped;
        const transports::Status status = transports::EndpointWorker::open(domain_->memory_domains(), domain_->resources,
                                                                     wopts, worker, skipped);
        for (const auto &s : skipped) {
            UFI_LOG_INFO(Subsys::EpCtrl, "fi_enable: transport {} left out of the endpoint: {}",
                         s.resource != nullptr ? s.resource->label() : std::string("?"), s.why);
        }
        if (status != transports::Status::kOk) {
            if (status == transports::Status::kBusy || status == transports::Status::kUnreachable) {
                // (logged by the worker) The source address names a port in use, or a host
                // address this domain's tcp transports do not have.
                undo();
                return status == transports::Status::kBusy ? -FI_EADDRINUSE : -FI_EADDRNOTAVAIL;
            }
            if (status == transports::Status::kNoDevice) {
                UFI_LOG_WARN(
                    Subsys::EpCtrl,
                    "fi_enable: none of domain {}'s transports ({}) could be opened{}",
                    domain_->offer.name, domain_->offer.description,
                    options_.shared_memory_permitted ? "" : " with shared memory not permitted");
            } else {
                UFI_LOG_WARN(Subsys::EpCtrl,
                             "fi_enable: cannot create the endpoint's UCT worker: {}",
                             transports::to_string(status));
            }
            undo();
            // A missing md or component (NO_ELEM) means no usable device, too.
            return status == transports::Status::kNoElem ? -FI_ENODEV : transports::fi_errno_of(status);
        }

        address::EndpointAddress addr;
        addr.uuid = uuid_;
        addr.endpoint_id = endpoint_id_;
        addr.records = worker->records();
        std::string why;
        // fi_getname gives the endpoint's name (FI_NAME_MAX at most: first-contact records);
        // the full address goes in the handshake (transports/address_name.h).
        std::vector<uint8_t> blob = address::pack(address::name_of(addr, domain_->offer.name_tls), &why);
        if (blob.empty()) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable: cannot build the endpoint's address: {}", why);
            undo();
            return -FI_EOTHER;
        }
        std::string text = address::to_string(blob.data(), blob.size());
        // fi_getname hands out the domain's fixed length (records, then zero padding).
        if (!address::pad(blob, domain_->offer.addr_len, &why)) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable: {}", why);
            undo();
            return -FI_EOTHER;
        }

        proto::DataPathConfig dcfg;
        dcfg.worker = worker.get();
        dcfg.av = av_;
        dcfg.tx_cq = tx_cq_.cq;
        dcfg.rx_cq = rx_cq_.cq;
        dcfg.tx_selective = tx_cq_.selective;
        dcfg.rx_selective = rx_cq_.selective;
        dcfg.send_cntr = cntrs_[kCntrSend];
        dcfg.recv_cntr = cntrs_[kCntrRecv];
        dcfg.read_cntr = cntrs_[kCntrRead];
        dcfg.write_cntr = cntrs_[kCntrWrite];
        dcfg.rem_read_cntr = cntrs_[kCntrRemoteRead];
        dcfg.rem_write_cntr = cntrs_[kCntrRemoteWrite];
        dcfg.domain = domain_;
        dcfg.caps = info_->caps;
        dcfg.ordered = (info_->tx_attr->msg_order & ~uint64_t{FI_ORDER_SAS}) != 0;
        dcfg.tx_size = options_.tx_size;
        dcfg.rx_size = options_.rx_size;
        // FI_MSG_PREFIX: the prefix travels with each message (runtime/info/capabilities.h)
        // and counts toward none of the limits.
        const size_t prefix = info::msg_prefix_of(*info_);
        dcfg.inject_msg_size = options_.inject_msg_size + prefix;
        dcfg.inject_tagged_size = options_.inject_tagged_size + prefix;
        dcfg.inject_rma_size = options_.inject_rma_size;  // (RMA and atomics have no prefix)
        dcfg.inject_atomic_size = options_.inject_atomic_size;
        dcfg.max_msg_size = info_->ep_attr->max_msg_size + prefix;
        dcfg.send_max_msg = options_.max_msg_size + prefix;
        dcfg.send_max_tagged = options_.max_tagged_size + prefix;
        dcfg.send_max_rma = options_.max_rma_size;
        dcfg.send_max_atomic = options_.max_atomic_size;
        dcfg.datagrams = info_->ep_attr->type == FI_EP_DGRAM;
        dcfg.connected = connected_type_;
        dcfg.uuid = uuid_;
        dcfg.lives_here = &ids::lives_here;
        dcfg.endpoint_id = endpoint_id_;
        dcfg.incarnation = random_uuid();  // new at every fi_enable, whatever the identity
        dcfg.address = address::pack(addr);
        dcfg.auth_key = auth_key_;
        dcfg.av_auth_keys = domain_->av_auth_keys;
        for (fi_addr_t k : keys) {
            const uint8_t *kb = nullptr;
            size_t kl = 0;
            if (av::auth_key_bytes(av_, k, kb, kl) == 0) {
                dcfg.held_keys.push_back({k, std::vector<uint8_t>(kb, kb + kl)});
            }
        }
        dcfg.source_err = (info_->caps & FI_SOURCE_ERR) != 0;
        dcfg.addr_len = domain_->offer.addr_len;
        dcfg.name_tls = domain_->offer.name_tls;
        dcfg.addr_format = addr_format_;
        dcfg.min_multi_recv = &options_.min_multi_recv;
        dcfg.peer_failed = &Endpoint::post_peer_failure;
        dcfg.peer_failed_arg = this;
        proto::read_protocol_settings(dcfg);
        std::unique_ptr<proto::DataPath> data_path;
        if (const int rc = proto::DataPath::create(dcfg, data_path); rc != 0) {
            undo();
            return rc;
        }

        if (dcfg.peer_check_ms > 0 && wake_timer_.fd() < 0) (void)wake_timer_.open();
        held_auth_keys_ = std::move(keys);
        address_ = std::move(addr);
        blob_ = std::move(blob);
        blob_string_ = std::move(text);
        data_path_ = std::move(data_path);
        worker_ = std::move(worker);
        worker_ptr_.store(worker_.get(), std::memory_order_release);
        data_path_ptr_.store(data_path_.get(), std::memory_order_release);
        // The data calls' tables of the domain's threading policy, before anyone can see the
        // endpoint enabled.
        msg = enabled_ops_.msg;
        rma = enabled_ops_.rma;
        tagged = enabled_ops_.tagged;
        atomic = enabled_ops_.atomic;
        for (EndpointAlias *alias : aliases_) alias->copy_tables(*this);
        enabled_.store(true, std::memory_order_release);
        if (domain_->auto_progress) {
            if (const int rc = progress_thread_.start(source_); rc != 0) {
                UFI_LOG_WARN(Subsys::EpCtrl,
                             "fi_enable: FI_PROGRESS_AUTO without its thread: the endpoint "
                             "progresses only when the application calls in");
            }
        }
        UFI_LOG_INFO(Subsys::EpCtrl, "fi_enable: {} on domain {}, address of {} bytes",
                     address::describe(address_), domain_->offer.name, blob_.size());
        return 0;
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

// ---------------------------------------------------------------------------------------
// Closing

void Endpoint::unbind_all() noexcept {
    // Progress callers go first: after this no CQ or counter reaches the worker.
    if (tx_cq_.cq != nullptr) cq::detach_source(tx_cq_.cq, source_);
    if (rx_cq_.cq != nullptr && rx_cq_.cq != tx_cq_.cq) cq::detach_source(rx_cq_.cq, source_);
    tx_cq_ = {};
    rx_cq_ = {};
    for (int i = 0; i < kCntrCount; ++i) {
        cntr::Cntr *c = cntrs_[i];
        if (c == nullptr) continue;
        for (int j = i; j < kCntrCount; ++j) {
            if (cntrs_[j] == c) cntrs_[j] = nullptr;
        }
        cntr::detach_source(c, source_);
    }
    if (eq_ != nullptr) {
        eq::detach(eq_);
        eq_ = nullptr;
    }
    if (av_ != nullptr) {
        if (!held_auth_keys_.empty()) av::release_auth_keys(av_, held_auth_keys_);
        held_auth_keys_.clear();
        av::detach_endpoint(av_);
        av_ = nullptr;
    }
}

void Endpoint::post_peer_failure(void *arg, fi_addr_t source, int error) noexcept {
    auto *ep = static_cast<Endpoint *>(arg);
    eq::Eq *eq = ep->eq_;
    if (eq == nullptr && ep->av_ != nullptr) {
        std::lock_guard<std::mutex> lock(ep->av_->mutex);
        eq = ep->av_->eq;
    }
    if (eq == nullptr) return;
    // fi_eq_readerr: fid the endpoint, data the peer (as completions name it), err why.
    fi_eq_err_entry e{};
    e.fid = &ep->fid;
    e.context = ep->fid.context;
    e.data = source;
    e.err = -error;
    e.prov_errno = error;
    (void)eq->post_error(e, eq::Eq::Origin::Provider);
}

void Endpoint::release_id() noexcept {
    if (endpoint_id_ != 0) ids::release(endpoint_id_);
    endpoint_id_ = 0;
}

namespace {

// An endpoint listening on a port the application chose closes its connections there after
// its peers closed theirs, within UFI_NAMED_CLOSE_WAIT, so the port is free again at once
// (transports/iface/close_order.h).
// How long such a close waits, after that, for its connections' unsent data (a reset drops it).
constexpr int kAbortiveDrainMs = 100;

void let_named_peers_close_first(const transports::EndpointWorker &worker) noexcept {
    std::vector<uint16_t> ports;
    try {
        ports = worker.named_ports();
    } catch (const std::bad_alloc &) {
        return;  // (close at once)
    }
    if (ports.empty()) return;
    static const auto bound = std::chrono::milliseconds(
        std::clamp<int64_t>(config::registry().get_int("UFI_NAMED_CLOSE_WAIT"), 0, 60000));
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (uint16_t port : ports) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (!transports::wait_for_peers_to_close(port, std::max(left, std::chrono::milliseconds(0)))) {
            // Its connections there close abortively (no TIME_WAIT: abortive_close.h), which
            // drops what they still hold: that goes first, boundedly.
            const bool sent = transports::wait_for_sent_on(port, std::chrono::milliseconds(kAbortiveDrainMs));
            UFI_LOG_INFO(Subsys::EpCtrl,
                         "fi_close: peers still connected to port {} after {} ms: closing first, "
                         "abortively{}",
                         port, bound.count(),
                         sent ? "" : " (some of what was sent there was not acknowledged yet and is dropped)");
        }
    }
}

}  // namespace

// How long fi_close waits, in all, for room on full lanes to tell its peers it closes.
constexpr int kGoodbyeBoundMs = 100;
// fi_close: how long what was sent may take to leave (DataPath::settle_sends; fi_shutdown's
// own bound is the same).
constexpr int kSettleBoundMs = 1000;
// How long fi_close waits for the senders writing into its receive buffers (SPLIT) to finish:
// a sender computing between calls into the library answers late, and its writes would land
// after fi_close returned.
constexpr int kSplitWritersBoundMs = 1000;

Shut Endpoint::shut() noexcept {
    {
        std::lock_guard<std::mutex> lock(ctl_mutex_);
        if (!aliases_.empty()) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_close(endpoint): {} aliases of it are still open",
                         aliases_.size());
            return Shut::kBusy;
        }
        const int mrs = bound_mrs_.load(std::memory_order_relaxed);
        if (mrs != 0) {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "fi_close(endpoint): {} memory regions are still bound to it", mrs);
            return Shut::kBusy;
        }
        // A connected endpoint's connection ends first (its peer gets FI_SHUTDOWN) and leaves
        // the EQ; what was sent on it leaves first, as at fi_shutdown (a shut down one's peer
        // has failed: nothing to wait for).
        if (connection_) settle_sends(kSettleBoundMs);
        connection_.reset();
        // Its shared receive context stops handing it receives (those it holds are canceled
        // with the rest below).
        if (srx_ != nullptr) srx_->leave(this);
        progress_thread_.stop();  // before anything it drives goes (it takes the worker lock)
        {
            // The peers learn of the close before the lanes go (while the CQs and counters are
            // still bound: a full lane is progressed for room).
            std::lock_guard<OptionalMutex> wlock(worker_lock_);
            if (data_path_) {
                data_path_->await_split_writers(kSplitWritersBoundMs);
                data_path_->say_goodbye(kGoodbyeBoundMs);
                // What completed before fi_close (and the goodbye) reaches the peer before
                // the lanes go: over a tcp connection both sides use (endpoint to endpoint)
                // a close with unread data resets it, which loses what the peer had not read
                // yet. (Elsewhere the goodbye, sent once the lane had room, drained UCT's
                // buffer, and the connection ends gracefully.)
                data_path_->settle_sends(kSettleBoundMs, /*shared_connections_only=*/true);
            }
        }
        unbind_all();
        {
            // uct-brief section 8: ifaces, then the worker, then the async context (the
            // EndpointWorker's member order).
            std::lock_guard<OptionalMutex> wlock(worker_lock_);
            data_path_ptr_.store(nullptr, std::memory_order_release);
            worker_ptr_.store(nullptr, std::memory_order_release);
            if (worker_) let_named_peers_close_first(*worker_);
            data_path_.reset();  // its lanes (UCT endpoints) before the ifaces they live on
            worker_.reset();
        }
        enabled_.store(false, std::memory_order_release);
        if (own_av_ != nullptr) {
            (void)av::close_av(own_av_);  // (detached with the other bindings)
            own_av_ = nullptr;
        }
        release_id();
        if (srx_ != nullptr) srx_->detach();
        if (stx_ != nullptr) stx_->detach();
        srx_ = nullptr;
        stx_ = nullptr;
        domain_->remove_child();
    }
    return Shut::kFree;
}

// ---------------------------------------------------------------------------------------
// Names

int Endpoint::getname(void *addr, size_t *addrlen) noexcept {
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    if (!enabled()) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_getname: the endpoint has no address before fi_enable");
        return -FI_EOPBADSTATE;
    }
    if (addr_format_ == FI_ADDR_STR) {
        // The string and its NUL, as libfabric's FI_ADDR_STR providers return it.
        return copy_out(blob_string_.c_str(), blob_string_.size() + 1, addr, addrlen, true);
    }
    if (av::is_socket_format(addr_format_) && cm_name_len_ != 0) {
        // A connected endpoint's connection address (the listener's, or the passive
        // endpoint's it took over), as a socket reports its local address.
        return copy_out(&cm_name_, cm_name_len_, addr, addrlen, false);
    }
    if (av::is_socket_format(addr_format_)) {
        // Its tcp listener's IP and port: peers reach it as a host and port.
        std::vector<uint8_t> sa;
        try {
            sa = av::socket_bytes(blob_.data(), blob_.size(), addr_format_);
        } catch (const std::bad_alloc &) {
            return -FI_ENOMEM;
        }
        if (sa.empty()) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_getname: the endpoint has no tcp address of format {}",
                         info::names::addr_format(addr_format_));
            return -FI_EOPBADSTATE;
        }
        return copy_out(sa.data(), sa.size(), addr, addrlen, false);
    }
    return copy_out(blob_.data(), blob_.size(), addr, addrlen, false);
}

int Endpoint::adopt_identity(const void *addr, size_t addrlen, const char *caller) {
    std::vector<uint8_t> blob;
    std::string why;
    if (addr_format_ == FI_ADDR_STR) {
        const char *text = static_cast<const char *>(addr);
        const size_t n = strnlen(text, addrlen);
        if (!address::from_string(std::string_view(text, n), blob, &why)) {
            UFI_LOG_WARN(Subsys::EpCtrl, "{}: the address is not a ufi FI_ADDR_STR address: {}",
                         caller, why);
            return -FI_EINVAL;
        }
    } else if (av::is_socket_format(addr_format_)) {
        if (av::blob_of_socket(addr, addrlen, addr_format_, blob, why) == 0) {
            UFI_LOG_WARN(Subsys::EpCtrl, "{}: the address is no socket address of format {}: {}",
                         caller, info::names::addr_format(addr_format_), why);
            return -FI_EINVAL;
        }
    } else {
        const auto *p = static_cast<const uint8_t *>(addr);
        blob.assign(p, p + addrlen);
    }
    address::EndpointAddress a;
    if (!address::unpack(blob.data(), blob.size(), a, &why)) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: the address is not a ufi address: {}", caller, why);
        return -FI_EINVAL;
    }
    // Its tcp records' ports: the endpoint listens there, so the name reaches it.
    std::vector<transports::WorkerOptions::Listen> listen;
    for (const auto &rec : a.records) {
        if (rec.tl != "tcp" || rec.iface_addr.size() != sizeof(uint16_t)) continue;
        uint16_t net = 0;
        std::memcpy(&net, rec.iface_addr.data(), sizeof net);
        if (ntohs(net) != 0) listen.push_back({rec.device_addr, ntohs(net)});
    }
    if (a.uuid == 0 && a.endpoint_id == 0) {
        // A host and port (fi_getinfo(node, service, FI_SOURCE)), not an identity: the
        // endpoint keeps its own and listens there.
        if (a.records.empty()) {
            UFI_LOG_WARN(Subsys::EpCtrl, "{}: the source address names no transport", caller);
            return -FI_EINVAL;
        }
        listen_ = std::move(listen);
        return 0;
    }
    listen_ = std::move(listen);
    if (a.endpoint_id != endpoint_id_ || endpoint_id_ == 0) {
        if (!ids::claim(a.endpoint_id)) {
            UFI_LOG_WARN(
                Subsys::EpCtrl, "{}: endpoint id {} is {}", caller, a.endpoint_id,
                a.endpoint_id == 0 ? "not valid" : "in use by another endpoint of this process");
            return a.endpoint_id == 0 ? -FI_EINVAL : -FI_EADDRINUSE;
        }
        release_id();
    }
    uuid_ = a.uuid;
    endpoint_id_ = a.endpoint_id;
    ids::set_uuid(endpoint_id_, uuid_);
    given_identity_ = true;
    return 0;
}

int Endpoint::setname(const void *addr, size_t addrlen) noexcept {
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    if (enabled()) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_setname: the endpoint is enabled; its address is fixed");
        return -FI_EOPBADSTATE;
    }
    try {
        return adopt_identity(addr, addrlen, "fi_setname");
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
}

// ---------------------------------------------------------------------------------------
// Options and flags

int Endpoint::getopt(int level, int optname, void *optval, size_t *optlen) noexcept {
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    return get_option(options_, level, optname, optval, optlen);
}

int Endpoint::setopt(int level, int optname, const void *optval, size_t optlen) noexcept {
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    return set_option(options_, enabled(), level, optname, optval, optlen);
}

int Endpoint::make_alias(uint64_t flags, void *context, fi_ops *fid_ops, EndpointAlias **out) noexcept {
    const uint64_t dir = flags & (FI_TRANSMIT | FI_RECV);
    if (dir != FI_TRANSMIT && dir != FI_RECV) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_alias: the flags must hold FI_TRANSMIT or FI_RECV, not {}",
                     dir == 0 ? "neither" : "both");
        return -FI_EINVAL;
    }
    const uint64_t op = flags & ~dir;
    if (op & ~kOpFlags) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_ep_alias: {:#x} are not operation flags", op & ~kOpFlags);
        return -FI_EBADFLAGS;
    }
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    try {
        aliases_.reserve(aliases_.size() + 1);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    auto *alias = new (std::nothrow) EndpointAlias(*this, context, fid_ops);
    if (alias == nullptr) return -FI_ENOMEM;
    alias->set_flags(dir == FI_TRANSMIT ? op : tx_op_flags(), dir == FI_RECV ? op : rx_op_flags());
    aliases_.push_back(alias);
    *out = alias;
    return 0;
}

void Endpoint::forget_alias(EndpointAlias *alias) noexcept {
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    std::erase(aliases_, alias);
}

// ---------------------------------------------------------------------------------------
// Connections (FI_EP_MSG)

int Endpoint::connect(const void *addr, const void *param, size_t paramlen) noexcept {
    if (!connected_type_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: not a connected (FI_EP_MSG) endpoint");
        return -FI_EOPNOTSUPP;
    }
    if (!enabled()) {
        // (libfabric's connected endpoints enable themselves here, as its tcp provider does.)
        if (const int rc = enable(); rc != 0) return rc;
    }
    EndpointConnection *c;
    {
        std::lock_guard<std::mutex> lock(ctl_mutex_);
        if (!connection_) {
            connection_ = std::make_unique<EndpointConnection>(*this, *eq_);
        }
        c = connection_.get();
    }
    // No address: the destination of the info the endpoint was opened with, if it has one.
    if (addr == nullptr && info_ != nullptr) addr = info_->dest_addr;
    if (addr == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_connect: no address, and the endpoint's info names no destination");
        return -FI_EINVAL;
    }
    const auto *sa = static_cast<const sockaddr *>(addr);
    const size_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    const auto *local = cm_name_len_ != 0 ? reinterpret_cast<const sockaddr *>(&cm_name_) : nullptr;
    return c->connect(sa, len, local, cm_name_len_, blob_, param, paramlen);
}

int Endpoint::accept(const void *param, size_t paramlen) noexcept {
    if (!connected_type_ || request_ == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_accept: {}",
                     connected_type_ ? "the endpoint was not opened from a connection request (FI_CONNREQ's info)"
                                     : "not a connected (FI_EP_MSG) endpoint");
        return connected_type_ ? -FI_EINVAL : -FI_EOPNOTSUPP;
    }
    if (!enabled()) {
        if (const int rc = enable(); rc != 0) return rc;
    }
    EndpointConnection *c;
    ConnRequest *r;
    {
        std::lock_guard<std::mutex> lock(ctl_mutex_);
        if (!connection_) connection_ = std::make_unique<EndpointConnection>(*this, *eq_);
        c = connection_.get();
        r = std::exchange(request_, nullptr);
    }
    const int rc = c->accept(*r, blob_, param, paramlen);
    drop_conn_request(r);  // used up either way (refused if accepting failed first)
    return rc;
}

int Endpoint::shutdown(uint64_t flags) noexcept {
    if (!connected_type_) return -FI_EOPNOTSUPP;
    if (flags != 0) return -FI_EBADFLAGS;
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    return connection_ ? connection_->shutdown() : -FI_ENOTCONN;
}

int Endpoint::getpeer(void *addr, size_t *addrlen) noexcept {
    if (!connected_type_) return -FI_EOPNOTSUPP;
    std::lock_guard<std::mutex> lock(ctl_mutex_);
    return connection_ ? connection_->getpeer(addr, addrlen) : -FI_ENOTCONN;
}

int Endpoint::adopt_peer(std::span<const uint8_t> address) noexcept {
    if (own_av_ == nullptr) return -FI_EOPBADSTATE;
    try {
        // (AV entries are the domain's address length; a peer's shorter one is padded.)
        std::vector<uint8_t> entry(address.begin(), address.end());
        if (entry.size() > domain_->offer.addr_len) {
            UFI_LOG_WARN(Subsys::EpCtrl, "the peer's address is {} bytes, longer than this domain's {}",
                         entry.size(), domain_->offer.addr_len);
            return -FI_EINVAL;
        }
        entry.resize(domain_->offer.addr_len, 0);
        fi_addr_t at = FI_ADDR_NOTAVAIL;
        if (av::insert_ucx(own_av_, entry.data(), 1, &at, 0, nullptr) != 1) {
            UFI_LOG_WARN(Subsys::EpCtrl, "the peer's address is not a ufi address");
            return -FI_EINVAL;
        }
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    return 0;
}

void Endpoint::connection_lost(int error) noexcept {
    std::lock_guard<OptionalMutex> lock(worker_lock_);
    if (data_path_) data_path_->lose_peers(error);
}

void Endpoint::settle_sends(int bound_ms) noexcept {
    std::lock_guard<OptionalMutex> lock(worker_lock_);
    if (data_path_) (void)data_path_->settle_sends(bound_ms, /*shared_connections_only=*/false);
}

ssize_t Endpoint::tx_size_left() noexcept {
    if (!enabled()) return -FI_EOPBADSTATE;
    std::lock_guard<OptionalMutex> lock(worker_lock_);
    proto::DataPath *dp = data_path();
    return static_cast<ssize_t>(dp != nullptr ? dp->tx_left() : options_.tx_size);
}

ssize_t Endpoint::rx_size_left() noexcept {
    if (!enabled()) return -FI_EOPBADSTATE;
    std::lock_guard<OptionalMutex> lock(worker_lock_);
    proto::DataPath *dp = data_path();
    return static_cast<ssize_t>(dp != nullptr ? dp->rx_left() : options_.rx_size);
}

// ---------------------------------------------------------------------------------------
// Progress

// The worker pointer is read under the worker lock: fi_close clears it under the same lock
// before the worker is destroyed.

bool Endpoint::peer_reachable(const address::TransportRecord &peer) noexcept {
    std::lock_guard<OptionalMutex> lock(worker_lock_);
    transports::EndpointWorker *w = worker();
    return w != nullptr && w->is_reachable(peer);
}

template <bool kLocked>
unsigned Endpoint::progress_cb(void *arg) {
    auto *ep = static_cast<Endpoint *>(arg);
    unsigned n = 0;
    uint64_t unexpected_seen = 0;
    {
        ScopedLockIf<kLocked> lock(ep->worker_lock_);
        transports::EndpointWorker *w = ep->worker();
        if (w == nullptr) return 0;  // not enabled: nothing to drive
        proto::DataPath *dp = ep->data_path();
        if (dp == nullptr) return w->progress();
        dp->flush_demote();  // (what this endpoint answered went out before this call)
        // Behind a streaming shared-memory sender the transports are left alone for a moment
        // after each small batch (runtime/proto/rx_slip.h).
        if (!dp->slipping()) {
            const uint64_t rx_before = dp->rx_data_msgs();
            n = w->progress();
            dp->after_transport_poll(rx_before);
        }
        if (dp->wants_progress()) n += dp->progress();
        if (n == 0) dp->on_empty_poll();
        unexpected_seen = dp->stats().unexpected;
    }
    // Receives waiting in a shared receive context may want what arrived (its lock comes
    // before the worker lock: runtime/ep/shared_rx.h).
    if (ep->srx_ != nullptr && ep->srx_->has_waiting()) ep->srx_->dispatch(ep, unexpected_seen);
    // A scalable endpoint's context that found nothing lends its sibling transmit contexts a
    // progress call now and then (runtime/ep/scalable.h: a program may wait on a receive
    // context for the answer to a send that needs its transmit context progressed).
    if (n == 0 && ep->scalable_ != nullptr &&
        (ep->help_ticks_.fetch_add(1, std::memory_order_relaxed) & kHelpEvery) == 0) {
        ep->scalable_->help_progress(ep);
    }
    return n;
}

bool Endpoint::progress_if_free() noexcept {
    const bool locked = worker_lock_.needed();
    // Without a lock, only where the application serializes the whole domain (under
    // FI_THREAD_COMPLETION another context's thread may be inside it).
    if (!locked && domain_->threading != FI_THREAD_DOMAIN) return false;
    if (locked && !worker_lock_.spin().try_lock()) return false;  // its owner is at it
    bool progressed = false;
    proto::DataPath *dp = data_path();
    transports::EndpointWorker *w = worker();
    if (dp != nullptr && w != nullptr && dp->tx_outstanding() > 0) {
        (void)w->progress();
        if (dp->wants_progress()) (void)dp->progress();
        progressed = true;
    }
    if (locked) worker_lock_.spin().unlock();
    return progressed;
}

template unsigned Endpoint::progress_cb<true>(void *);
template unsigned Endpoint::progress_cb<false>(void *);

int Endpoint::arm_cb(void *arg) {
    auto *ep = static_cast<Endpoint *>(arg);
    std::lock_guard<OptionalMutex> lock(ep->worker_lock_);
    transports::EndpointWorker *w = ep->worker();
    if (w == nullptr) return 0;  // no transports: no event can arrive
    proto::DataPath *dp = ep->data_path();
    if (dp != nullptr) {
        // Operations waiting on peers: check them when due, and wake the sleeper for the next
        // check (a dead shared-memory peer sends no event).
        dp->check_peers_if_due();
        ep->wake_timer_.rearm(dp->needs_peer_checks() ? dp->peer_check_interval_ms() : 0);
        // Queued sends, completions, reported failures need progress, not an event.
        if (dp->has_pending_work()) return -FI_EAGAIN;
    }
    return w->arm() == transports::Status::kOk ? 0 : -FI_EAGAIN;
}

int Endpoint::wait_fds_cb(void *arg, int *fds, int max) {
    auto *ep = static_cast<Endpoint *>(arg);
    std::lock_guard<OptionalMutex> lock(ep->worker_lock_);
    transports::EndpointWorker *w = ep->worker();
    // No fds: the sleeper wakes in short slices to progress. Also when the worker polls its
    // async events (a fork child's, transports/fork_safety.h): no fd announces those.
    if (w == nullptr || max <= 0 || w->polls_async_events()) return 0;
    const auto all = w->event_fds();  // fixed once enabled
    int n = std::min(max, static_cast<int>(all.size()));
    std::copy_n(all.begin(), n, fds);
    if (ep->wake_timer_.fd() >= 0 && n < max) fds[n++] = ep->wake_timer_.fd();
    return n;
}

}  // namespace ufi::runtime::ep
