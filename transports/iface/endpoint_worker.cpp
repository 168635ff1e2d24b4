#include "transports/iface/endpoint_worker.h"

#include "transports/iface/abortive_close.h"

#include "transports/iface/fifo_tuning.h"
#include "transports/iface/tcp_tuning.h"
#include "transports/iface/iface_caps.h"
#include "transports/iface/net_namespace.h"
#include "transports/iface/record_addr.h"

#include "base/config/config.h"
#include "base/log/log.h"
#include "transports/address_svc.h"

#include "transports/ucs_status.h"

#include <ucs/async/async_fwd.h>
#include <uct/api/uct.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>
#include <cstring>
#include <new>

namespace ufi::transports {

ucs_status_t endpoint_iface_error_handler(void *arg, uct_ep_h ep, ucs_status_t status);

namespace {

using ufi::log::Subsys;

// The UCT_EVENT_* bits an iface can be armed for, from its UCT_IFACE_FLAG_EVENT_* flags.
unsigned arm_events_of(uint64_t event_flags) {
    unsigned events = 0;
    if (event_flags & UCT_IFACE_FLAG_EVENT_SEND_COMP) events |= UCT_EVENT_SEND_COMP;
    if (event_flags & UCT_IFACE_FLAG_EVENT_RECV) events |= UCT_EVENT_RECV;
    if (event_flags & UCT_IFACE_FLAG_EVENT_RECV_SIG) events |= UCT_EVENT_RECV_SIG;
    return events;
}

bool printable_tl_name(const std::string &tl) {
    if (tl.empty() || tl.size() > address::kMaxTlName) return false;
    for (char c : tl) {
        const bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) return false;
    }
    return true;
}

// The port a tcp resource must listen on: the options' listen entry whose device address is
// one of the resource's (what UCX's tcp iface reports for an address of its netdev); 0: any.
uint16_t listen_port_for(const Resource &r, const WorkerOptions &options) {
    if (options.listen.empty() || r.tl != "tcp") return 0;
    for (const std::string &ip : r.ip_addrs) {
        sockaddr_storage ss{};
        auto *in4 = reinterpret_cast<sockaddr_in *>(&ss);
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
        if (inet_pton(AF_INET, ip.c_str(), &in4->sin_addr) == 1) {
            ss.ss_family = AF_INET;
        } else if (inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr) == 1) {
            ss.ss_family = AF_INET6;
        } else {
            continue;
        }
        const auto dev = address::tcp_device_address(reinterpret_cast<const sockaddr *>(&ss));
        for (const auto &l : options.listen) {
            if (l.device_addr == dev) return l.port;
        }
    }
    return 0;
}

// UFI_TCP_PORT_RANGE ("first-last"), parsed once: {0, 0} when unset or malformed (a warning).
std::pair<uint16_t, uint16_t> port_range() {
    static const std::pair<uint16_t, uint16_t> range = [] {
        const std::string &text = config::registry().get_string("UFI_TCP_PORT_RANGE");
        if (text.empty()) return std::pair<uint16_t, uint16_t>{0, 0};
        unsigned first = 0, last = 0;
        char tail = 0;
        if (std::sscanf(text.c_str(), "%u-%u%c", &first, &last, &tail) != 2 || first == 0 ||
            last > 65535 || first > last) {
            UFI_LOG_WARN(Subsys::Core,
                         "UFI_TCP_PORT_RANGE={}: not a range first-last of ports 1..65535; the "
                         "system chooses the ports",
                         text);
            return std::pair<uint16_t, uint16_t>{0, 0};
        }
        return std::pair<uint16_t, uint16_t>{static_cast<uint16_t>(first), static_cast<uint16_t>(last)};
    }();
    return range;
}

// Opens one iface; on failure returns false with *why.
bool open_iface(const MemoryDomains &mds, const Worker &worker, const Resource &r,
                const WorkerOptions &options, uint16_t listen_port, OpenIface &out,
                std::string &why) {
    if (!printable_tl_name(r.tl)) {
        why = "transport name \"" + r.tl + "\" cannot be encoded in an address";
        return false;
    }
    const std::size_t md_index = mds.find(r.md);
    if (md_index == SIZE_MAX) {
        why = "memory domain " + r.md + " is not open in this domain";
        return false;
    }
    const Md &md = mds[md_index].md;

    IfaceConfig config;
    Status status = IfaceConfig::read(md.get(), r.tl.c_str(), config);
    if (status != kOk) {
        why = "uct_md_iface_config_read: " + to_string(status);
        return false;
    }
    out.fifo_geometry = tune_shm_fifo(config.get(), r.tl, &out.fifo_shape);
    tune_shm_rx_pool(config.get(), r.tl);
    tune_tcp_events(config.get(), r.tl);
    if (listen_port != 0) {
        const std::string range = std::to_string(listen_port) + "-" + std::to_string(listen_port);
        status = status_of(uct_config_modify(config.get(), "PORT_RANGE", range.c_str()));
        if (status != kOk) {
            why = "cannot ask tcp to listen on port " + std::to_string(listen_port) + ": " +
                  to_string(status);
            return false;
        }
    }

    uct_iface_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_RX_HEADROOM | UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS | UCT_IFACE_PARAM_FIELD_FEATURES;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = r.tl.c_str();
    params.mode.device.dev_name = r.dev.c_str();
    params.rx_headroom = options.rx_headroom;
    params.err_handler = endpoint_iface_error_handler;
    params.err_handler_arg = &out;  // out.owner is set before any endpoint exists
    // The handler may be called from the async thread (UCP registers it so too); it only
    // records the failure.
    params.err_handler_flags = UCT_CB_FLAG_ASYNC;
    // The same features discovery asked for, so the attributes match what fi_getinfo reported.
    params.features = UCT_IFACE_FEATURE_AM | UCT_IFACE_FEATURE_PUT | UCT_IFACE_FEATURE_GET |
                      UCT_IFACE_FEATURE_AMO32 | UCT_IFACE_FEATURE_AMO64;

    status = Iface::open(md, worker, params, config, out.iface);
    if (status != kOk) {
        why = "uct_iface_open: " + to_string(status);
        return false;
    }
    uct_iface_attr_t a;
    std::memset(&a, 0, sizeof(a));
    status = status_of(uct_iface_query(out.iface.get(), &a));
    if (status != kOk) {
        why = "uct_iface_query: " + to_string(status);
        return false;
    }
    out.caps = caps_of(a);
    if (a.device_addr_len > 255 || a.iface_addr_len + out.fifo_geometry.size() > 255) {
        why = "addresses of " + std::to_string(a.device_addr_len) + "+" +
              std::to_string(a.iface_addr_len) + " bytes do not fit an address record";
        return false;
    }
    out.device_addr.assign(a.device_addr_len, 0);
    if (!out.device_addr.empty()) {
        status = status_of(uct_iface_get_device_address(
            out.iface.get(), reinterpret_cast<uct_device_addr_t *>(out.device_addr.data())));
        if (status != kOk) {
            why = "uct_iface_get_device_address: " + to_string(status);
            return false;
        }
        if (!out.fifo_geometry.empty()) {
            out.ns_mark = network_namespace_mark();
            apply_namespace_mark(out.device_addr, out.ns_mark);
        }
    }
    // Iface addresses exist only for connect-to-iface transports; connect-to-ep ones carry
    // their device address alone (their endpoint addresses are per connection).
    if ((a.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) && a.iface_addr_len > 0) {
        out.iface_addr.assign(a.iface_addr_len, 0);
        status = status_of(uct_iface_get_address(
            out.iface.get(), reinterpret_cast<uct_iface_addr_t *>(out.iface_addr.data())));
        if (status != kOk) {
            why = "uct_iface_get_address: " + to_string(status);
            return false;
        }
        out.iface_addr.insert(out.iface_addr.end(), out.fifo_geometry.begin(),
                              out.fifo_geometry.end());
    }
    // Never ask an iface without UCT_IFACE_FLAG_EVENT_FD for its fd: on self the op is NULL
    // (uct-brief section 12). Ifaces with events but no fd (cma) are still armed: arming tells
    // whether work is queued that only progress can finish.
    if (a.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) {
        status = status_of(uct_iface_event_fd_get(out.iface.get(), &out.event_fd));
        if (status != kOk) {
            why = "uct_iface_event_fd_get: " + to_string(status);
            return false;
        }
    }
    out.arm_events = arm_events_of(a.cap.event_flags);
    out.resource = &r;
    out.code = transport_code(r.tl);
    out.copies_on_cpu = r.tl == "cma" || r.tl == "knem";
    out.md = md.get();
    out.component = mds[md_index].component;
    out.rkey_packed_size = mds[md_index].rkey_packed_size;
    out.md_can_register = mds[md_index].can_register();
    out.md_needs_memh = (mds[md_index].cap_flags & UCT_MD_FLAG_NEED_MEMH) != 0;
    return true;
}

// Whether nothing on this host holds tcp port `port` of `family` (a test bind, without
// SO_REUSEADDR as UCT's listener binds, to the wildcard address: conservative, a port bound on
// any address counts as taken).
bool port_free(int family, uint16_t port) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (family == AF_INET6) {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&ss);
        in6->sin6_family = AF_INET6;
        in6->sin6_addr = in6addr_any;
        in6->sin6_port = htons(port);
        len = sizeof *in6;
    } else {
        auto *in = reinterpret_cast<sockaddr_in *>(&ss);
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = htonl(INADDR_ANY);
        in->sin_port = htons(port);
        len = sizeof *in;
    }
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr *>(&ss), len) == 0;
    ::close(fd);
    return ok;
}

// A tcp iface under UFI_TCP_PORT_RANGE: one port at a time, free ones first, from a random
// start. (UCX 1.13's tcp, given the range as PORT_RANGE, draws ports at random until one binds,
// and spins for ever once every port of the range is taken; given one port, it fails.)
std::unique_ptr<OpenIface> open_in_range(const MemoryDomains &mds, const Worker &worker,
                                         const Resource &r, const WorkerOptions &options,
                                         std::string &why) {
    const auto [first, last] = port_range();
    const unsigned count = unsigned{last} - first + 1;
    static std::atomic<unsigned> spread{static_cast<unsigned>(::getpid())};
    const unsigned start = spread.fetch_add(7919, std::memory_order_relaxed) % count;
    const int family = !r.ip_addrs.empty() && r.ip_addrs.front().find(':') != std::string::npos
                           ? AF_INET6
                           : AF_INET;
    constexpr unsigned kTries = 8;  // ports that looked free but were taken by the time UCT bound
    unsigned tried = 0;
    for (unsigned i = 0; i < count && tried < kTries; ++i) {
        const auto port = static_cast<uint16_t>(first + (start + i) % count);
        if (!port_free(family, port)) continue;
        ++tried;
        auto iface = std::make_unique<OpenIface>();
        if (open_iface(mds, worker, r, options, port, *iface, why)) return iface;
    }
    why = "no free port in UFI_TCP_PORT_RANGE " + std::to_string(first) + "-" + std::to_string(last) +
          (tried != 0 ? " (the last try: " + why + ")" : std::string());
    return nullptr;
}

// The async thread saw activity on a watched iface's fd: progress activates it (the worker's
// callback queue takes registrations from any thread).
void on_iface_event(int, ucs_event_set_types_t, void *arg) {
    auto *iface = static_cast<OpenIface *>(arg);
    if (iface->activation_queued.exchange(true)) return;
    uct_worker_cb_id_t id = UCS_CALLBACKQ_ID_NULL;
    uct_worker_progress_register_safe(
        iface->owner->worker(),
        [](void *a) -> unsigned {
            auto *i = static_cast<OpenIface *>(a);
            i->owner->activate(*i);
            return 1;
        },
        iface, UCS_CALLBACKQ_FLAG_ONESHOT, &id);
}

// Which ifaces wait for traffic before they are progressed (OpenIface::progressing): those
// whose fd tells when a peer sends (posix, sysv, tcp, most NICs), and those that receive
// nothing a peer starts (cma has no active messages; self delivers inside the sender's call).
// An iface that receives but cannot tell is progressed from the start.
bool progressed_lazily(const OpenIface &i) {
    if (i.event_fd >= 0) return true;
    const uint64_t am = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY | UCT_IFACE_FLAG_AM_ZCOPY;
    return (i.caps.flags & am) == 0 || i.resource->type == DeviceType::Loopback;
}

}  // namespace

// The error handler every endpoint iface gets (arg: its OpenIface): records the failure for
// the worker's owner and returns UCS_OK, so a peer failure is never fatal (uct-brief section
// 8); the data path fails the peer's operations and destroys its endpoints.
ucs_status_t endpoint_iface_error_handler(void *arg, uct_ep_h ep, ucs_status_t status) {
    auto *iface = static_cast<OpenIface *>(arg);
    UFI_LOG_DEBUG(Subsys::EpData, "transport {} reports an error on uct ep {}: {}",
                  iface != nullptr && iface->resource != nullptr ? iface->resource->label()
                                                                 : std::string("?"),
                  static_cast<void *>(ep), to_string(status));
    if (iface != nullptr && iface->owner != nullptr) iface->owner->report_failure(ep, status_of(status));
    return UCS_OK;
}

void EndpointWorker::report_failure(uct_ep_h ep, Status status) noexcept {
    std::lock_guard<std::mutex> lock(failures_mutex_);
    try {
        failures_.push_back({ep, status});
    } catch (const std::bad_alloc &) {
        return;  // (a later check reports it again)
    }
    has_failures_.store(true, std::memory_order_release);
}

void EndpointWorker::forget_failures(uct_ep_h ep) noexcept {
    if (!has_failures()) return;
    std::lock_guard<std::mutex> lock(failures_mutex_);
    std::erase_if(failures_, [ep](const EpFailure &f) { return f.ep == ep; });
    if (failures_.empty()) has_failures_.store(false, std::memory_order_release);
}

bool EndpointWorker::failure_reported(uct_ep_h ep) noexcept {
    if (!has_failures() || ep == nullptr) return false;
    std::lock_guard<std::mutex> lock(failures_mutex_);
    return std::any_of(failures_.begin(), failures_.end(), [ep](const EpFailure &f) { return f.ep == ep; });
}

std::vector<EndpointWorker::EpFailure> EndpointWorker::take_failures() {
    std::lock_guard<std::mutex> lock(failures_mutex_);
    std::vector<EpFailure> out;
    out.swap(failures_);
    has_failures_.store(false, std::memory_order_release);
    return out;
}

Status EndpointWorker::open(const MemoryDomains &mds, std::span<const Resource *const> resources,
                                  const WorkerOptions &options,
                                  std::unique_ptr<EndpointWorker> &out,
                                  std::vector<SkippedResource> &skipped) {
    std::unique_ptr<EndpointWorker> w(new EndpointWorker());
    // A helper thread watches the control sockets (tcp accept); data moves only in progress.
    // Where that thread is a parent's (fork), progress polls the control sockets instead.
    Status status;
    if (fork::async_thread_inherited()) {
        status = AsyncContext::create(AsyncMode::kPoll, w->async_);
    } else {
        w->async_thread_ = std::make_unique<fork::AsyncThreadUse>();
        status = AsyncContext::create(AsyncMode::kThreadSpinlock, w->async_);
    }
    if (status != kOk) return status;
    // MULTI is rejected by most transports (uct-brief section 9): the owner serializes.
    status = Worker::create(w->async_, ThreadMode::kSerialized, w->worker_);
    if (status != kOk) return status;

    size_t listening = 0;
    // Opens `r` into the worker, or records why not; an error the whole open fails with.
    auto open_one = [&](const Resource *r) -> Status {
        if (!options.shared_memory && r->type == DeviceType::SharedMemory) {
            skipped.push_back(
                {r, "shared memory is not permitted (FI_OPT_SHARED_MEMORY_PERMITTED)"});
            return kOk;
        }
        if (w->ifaces_.size() == address::kMaxRecords) {
            skipped.push_back({r, "an address holds at most " +
                                      std::to_string(address::kMaxRecords) + " transports"});
            return kOk;
        }
        auto iface = std::make_unique<OpenIface>();
        std::string why;
        const uint16_t port = listen_port_for(*r, options);
        if (port == 0 && r->tl == "tcp" && port_range().first != 0) {
            iface = open_in_range(mds, w->worker_, *r, options, why);
            if (!iface) {
                skipped.push_back({r, why});
                return kOk;
            }
        } else if (!open_iface(mds, w->worker_, *r, options, port, *iface, why)) {
            if (port != 0) {
                UFI_LOG_WARN(Subsys::EpCtrl, "{} cannot listen on port {}: {}", r->label(), port, why);
                return Status::kBusy;  // the name the application chose would not reach it
            }
            skipped.push_back({r, why});
            return kOk;  // the partly opened iface closes here, before anything else
        }
        if (port != 0) ++listening;
        iface->named_port = port;
        if (iface->event_fd >= 0) w->fds_.push_back(iface->event_fd);
        w->ifaces_.push_back(std::move(iface));
        return kOk;
    };
    const bool local_first = !options.only_peer.empty();
    auto is_local = [](const Resource *r) {
        return r->type == DeviceType::SharedMemory || r->type == DeviceType::Loopback;
    };
    for (const Resource *r : resources) {
        if (r == nullptr || (local_first && !is_local(r))) continue;
        if (const Status s = open_one(r); s != kOk) return s;
    }
    if (local_first) {
        const bool local_peer = w->reaches_over_shared_memory(options.only_peer);
        for (const Resource *r : resources) {
            if (r == nullptr || is_local(r)) continue;
            if (local_peer) {
                skipped.push_back({r, "the endpoint's one peer is reached over shared memory"});
                continue;
            }
            if (const Status s = open_one(r); s != kOk) return s;
        }
    }
    if (w->ifaces_.empty()) return Status::kNoDevice;
    if (listening < options.listen.size()) {
        UFI_LOG_WARN(Subsys::EpCtrl,
                     "the source address names a host address none of this endpoint's tcp "
                     "transports has");
        return Status::kUnreachable;
    }
    w->rx_headroom_ = options.rx_headroom;
    for (auto &i : w->ifaces_) {
        i->owner = w.get();
        if (!progressed_lazily(*i)) {
            w->activate(*i);
            continue;
        }
        if (i->event_fd < 0) continue;  // activated when this endpoint connects over it
        // Armed, its fd tells the async thread when a peer sends over it.
        (void)uct_iface_event_arm(i->iface.get(), i->arm_events);
        const ucs_status_t st = ucs_async_set_event_handler(
            w->async_thread_ ? UCS_ASYNC_MODE_THREAD_SPINLOCK : UCS_ASYNC_MODE_POLL, i->event_fd,
            UCS_EVENT_SET_EVREAD, on_iface_event, i.get(), w->async_.get());
        if (st == UCS_OK) {
            i->watched = true;
            if (i->resource->type == DeviceType::SharedMemory) ++w->unwoken_;
        } else {
            UFI_LOG_DEBUG(Subsys::EpCtrl, "{}: cannot watch its events ({}); progressed always",
                          i->resource->label(), to_string(st));
            w->activate(*i);
        }
    }
    out = std::move(w);
    return kOk;
}

void EndpointWorker::activate(OpenIface &iface) noexcept {
    if (iface.progressing) return;
    if (iface.watched) {
        if (iface.resource->type == DeviceType::SharedMemory) --unwoken_;
        if (!iface.iface.inherited()) ucs_async_remove_handler(iface.event_fd, 1);
        iface.watched = false;
    }
    uct_iface_progress_enable(iface.iface.get(), UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    iface.progressing = true;
    UFI_LOG_DEBUG(Subsys::EpData, "{}: progressed from now on", iface.resource->label());
}

unsigned EndpointWorker::poll_unwoken() noexcept {
    unsigned n = 0;
    for (auto &i : ifaces_) {
        if (!i->watched || i->progressing || i->resource->type != DeviceType::SharedMemory) {
            continue;
        }
        const unsigned got = uct_iface_progress(i->iface.get());
        if (got == 0) continue;
        UFI_LOG_DEBUG(Subsys::EpData, "{}: traffic arrived without its wake-up signal",
                      i->resource->label());
        activate(*i);
        n += got;
    }
    return n;
}

size_t EndpointWorker::progressing_ifaces() const noexcept {
    size_t n = 0;
    for (const auto &i : ifaces_) n += i->progressing;
    return n;
}

std::vector<uint16_t> EndpointWorker::named_ports() const {
    std::vector<uint16_t> out;
    for (const auto &i : ifaces_) {
        if (i->named_port != 0 && !i->iface.inherited()) out.push_back(i->named_port);
    }
    return out;
}

unsigned EndpointWorker::skip_fifo_holes() noexcept {
    static const auto after = std::chrono::milliseconds(
        std::clamp<int64_t>(config::registry().get_int("UFI_SHM_HOLE_TIMEOUT"), 0, 3600000));
    if (after.count() == 0) return 0;
    const auto now = std::chrono::steady_clock::now();
    unsigned n = 0;
    for (const auto &i : ifaces_) {
        if (i->fifo_shape.elem_size == 0 || i->iface.inherited() ||
            (i->resource->tl != "posix" && i->resource->tl != "sysv")) {
            continue;
        }
        if (!i->recv_fifo_looked) {
            i->recv_fifo_looked = true;
            (void)locate_recv_fifo(i->iface.get(), i->fifo_shape.elem_size, i->fifo_shape.elem_count,
                                   i->recv_fifo);
        }
        if (i->hole_watch.check(i->recv_fifo, now, after)) ++n;
    }
    fifo_holes_skipped_ += n;
    return n;
}

unsigned EndpointWorker::close_named_abortively() const noexcept {
    unsigned n = 0;
    for (const auto &i : ifaces_) {
        if (i->named_port != 0 && !i->iface.inherited()) n += close_abortively_on(i->named_port);
    }
    return n;
}

EndpointWorker::~EndpointWorker() {
    // Watched fds leave the async context before their ifaces close.
    for (auto &i : ifaces_) {
        if (i->watched && !i->iface.inherited()) ucs_async_remove_handler(i->event_fd, 1);
        i->watched = false;
    }
    // Explicit, though it is also the members' reverse order: ifaces before the worker they
    // live on, the worker before its async context. (The mds belong to the domain.)
    ifaces_.clear();
    worker_.reset();
    async_.reset();
    async_thread_.reset();
}

unsigned EndpointWorker::progress() noexcept {
    const bool periodic = (++progress_calls_ & kMissedEventsEvery) == 0;
    unsigned n = 0;
    if (!async_thread_) {
        ucs_async_poll(async_.get());
    } else if (periodic) {
        // Events the async thread could not deliver (the context was blocked) wait in its
        // "missed" queue; they are control events (connections, activations), so a check
        // every few calls is soon enough, and the fast path is a few loads lighter.
        __ucs_async_poll_missed(async_.get());
    }
    if (periodic && unwoken_ != 0) n += poll_unwoken();
    return n + uct_worker_progress(worker_.get());
}

unsigned EndpointWorker::progress_everything() noexcept {
    const unsigned n = unwoken_ != 0 ? poll_unwoken() : 0;
    return n + progress();
}

Status EndpointWorker::arm() noexcept {
    if (async_thread_) __ucs_async_poll_missed(async_.get());  // nothing missed before sleeping
    for (const auto &i : ifaces_) {
        if (i->arm_events == 0) continue;
        const ucs_status_t status = uct_iface_event_arm(i->iface.get(), i->arm_events);
        if (status == UCS_OK) continue;
        if (status != UCS_ERR_BUSY) {
            UFI_LOG_DEBUG(Subsys::EpData, "uct_iface_event_arm({}): {}", i->resource->label(),
                          to_string(status));
        }
        // An iface still waiting for its first wake-up that cannot arm has traffic, and this
        // arm may just have taken its signal off its fd (an mm iface's arm drains its socket):
        // the async thread watching that fd then never sees it, and the traffic would wait for
        // poll_unwoken(), which only runs while someone keeps progressing. Take over the async
        // thread's job: progress it from now on.
        if (i->watched) activate(*i);
        return Status::kBusy;
    }
    return kOk;
}

// A handler returns a Status where UCT's returns a ucs_status_t: one byte with the same
// values (ucs_status.h), so UCT calls it as its own type.
static_assert(kAmDesc == UCT_CB_PARAM_FLAG_DESC);

Status EndpointWorker::set_am_handler(uint8_t id, AmHandlerFn cb, void *arg) noexcept {
    const auto as_uct = reinterpret_cast<uct_am_callback_t>(reinterpret_cast<void (*)()>(cb));
    for (const auto &i : ifaces_) {
        if (!i->caps.am_short && !i->caps.am_bcopy && !i->caps.am_zcopy) {
            continue;  // cma: no active messages
        }
        const ucs_status_t status = uct_iface_set_am_handler(i->iface.get(), id, as_uct, arg, 0);
        if (status != UCS_OK) return status_of(status);
    }
    return kOk;
}

std::vector<address::TransportRecord> EndpointWorker::records() const {
    std::vector<address::TransportRecord> out;
    out.reserve(ifaces_.size());
    for (const auto &i : ifaces_) out.push_back({i->resource->tl, i->device_addr, i->iface_addr});
    return out;
}

namespace {

// Whether `oi` reaches the peer's record (a record of another shape never reaches UCT).
bool iface_reaches(const OpenIface &oi, const address::TransportRecord &rec) noexcept {
    return record_fits(oi, rec) &&
           uct_iface_is_reachable(oi.iface.get(), PeerDeviceAddr(rec, oi.ns_mark).get(),
                                  iface_addr_of(rec));
}

}  // namespace

bool EndpointWorker::is_reachable(const address::TransportRecord &peer) const noexcept {
    for (const auto &i : ifaces_) {
        if (iface_reaches(*i, peer)) return true;
    }
    return false;
}

bool EndpointWorker::reaches_over_shared_memory(
    std::span<const address::TransportRecord> peer) const noexcept {
    for (const auto &i : ifaces_) {
        if (i->resource->type != DeviceType::SharedMemory ||
            (!i->caps.am_short && !i->caps.am_bcopy && !i->caps.am_zcopy)) {
            continue;
        }
        for (const auto &rec : peer) {
            if (iface_reaches(*i, rec)) return true;
        }
    }
    return false;
}

bool record_fits(const OpenIface &oi, const address::TransportRecord &rec) noexcept {
    if (rec.tl != oi.resource->tl || rec.device_addr.size() != oi.caps.device_addr_len ||
        rec.iface_addr.size() != oi.iface_addr.size()) {
        return false;
    }
    const std::vector<uint8_t> &g = oi.fifo_geometry;
    return g.empty() || oi.iface_addr.empty() ||
           std::equal(g.begin(), g.end(), rec.iface_addr.end() - static_cast<std::ptrdiff_t>(g.size()));
}

}  // namespace ufi::transports
