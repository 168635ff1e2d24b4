// A scalable endpoint and its contexts (runtime/ep/scalable.h).
#include "runtime/ep/scalable.h"

#include "base/log/log.h"
#include "base/spin_lock.h"
#include "runtime/av/av.h"
#include "runtime/av/binding.h"
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/info/capabilities.h"
#include "runtime/info/info_alloc.h"
#include "transports/address.h"
#include "transports/scalable_name.h"

#include <rdma/fi_errno.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace ufi::runtime::ep {

using log::Subsys;
namespace scalable = transports::scalable;
namespace address = transports::address;
static_assert(info::kMaxScalableContexts == scalable::kMaxContexts);

namespace {

constexpr uint64_t kTxDirections = FI_SEND | FI_READ | FI_WRITE;
constexpr uint64_t kRxDirections = FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE;
// Capabilities that only mean something on the other side.
constexpr uint64_t kRxOnlyCaps = FI_DIRECTED_RECV | FI_TAGGED_DIRECTED_RECV | FI_EXACT_DIRECTED_RECV |
                                 FI_MULTI_RECV | FI_TAGGED_MULTI_RECV | FI_SOURCE | FI_SOURCE_ERR |
                                 FI_RMA_EVENT;
constexpr uint64_t kTxOnlyCaps = FI_FENCE | FI_NAMED_RX_CTX;

// A context's capabilities: the endpoint's (or those `asked`, a subset of them), with only its
// own direction. 0 when that leaves no direction (a receive-only endpoint's transmit context).
uint64_t context_caps(uint64_t caps, bool rx) {
    const uint64_t dirs = rx ? kRxDirections : kTxDirections;
    const uint64_t all = kTxDirections | kRxDirections;
    const uint64_t granted = (caps & all) == 0 ? dirs : caps & dirs;
    if (granted == 0) return 0;
    return (caps & ~all & ~(rx ? kTxOnlyCaps : kRxOnlyCaps)) | granted;
}

// An info without capabilities (one an application built by hand) asks for the type's.
uint64_t caps_of(const fi_info &info) {
    if (info.caps != 0) return info.caps;
    return info.ep_attr->type == FI_EP_DGRAM ? info::kDgramPrimaryCaps : info::kPrimaryCaps;
}

uint32_t context_count(size_t n) {
    return n == 0 ? 1 : static_cast<uint32_t>(n);
}

}  // namespace

ScalableEndpoint *scalable_of(fid_t fid) noexcept {
    return object_of<ScalableEndpoint>(fid, FI_CLASS_SEP);
}

int ScalableEndpoint::open(Domain *domain, const fi_info *info, void *context,
                           const ScalableOps &ops, ScalableEndpoint **out) noexcept {
    if (info->ep_attr == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep: info->ep_attr is NULL (use an fi_info from fi_getinfo)");
        return -FI_EINVAL;
    }
    const int type = static_cast<int>(info->ep_attr->type);
    if (type != FI_EP_RDM && type != FI_EP_DGRAM) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_scalable_ep: type {} (scalable endpoints are FI_EP_RDM or FI_EP_DGRAM)", type);
        return -FI_EINVAL;
    }
    const size_t tx = info->ep_attr->tx_ctx_cnt, rx = info->ep_attr->rx_ctx_cnt;
    if (tx == FI_SHARED_CONTEXT || rx == FI_SHARED_CONTEXT) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_scalable_ep: shared contexts with a scalable endpoint are not offered "
                     "(ep_attr tx_ctx_cnt / rx_ctx_cnt FI_SHARED_CONTEXT)");
        return -FI_EINVAL;
    }
    if (tx > scalable::kMaxContexts || rx > scalable::kMaxContexts) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_scalable_ep: {} transmit and {} receive contexts; ufi offers at most {} of each",
                     tx, rx, scalable::kMaxContexts);
        return -FI_EINVAL;
    }
    const uint32_t format = domain->info != nullptr ? domain->info->addr_format : uint32_t{FI_ADDR_UCX};
    if (format != FI_ADDR_UCX) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_scalable_ep: the domain's address format is {}; scalable endpoints' names "
                     "are binary (FI_ADDR_UCX) only",
                     format);
        return -FI_EINVAL;
    }
    auto *sep = new (std::nothrow) ScalableEndpoint();
    if (sep == nullptr) return -FI_ENOMEM;
    sep->domain_ = domain;
    sep->ops_ = ops;
    sep->info_ = info::dup_info(info);
    if (sep->info_ == nullptr) {
        delete sep;
        return -FI_ENOMEM;
    }
    try {
        sep->tx_.assign(context_count(tx), nullptr);
        sep->rx_.assign(context_count(rx), nullptr);
    } catch (const std::bad_alloc &) {
        delete sep;
        return -FI_ENOMEM;
    }
    // The info must describe an endpoint of this domain: a context opened from it now is the
    // check (and is closed again).
    const bool has_rx = context_caps(caps_of(*info), true) != 0;
    fi_info *probe = nullptr;
    if (const int rc = sep->context_info(has_rx, 0, nullptr, "fi_scalable_ep", &probe); rc != 0) {
        delete sep;
        return rc;
    }
    Endpoint *check = nullptr;
    const int rc = open_endpoint(domain, probe, 0, nullptr, ops.context, &check);
    info::free_info(probe);
    if (rc != 0) {
        delete sep;
        return rc;
    }
    (void)close_object(check);
    sep->fid.fclass = FI_CLASS_SEP;
    sep->fid.context = context;
    sep->fid.ops = ops.fid;
    sep->ops = ops.ep;
    sep->cm = ops.cm;
    sep->msg = ops.msg;
    sep->rma = ops.rma;
    sep->tagged = ops.tagged;
    sep->atomic = ops.atomic;
    sep->collective = nullptr;
    domain->add_child();
    UFI_LOG_DEBUG(Subsys::EpCtrl, "scalable endpoint opened: {} transmit, {} receive contexts",
                  sep->tx_.size(), sep->rx_.size());
    *out = sep;
    return 0;
}

ScalableEndpoint::~ScalableEndpoint() {
    info::free_info(info_);
}

int ScalableEndpoint::context_info(bool rx, int index, const void *attr, const char *call,
                                   fi_info **out) const {
    fi_info *ci = info::dup_info(info_);
    if (ci == nullptr) return -FI_ENOMEM;
    ci->ep_attr->tx_ctx_cnt = 1;
    ci->ep_attr->rx_ctx_cnt = 1;
    uint64_t caps = caps_of(*ci);
    uint64_t op_flags = rx ? ci->rx_attr->op_flags : ci->tx_attr->op_flags;
    size_t size = 0;
    if (attr != nullptr) {
        const uint64_t asked = rx ? static_cast<const fi_rx_attr *>(attr)->caps
                                  : static_cast<const fi_tx_attr *>(attr)->caps;
        if (asked != 0) {
            const uint64_t mine = context_caps(caps, rx);
            const uint64_t extra = asked & ~(mine | kTxDirections | kRxDirections);
            if (extra != 0) {
                UFI_LOG_WARN(Subsys::EpCtrl, "{}: attr->caps {:#x} are not the scalable endpoint's",
                             call, extra);
                info::free_info(ci);
                return -FI_EINVAL;
            }
            caps = (asked & ~(kTxDirections | kRxDirections)) | (asked & caps & (kTxDirections | kRxDirections));
        }
        op_flags = rx ? static_cast<const fi_rx_attr *>(attr)->op_flags
                      : static_cast<const fi_tx_attr *>(attr)->op_flags;
        size = rx ? static_cast<const fi_rx_attr *>(attr)->size : static_cast<const fi_tx_attr *>(attr)->size;
    }
    caps = context_caps(caps, rx);
    ci->caps = caps;
    ci->tx_attr->caps = caps & info::kTxCaps;
    ci->rx_attr->caps = caps & info::kRxCaps;
    if (rx) {
        ci->rx_attr->op_flags = op_flags;
        if (size != 0) ci->rx_attr->size = size;
    } else {
        ci->tx_attr->op_flags = op_flags;
        if (size != 0) ci->tx_attr->size = size;
    }
    // The source address: receive context 0's (an identity, or a host and port to listen
    // at); receive context j listens at a host-and-port source's port + j
    // (transports/scalable_name.h); transmit contexts take none.
    if (ci->src_addr != nullptr && !(rx && index == 0)) {
        std::vector<uint8_t> moved;
        address::EndpointAddress a;
        if (rx && address::unpack(ci->src_addr, ci->src_addrlen, a) && a.uuid == 0 &&
            scalable::offset_tcp_ports(a, static_cast<uint32_t>(index))) {
            moved = address::pack(a);
        }
        std::free(ci->src_addr);
        ci->src_addr = nullptr;
        ci->src_addrlen = 0;
        if (!moved.empty()) {
            ci->src_addr = std::malloc(moved.size());
            if (ci->src_addr == nullptr) {
                info::free_info(ci);
                return -FI_ENOMEM;
            }
            std::memcpy(ci->src_addr, moved.data(), moved.size());
            ci->src_addrlen = moved.size();
        }
    }
    *out = ci;
    return 0;
}

int ScalableEndpoint::open_context(bool rx, int index, void *attr, void *context,
                                   fid_ep **out) noexcept {
    const char *call = rx ? "fi_rx_context" : "fi_tx_context";
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Endpoint *> &slots = rx ? rx_ : tx_;
    if (index < 0 || static_cast<size_t>(index) >= slots.size()) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: index {} (the scalable endpoint has {} {} contexts)",
                     call, index, slots.size(), rx ? "receive" : "transmit");
        return -FI_EINVAL;
    }
    if (slots[index] != nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: context {} is already open", call, index);
        return -FI_EBUSY;
    }
    if (enabled_) {
        // (Its name would differ from the one the scalable endpoint handed out.)
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: the scalable endpoint is enabled; open contexts before fi_enable",
                     call);
        return -FI_EOPBADSTATE;
    }
    if (context_caps(caps_of(*info_), rx) == 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "{}: the scalable endpoint's capabilities have no {} direction",
                     call, rx ? "receive" : "transmit");
        return -FI_EINVAL;
    }
    fi_info *ci = nullptr;
    if (const int rc = context_info(rx, index, attr, call, &ci); rc != 0) return rc;
    EndpointOps ops = ops_.context;
    ops.fid = rx ? ops_.rx_context_fid : ops_.tx_context_fid;
    Endpoint *ep = nullptr;
    const int rc = open_endpoint(domain_, ci, 0, context, ops, &ep);
    info::free_info(ci);
    if (rc != 0) return rc;
    ep->fid.fclass = rx ? FI_CLASS_RX_CTX : FI_CLASS_TX_CTX;
    ep->set_scalable(this);
    slots[index] = ep;
    if (attr != nullptr) {
        // The context's attributes, field by field (the caller's struct may be an older
        // version's: the fields every version has).
        const fi_info &i = ep->info();
        if (rx) {
            auto *a = static_cast<fi_rx_attr *>(attr);
            a->caps = i.caps & info::kRxCaps;
            a->mode = i.rx_attr->mode;
            a->op_flags = i.rx_attr->op_flags;
            a->msg_order = i.rx_attr->msg_order;
            a->size = i.rx_attr->size;
            a->iov_limit = i.rx_attr->iov_limit;
        } else {
            auto *a = static_cast<fi_tx_attr *>(attr);
            a->caps = i.caps & info::kTxCaps;
            a->mode = i.tx_attr->mode;
            a->op_flags = i.tx_attr->op_flags;
            a->msg_order = i.tx_attr->msg_order;
            a->inject_size = i.tx_attr->inject_size;
            a->size = i.tx_attr->size;
            a->iov_limit = i.tx_attr->iov_limit;
            a->rma_iov_limit = i.tx_attr->rma_iov_limit;
        }
    }
    *out = ep;
    return 0;
}

int ScalableEndpoint::bind(fid_t bfid, uint64_t flags) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bfid->fclass != FI_CLASS_AV) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_scalable_ep_bind: fid class {}: a scalable endpoint binds an AV only "
                     "(bind CQs and counters to its contexts)",
                     bfid->fclass);
        return -FI_EINVAL;
    }
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep_bind(AV): flags {:#x} are not defined", flags);
        return -FI_EBADFLAGS;
    }
    if (enabled_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep_bind: the scalable endpoint is enabled");
        return -FI_EOPBADSTATE;
    }
    av::Av *av = av::av_of(bfid);
    if (av == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep_bind(AV): not a ufi address vector");
        return -FI_EINVAL;
    }
    if (av->domain != domain_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep_bind(AV): the AV belongs to another domain");
        return -FI_EDOMAIN;
    }
    if (av_ != nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_scalable_ep_bind(AV): an AV is already bound");
        return -FI_EINVAL;
    }
    av::attach_endpoint(av);
    av_ = av;
    return 0;
}

int ScalableEndpoint::enable_context(Endpoint *ctx) noexcept {
    av::Av *av = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        av = av_;
    }
    if (av == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_enable(context): bind an AV to the scalable endpoint first "
                     "(fi_scalable_ep_bind)");
        return -FI_ENOAV;
    }
    // (Once: a context whose first fi_enable failed, say for want of a CQ, has it already.)
    if (!ctx->enabled() && !ctx->has_av()) {
        if (const int rc = ctx->bind(&av->fid, 0); rc != 0) return rc;
    }
    return ctx->enable();
}

int ScalableEndpoint::enable() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (enabled_) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable(scalable endpoint): already enabled");
        return -FI_EOPBADSTATE;
    }
    if (av_ == nullptr) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable(scalable endpoint): no AV is bound (fi_scalable_ep_bind)");
        return -FI_ENOAV;
    }
    try {
        std::vector<std::vector<uint8_t>> names[2];  // receive, transmit
        for (int kind = 0; kind < 2; ++kind) {
            const std::vector<Endpoint *> &slots = kind == 0 ? rx_ : tx_;
            for (size_t i = 0; i < slots.size(); ++i) {
                if (slots[i] == nullptr || !slots[i]->enabled()) {
                    UFI_LOG_WARN(Subsys::EpCtrl,
                                 "fi_enable(scalable endpoint): {} context {} is not {} (open and "
                                 "enable every context first: the name holds each one's)",
                                 kind == 0 ? "receive" : "transmit", i,
                                 slots[i] == nullptr ? "open" : "enabled");
                    return -FI_EOPBADSTATE;
                }
                std::vector<uint8_t> n(domain_->offer.addr_len);
                size_t len = n.size();
                if (const int rc = slots[i]->getname(n.data(), &len); rc != 0) return rc;
                names[kind].push_back(std::move(n));
            }
        }
        std::string why;
        name_ = scalable::pack(names[0], names[1], domain_->offer.addr_len, &why);
        if (name_.empty()) {
            UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable(scalable endpoint): {}", why);
            return -FI_EINVAL;
        }
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    enabled_ = true;
    helpable_.store(true);
    return 0;
}

void ScalableEndpoint::help_progress(Endpoint *self) noexcept {
    if (!helpable_.load(std::memory_order_relaxed)) return;
    // (Sequentially consistent from here: a helper counted before close_context's store is
    // waited for; one counted after sees the store and leaves.)
    helpers_.fetch_add(1);
    if (helpable_.load()) {
        for (Endpoint *ctx : tx_) {
            if (ctx != self && ctx != nullptr) (void)ctx->progress_if_free();
        }
    }
    helpers_.fetch_sub(1);
}

int ScalableEndpoint::getname(void *addr, size_t *addrlen) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!enabled_) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "fi_getname(scalable endpoint): its name exists from fi_enable on");
        return -FI_EOPBADSTATE;
    }
    const size_t have = *addrlen;
    *addrlen = name_.size();
    if (have < name_.size()) {
        if (addr != nullptr && have > 0) std::memcpy(addr, name_.data(), have);
        return -FI_ETOOSMALL;
    }
    std::memcpy(addr, name_.data(), name_.size());
    return 0;
}

int ScalableEndpoint::close_context(Endpoint *ctx) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    // No sibling may lend it a progress call from now on.
    helpable_.store(false);
    for (unsigned spins = 0; helpers_.load() != 0;) base::spin_wait(spins);
    for (auto *slots : {&tx_, &rx_}) {
        for (Endpoint *&slot : *slots) {
            if (slot != ctx) continue;
            const int rc = close_object(ctx);
            if (rc == 0) slot = nullptr;
            return rc;
        }
    }
    return -FI_EINVAL;
}

Shut ScalableEndpoint::shut() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t open = 0;
    for (auto *slots : {&tx_, &rx_}) {
        for (Endpoint *slot : *slots) open += slot != nullptr;
    }
    if (open != 0) {
        UFI_LOG_WARN(Subsys::EpCtrl, "fi_close(scalable endpoint): {} of its contexts are still open",
                     open);
        return Shut::kBusy;
    }
    if (av_ != nullptr) av::detach_endpoint(av_);
    av_ = nullptr;
    domain_->remove_child();
    return Shut::kFree;
}

}  // namespace ufi::runtime::ep
