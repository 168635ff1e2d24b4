#include "transports/ucx_handles.h"

#include "transports/tl_resource_list.h"
#include "transports/ucs_status.h"

#include <cstring>

#include <ucs/type/status.h>

namespace ufi::transports {

namespace detail {

void release_md_config(uct_md_config_t *config) {
    uct_config_release(config);
}
void release_iface_config(uct_iface_config_t *config) {
    uct_config_release(config);
}
void release_cm_config(uct_cm_config_t *config) {
    uct_config_release(config);
}
void release_md(uct_md_h md) {
    uct_md_close(md);
}
void release_async(ucs_async_context_t *async) {
    ucs_async_context_destroy(async);
}
void release_worker(uct_worker_h worker) {
    uct_worker_destroy(worker);
}
void release_iface(uct_iface_h iface) {
    uct_iface_close(iface);
}
void release_cm(uct_cm_h cm) {
    uct_cm_close(cm);
}
void release_listener(uct_listener_h listener) {
    uct_listener_destroy(listener);
}
void release_cm_ep(uct_ep_h ep) {
    uct_ep_destroy(ep);  // (a CM endpoint queues no operations: nothing to purge or drain)
}

namespace {

// Progress calls in a row that move nothing before drain_ep() gives up (never seen: a queued
// copy either runs or fails on each call).
constexpr unsigned kDrainIdleLimit = 1U << 20;

// Operations still in flight on `ep` end before it is destroyed, their completions called
// here (with UCS_ERR_CANCELED where the transport cancels them). tcp fails them inside the
// cancelling flush. cma (UCX 1.13's scopy eps) cannot cancel: its flush ignores
// UCT_FLUSH_FLAG_CANCEL and its copies wait in the ep's own arbiter group, which
// uct_ep_destroy asserts empty (and would otherwise leave queued on the iface, pointing at
// the freed ep); they run to their end here, on the ep's iface's progress. Only an iface
// without active messages is progressed so (no message handler runs inside a teardown); its
// completions may be other eps' too, as they would be on the next progress.
void drain_ep(uct_ep_h ep) noexcept {
    ucs_status_t s = uct_ep_flush(ep, UCT_FLUSH_FLAG_CANCEL, nullptr);
    if (s != UCS_INPROGRESS) return;  // none left, or none that hold the ep (mm: FIFO full)
    uct_iface_attr_t attr;
    constexpr uint64_t kAm = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                             UCT_IFACE_FLAG_AM_ZCOPY;
    if (uct_iface_query(ep->iface, &attr) != UCS_OK || (attr.cap.flags & kAm) != 0) return;
    unsigned idle = 0;
    while (s == UCS_INPROGRESS && idle < kDrainIdleLimit) {
        idle = uct_iface_progress(ep->iface) != 0 ? 0 : idle + 1;
        s = uct_ep_flush(ep, UCT_FLUSH_FLAG_CANCEL, nullptr);
    }
}

}  // namespace

void release_ep(uct_ep_h ep) {
    // Requests still queued belong to their owner, who purged them first; none may remain.
    uct_ep_pending_purge(ep, [](uct_pending_req_t *, void *) {}, nullptr);
    drain_ep(ep);
    uct_ep_destroy(ep);
}

}  // namespace detail

ComponentList::~ComponentList() {
    reset();
}

ComponentList::ComponentList(ComponentList &&other) noexcept
    : list_(std::exchange(other.list_, nullptr)), count_(std::exchange(other.count_, 0U)) {}

ComponentList &ComponentList::operator=(ComponentList &&other) noexcept {
    if (this != &other) {
        reset();
        list_ = std::exchange(other.list_, nullptr);
        count_ = std::exchange(other.count_, 0U);
    }
    return *this;
}

void ComponentList::reset() noexcept {
    if (list_ != nullptr) {
        uct_release_component_list(std::exchange(list_, nullptr));
    }
    count_ = 0;
}

Status ComponentList::query(ComponentList &out) {
    uct_component_h *list = nullptr;
    unsigned count = 0;
    ucs_status_t status = uct_query_components(&list, &count);
    if (status != UCS_OK) {
        return status_of(status);
    }
    out.reset();
    out.list_ = list;
    out.count_ = count;
    return kOk;
}

TlResourceList::~TlResourceList() {
    reset();
}

TlResourceList::TlResourceList(TlResourceList &&other) noexcept
    : list_(std::exchange(other.list_, nullptr)), count_(std::exchange(other.count_, 0U)) {}

TlResourceList &TlResourceList::operator=(TlResourceList &&other) noexcept {
    if (this != &other) {
        reset();
        list_ = std::exchange(other.list_, nullptr);
        count_ = std::exchange(other.count_, 0U);
    }
    return *this;
}

void TlResourceList::reset() noexcept {
    if (list_ != nullptr) {
        uct_release_tl_resource_list(std::exchange(list_, nullptr));
    }
    count_ = 0;
}

ucs_status_t TlResourceList::query(uct_md_h md, TlResourceList &out) {
    uct_tl_resource_desc_t *list = nullptr;
    unsigned count = 0;
    ucs_status_t status = uct_md_query_tl_resources(md, &list, &count);
    if (status != UCS_OK) {
        return status;
    }
    out.reset();
    out.list_ = list;
    out.count_ = count;
    return UCS_OK;
}

Status MdConfig::read(uct_component_h component, MdConfig &out) {
    uct_md_config_t *config = nullptr;
    ucs_status_t status = uct_md_config_read(component, nullptr, nullptr, &config);
    if (status == UCS_OK) {
        out = MdConfig(config);
    }
    return status_of(status);
}

Status IfaceConfig::read(uct_md_h md, const char *tl_name, IfaceConfig &out) {
    uct_iface_config_t *config = nullptr;
    ucs_status_t status = uct_md_iface_config_read(md, tl_name, nullptr, nullptr, &config);
    if (status == UCS_OK) {
        out = IfaceConfig(config);
    }
    return status_of(status);
}

Status CmConfig::read(uct_component_h component, CmConfig &out) {
    uct_cm_config_t *config = nullptr;
    ucs_status_t status = uct_cm_config_read(component, nullptr, nullptr, &config);
    if (status == UCS_OK) {
        out = CmConfig(config);
    }
    return status_of(status);
}

Status Md::open(uct_component_h component, const char *md_name, const MdConfig &config,
                      Md &out) {
    uct_md_h md = nullptr;
    ucs_status_t status = uct_md_open(component, md_name, config.get(), &md);
    if (status == UCS_OK) {
        out = Md(md);
    }
    return status_of(status);
}

Status AsyncContext::create(AsyncMode mode, AsyncContext &out) {
    ucs_async_context_t *async = nullptr;
    ucs_status_t status = ucs_async_context_create(
        mode == AsyncMode::kPoll ? UCS_ASYNC_MODE_POLL : UCS_ASYNC_MODE_THREAD_SPINLOCK, &async);
    if (status == UCS_OK) {
        out = AsyncContext(async);
    }
    return status_of(status);
}

Status Worker::create(const AsyncContext &async, ThreadMode mode, Worker &out) {
    uct_worker_h worker = nullptr;
    ucs_status_t status = uct_worker_create(
        async.get(), mode == ThreadMode::kSingle ? UCS_THREAD_MODE_SINGLE : UCS_THREAD_MODE_SERIALIZED,
        &worker);
    if (status == UCS_OK) {
        out = Worker(worker);
    }
    return status_of(status);
}

Status Iface::open(const Md &md, const Worker &worker, const uct_iface_params_t &params,
                         const IfaceConfig &config, Iface &out) {
    uct_iface_h iface = nullptr;
    ucs_status_t status = uct_iface_open(md.get(), worker.get(), &params, config.get(), &iface);
    if (status == UCS_OK) {
        out = Iface(iface);
    }
    return status_of(status);
}

Status Cm::open(uct_component_h component, const Worker &worker, const CmConfig &config,
                      Cm &out) {
    uct_cm_h cm = nullptr;
    ucs_status_t status = uct_cm_open(component, worker.get(), config.get(), &cm);
    if (status == UCS_OK) {
        out = Cm(cm);
    }
    return status_of(status);
}

Status Ep::connect_to_iface(uct_iface_h iface, const uct_device_addr_t *dev_addr,
                                  const uct_iface_addr_t *iface_addr, Ep &out) {
    uct_ep_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask =
        UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface = iface;
    params.dev_addr = dev_addr;
    params.iface_addr = iface_addr;
    uct_ep_h ep = nullptr;
    const ucs_status_t status = uct_ep_create(&params, &ep);
    if (status == UCS_OK) out = Ep(ep);
    return status_of(status);
}

Status Ep::create_unconnected(uct_iface_h iface, Ep &out) {
    uct_ep_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface = iface;
    uct_ep_h ep = nullptr;
    const ucs_status_t status = uct_ep_create(&params, &ep);
    if (status == UCS_OK) out = Ep(ep);
    return status_of(status);
}

}  // namespace ufi::transports
