// RAII owners for UCX (UCT/UCS) handles. Every uct_*_close/destroy/release
// call in ufi lives in this file's .cpp, so no handle can leak or be freed twice.
//
// Each wrapper is move-only, owns exactly one handle, and is created through a
// static factory that returns the UCS status (no exceptions). Destruction order
// between handles is the owner's job: an Iface must die before its Worker, the
// Worker before its AsyncContext, an Iface before its Md. Endpoints, rkey bundles
// and memory handles get their wrappers here too when the lanes/memory modules
// need them. In a fork() child, handles made before the fork are dropped without
// being released: the parent still uses them (transports/fork_safety.h).
#pragma once

#include "transports/status.h"
#include "transports/fork_safety.h"

#include "transports/ucx_fwd.h"

#include <cstddef>
#include <span>
#include <string>
#include <utility>

namespace ufi::transports {

// How an AsyncContext delivers events (UCS_ASYNC_MODE_*): polled by the worker's owner, or
// by UCS's async thread.
enum class AsyncMode { kPoll, kThreadSpinlock };
// How a Worker may be used (UCS_THREAD_MODE_*): by one thread, or by several one at a time.
enum class ThreadMode { kSingle, kSerialized };

namespace detail {

// One owned pointer-like handle with a release function. Move-only. A handle inherited
// through fork() is dropped without its release function (transports/fork_safety.h).
template <typename Handle, void (*Release)(Handle)>
class UniqueHandle {
  public:
    UniqueHandle() noexcept = default;
    explicit UniqueHandle(Handle h) noexcept : h_(h), generation_(fork::generation()) {}
    ~UniqueHandle() { reset(); }
    UniqueHandle(UniqueHandle &&other) noexcept
        : h_(std::exchange(other.h_, Handle{})), generation_(other.generation_) {}
    UniqueHandle &operator=(UniqueHandle &&other) noexcept {
        if (this != &other) {
            reset();
            h_ = std::exchange(other.h_, Handle{});
            generation_ = other.generation_;
        }
        return *this;
    }
    UniqueHandle(const UniqueHandle &) = delete;
    UniqueHandle &operator=(const UniqueHandle &) = delete;

    Handle get() const noexcept { return h_; }
    explicit operator bool() const noexcept { return h_ != Handle{}; }
    // Made by an ancestor process (this one is a fork() child holding a copy).
    bool inherited() const noexcept { return h_ != Handle{} && fork::inherited(generation_); }
    // Gives up ownership without releasing.
    Handle release() noexcept { return std::exchange(h_, Handle{}); }
    void reset() noexcept {
        if (h_ == Handle{}) return;
        if (fork::inherited(generation_)) {
            h_ = Handle{};  // the parent's: releasing it here would release it there
            return;
        }
        Release(std::exchange(h_, Handle{}));
    }

  private:
    Handle h_{};
    unsigned generation_ = 0;
};

void release_md_config(uct_md_config_t *config);
void release_iface_config(uct_iface_config_t *config);
void release_cm_config(uct_cm_config_t *config);
void release_md(uct_md_h md);
void release_async(ucs_async_context_t *async);
void release_worker(uct_worker_h worker);
void release_iface(uct_iface_h iface);
void release_cm(uct_cm_h cm);
void release_listener(uct_listener_h listener);
void release_cm_ep(uct_ep_h ep);
void release_ep(uct_ep_h ep);

}  // namespace detail

// The list from uct_query_components(). The component handles themselves stay
// valid after the list is released (UCT keeps them for the process lifetime).
class ComponentList {
  public:
    ComponentList() noexcept = default;
    ~ComponentList();
    ComponentList(ComponentList &&other) noexcept;
    ComponentList &operator=(ComponentList &&other) noexcept;
    ComponentList(const ComponentList &) = delete;
    ComponentList &operator=(const ComponentList &) = delete;

    static Status query(ComponentList &out);

    std::span<const uct_component_h> components() const noexcept { return {list_, count_}; }
    std::size_t size() const noexcept { return count_; }

  private:
    void reset() noexcept;
    uct_component_h *list_ = nullptr;
    unsigned count_ = 0;
};

// Configuration read with uct_md_config_read() (UCX_* environment applies).
class MdConfig : public detail::UniqueHandle<uct_md_config_t *, detail::release_md_config> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status read(uct_component_h component, MdConfig &out);
};

// Configuration read with uct_md_iface_config_read() for one transport.
class IfaceConfig
    : public detail::UniqueHandle<uct_iface_config_t *, detail::release_iface_config> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status read(uct_md_h md, const char *tl_name, IfaceConfig &out);
};

// Configuration read with uct_cm_config_read().
class CmConfig : public detail::UniqueHandle<uct_cm_config_t *, detail::release_cm_config> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status read(uct_component_h component, CmConfig &out);
};

// An open memory domain (uct_md_open / uct_md_close).
class Md : public detail::UniqueHandle<uct_md_h, detail::release_md> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status open(uct_component_h component, const char *md_name, const MdConfig &config,
                             Md &out);
};

// A UCS async context (ucs_async_context_create / destroy).
class AsyncContext : public detail::UniqueHandle<ucs_async_context_t *, detail::release_async> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status create(AsyncMode mode, AsyncContext &out);
};

// A UCT worker. Must be destroyed before the AsyncContext it was created on.
class Worker : public detail::UniqueHandle<uct_worker_h, detail::release_worker> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status create(const AsyncContext &async, ThreadMode mode, Worker &out);
};

// An open interface. Must be closed before its Worker and its Md.
class Iface : public detail::UniqueHandle<uct_iface_h, detail::release_iface> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status open(const Md &md, const Worker &worker, const uct_iface_params_t &params,
                             const IfaceConfig &config, Iface &out);
};

// A connection manager (uct_cm_open / uct_cm_close). Must die before its Worker.
class Cm : public detail::UniqueHandle<uct_cm_h, detail::release_cm> {
  public:
    using UniqueHandle::UniqueHandle;
    static Status open(uct_component_h component, const Worker &worker,
                             const CmConfig &config, Cm &out);
};

// A connection manager's listener (uct_listener_create / uct_listener_destroy). Must die
// before its Cm.
class Listener : public detail::UniqueHandle<uct_listener_h, detail::release_listener> {
  public:
    using UniqueHandle::UniqueHandle;
};

// A connection manager's endpoint (a client's or an accepted one: it carries no data, only
// the connection's establishment and end). Must die before its Cm.
class CmEp : public detail::UniqueHandle<uct_ep_h, detail::release_cm_ep> {
  public:
    using UniqueHandle::UniqueHandle;
};

// A UCT endpoint (uct_ep_create / uct_ep_destroy). Its pending queue is purged before it is
// destroyed (uct-brief section 4.5): whoever queued requests on it must have taken them back.
// Operations still in flight on it are cancelled, or (cma, which cannot cancel) run to their
// end, and their completions are called before it is destroyed: whoever posted them keeps
// their completion records valid (or their callbacks harmless) until then. Must die before
// its Iface, and not from inside a callback of its iface's progress.
class Ep : public detail::UniqueHandle<uct_ep_h, detail::release_ep> {
  public:
    using UniqueHandle::UniqueHandle;
    // A connect-to-iface endpoint to the peer iface with these device and iface addresses.
    static Status connect_to_iface(uct_iface_h iface, const uct_device_addr_t *dev_addr,
                                         const uct_iface_addr_t *iface_addr, Ep &out);
    // An endpoint to be connected to a peer's endpoint (uct_ep_connect_to_ep) once the two
    // sides exchanged their endpoint addresses.
    static Status create_unconnected(uct_iface_h iface, Ep &out);
};

}  // namespace ufi::transports
