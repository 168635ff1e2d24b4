// The data path's life (creation, teardown), progress and completions. The peer table is in
// peer_table.cpp (the handshake that connects peers: wireup.h), the send scheduler in
// send_queue.cpp (its rules: sched.h), a message's way in message_way.cpp, the receive side in
// receive.cpp; the protocols are modules (runtime/proto/README.md).
#include "runtime/proto/data_path.h"

#include "runtime/cntr/binding.h"
#include "base/config/config.h"
#include "base/config/parse.h"
#include "runtime/cq/cq.h"
#include "base/log/log.h"
#include "runtime/proto/wire.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <optional>

namespace ufi::runtime::proto {

using log::Subsys;

void read_protocol_settings(DataPathConfig &c) noexcept {
    const config::Registry &reg = config::registry();
    c.proto_info = reg.get_bool("UFI_PROTO_INFO");
    c.peer_check_ms = static_cast<int>(
        std::clamp<int64_t>(reg.get_int("UFI_PEER_CHECK_INTERVAL"), 0, 3600 * 1000));
    c.peer_timeout_ms = static_cast<int>(
        std::clamp<int64_t>(reg.get_int("UFI_PEER_TIMEOUT"), 0, 24 * 3600 * 1000));
    c.peer_reuse_ms = static_cast<int>(
        std::clamp<int64_t>(reg.get_int("UFI_PEER_REUSE_DELAY"), 0, 24 * 3600 * 1000));
    c.rndv_split = kDefaultRndvSplit;
    const std::string &split = reg.get_string("UFI_RNDV_SPLIT");
    if (split == "off" || split == "0") {
        c.rndv_split = 0;
    } else if (const std::optional<size_t> v = config::parse_size(split); v && *v > 0) {
        c.rndv_split = *v;
    } else if (!split.empty()) {
        static std::once_flag warned;
        std::call_once(warned, [&] {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "UFI_RNDV_SPLIT={}: not a size (e.g. 64K) or off; {} bytes are used",
                         split, kDefaultRndvSplit);
        });
    }
    c.rx_slip = std::chrono::nanoseconds(
        std::clamp<int64_t>(reg.get_int("UFI_RX_SLIP"), 0, 1000 * 1000));
    c.rndv_thresh = 0;
    const std::string &text = reg.get_string("UFI_RNDV_THRESH");
    if (text.empty() || text == "auto") return;
    const std::optional<size_t> v = config::parse_size(text);
    if (!v || *v == 0) {
        static std::once_flag warned;
        std::call_once(warned, [&] {
            UFI_LOG_WARN(Subsys::EpCtrl,
                         "UFI_RNDV_THRESH={}: not a size of at least 1 byte (e.g. 64K) or auto; "
                         "auto is used",
                         text);
        });
        return;
    }
    c.rndv_thresh = *v;
}

DataPath::DataPath(const DataPathConfig &config)
    : cfg_(config),
      worker_(config.worker),
      lane_policy_(transports::LanePolicy::from_registry()),
      tx_size_(config.tx_size),
      rx_size_(config.rx_size),
      target_(cfg_.domain, cfg_.auth_key, cfg_.rem_read_cntr, cfg_.rem_write_cntr),
      source_rule_(SourceRule::from_caps(config.caps)),
      tagged_multi_recv_((config.caps & FI_TAGGED_MULTI_RECV) != 0) {
    peers_.set_connected(config.connected);
    named_ports_ = worker_ != nullptr && !worker_->named_ports().empty();
}

int DataPath::create(const DataPathConfig &config, std::unique_ptr<DataPath> &out) noexcept {
    try {
        std::unique_ptr<DataPath> dp(new DataPath(config));
        for (uint8_t id = 0; id < wire::kAmIdLimit; ++id) {
            transports::AmHandlerFn am = &DataPath::drop_unknown_id;
            for (const MessageHandler &h : message_handlers()) {
                if (h.id == id) am = h.am;
            }
            const transports::Status status = dp->worker_->set_am_handler(id, am, dp.get());
            if (status != transports::Status::kOk) {
                UFI_LOG_WARN(Subsys::EpCtrl, "fi_enable: cannot install active-message handler {}: {}",
                             id, transports::to_string(status));
                return transports::fi_errno_of(status);
            }
        }
        // Slipping pays only where a FIFO in shared memory carries the messages (rx_slip.h):
        // an iface of a shared-memory device that sends active messages (posix, sysv).
        for (const auto &iface : dp->worker_->ifaces()) {
            if (iface->resource->type == transports::DeviceType::SharedMemory &&
                iface->caps.am_short) {
                dp->rx_slip_.set_window(config.rx_slip);
            }
        }
        out = std::move(dp);
        return 0;
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
}

DataPath::~DataPath() {
    // What this endpoint's traffic did, for the one who asked what runs (UFI_PROTO_INFO):
    // a high queued or unexpected count says where a benchmark's time went.
    const auto level = cfg_.proto_info ? log::Level::Info : log::Level::Debug;
    const DataPathStats &s = stats_;
    UFI_LOG_IF_ASKED(cfg_.proto_info, level, Subsys::EpData,
            "endpoint closed: {} sends waited in a peer queue, {} messages came unexpected ({} "
            "kept in the transport's descriptor), {} "
            "sent as one zero-copy message, {} by rendezvous sent ({} get ({} copied by both "
            "sides), {} put, {} active-message received); dropped {} malformed, {} from unknown "
            "sources, {} under unknown ids; {} RMA accesses refused, {} writes granted to their initiator's puts, {} "
            "peers restarted, {} departed peers' slots given up for reuse; {} peers refused (authorization key or version), {} hosts timed "
            "out, {} directed receives failed with their peer, {} transfers held back from failed "
            "peers that write them, {}/{} keepalives sent/received; "
            "{} data messages received (fragments after a message's first not "
            "counted), receives slipped {} times behind "
            "streaming senders; {} answers' FIFO heads demoted",
            s.sends_queued, s.unexpected, s.unexpected_kept, s.eager_zcopy, s.rndv_sends, s.rndv_get, s.rndv_split,
            s.rndv_put, s.rndv_am, s.dropped_malformed, s.dropped_unknown_src, s.dropped_unknown_id, s.rma_refused,
            s.rma_put_grants, s.peer_restarts, s.peers_retired, s.refused_peers, s.hosts_timed_out,
            s.directed_recvs_failed, s.held_from_failed_writers, s.keepalives_sent, s.keepalives_received, rx_data_msgs_,
            rx_slip_.slips(), s.heads_demoted);
    // fi_close with operations outstanding drops them without completions (fi_endpoint(3));
    // the lanes close with the peers, before the worker that owns their ifaces. A lane's
    // zero-copy operations still in flight end as it closes (ucx_handles.h), calling their
    // completions: those then do nothing (the records stay until the pools go).
    zcopy_.detach_completions();
    // Unexpected messages never received give their transport descriptors back while the
    // ifaces that own them are still open.
    for (bool tagged : {false, true}) {
        for (UnexpMsg *u = match_.unexpected(tagged).front(); u != nullptr; u = u->hook.next) {
            release_desc(u);
        }
    }
    peers_.clear();
}

unsigned DataPath::progress() noexcept {
    unsigned done = 0;
    if (worker_->has_failures()) handle_failures();
    done += wireup_.progress();
    if ((ticks_ & kCheckTicks) == 0) check_peers_if_due();
    done += completions_.flush();
    if (zcopy_.has_retries()) done += zcopy_.retry();
    if (zcopy_.holding_failed()) done += zcopy_.release_held();
    // Peers drained here may queue more (a handler run by progress): those wait for the next
    // call.
    done += busy_.take_each([this](uint32_t idx) {
        Peer &p = *peers_[idx];
        p.busy = false;
        drain(p);
    });
    return done;
}

bool DataPath::relieve_lane(Peer &p) noexcept {
    const uint32_t idx = p.local_idx;  // (progress may put a fresh peer in its place)
    worker_->progress();
    if (wants_progress()) progress();
    const Peer *now = peers_[idx].get();
    return now->state == PeerState::kConnected && now->queue.empty() && now->ctrl.empty();
}

void DataPath::mark_busy(Peer &p) {
    refresh_eager_gate(p);  // (work queued for it: sends go behind it)
    busy_.mark(p);
}


void DataPath::finish_send(SendReq *r, int error) noexcept {
    if (r->handed_off) {
        r->handed_off = false;
        if (r->peer < peers_.size()) {
            --peers_[r->peer]->handed_off;
            if (r->op != SendOp::kMessage) {
                --peers_[r->peer]->rma_handed_off;
                refresh_eager_gate(*peers_[r->peer]);
            }
        }
    }
    if (r->op != SendOp::kMessage) {
        rma_.finish(r, error);
        return;
    }
    if (r->completion || error != 0) {
        Completion c{};
        c.cq = cfg_.tx_cq;
        c.context = r->context;
        c.flags = r->cq_flags;
        c.len = error != 0 ? r->iov.total : 0;
        c.src = FI_ADDR_NOTAVAIL;
        c.err = -error;
        if (c.cq != nullptr) completions_.write(c);
    }
    if (cfg_.send_cntr != nullptr) {
        if (error == 0) cntr::on_completion(cfg_.send_cntr, r->iov.total);
        else cntr::on_error(cfg_.send_cntr);
    }
    zcopy_.release_send_slot(*r);
    r->copy.clear();
    --tx_outstanding_;
    send_pool_.put(r);
}

ssize_t DataPath::cancel(void *context) noexcept {
    if (context == nullptr) return 0;  // an operation without context cannot be named
    for (List<RecvReq> *list : {&match_.posted(false), &match_.posted(true)}) {
        for (RecvReq *r = list->front(); r != nullptr; r = r->hook.next) {
            if (r->context != context) continue;
            cancel_posted(*list, r);
            return 0;
        }
    }
    return 0;  // not found (completed already, or never posted): nothing to report
}

void DataPath::cancel_posted(List<RecvReq> &list, RecvReq *r) noexcept {
    list.remove(r);
    Completion c{};
    c.cq = cfg_.rx_cq;
    c.context = r->context;
    c.flags = FI_RECV | (r->tagged ? FI_TAGGED : FI_MSG);
    c.tag = r->tag;
    c.src = FI_ADDR_NOTAVAIL;
    c.err = FI_ECANCELED;
    if (cfg_.recv_cntr != nullptr) cntr::on_error(cfg_.recv_cntr);
    if (r->multi && r->children != 0) {
        // Messages still arriving into it: the last one's completion releases it.
        r->released = true;
    } else {
        if (r->multi) c.flags |= FI_MULTI_RECV;  // released, nothing in it pending
        r->multi = false;
        --rx_posted_;
        recv_pool_.put(r);
    }
    if (c.cq != nullptr) completions_.write(c);
}

bool DataPath::deliver_for_test(uint8_t id, void *data, size_t length) noexcept {
    return deliver(id, static_cast<const uint8_t *>(data), length);
}

void DataPath::remote_cq_data(Peer &p, uint32_t flags, uint64_t data, uint64_t total) noexcept {
    if ((flags & wire::kRmaHasData) && cfg_.rx_cq != nullptr) {
        // fi_writedata: the data reaches the target's CQ (no receive buffer is consumed: ufi
        // does not require FI_RX_CQ_DATA).
        Completion c{};
        c.cq = cfg_.rx_cq;
        c.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
        c.len = total;
        c.data = data;
        c.src = peers_.source_of(p);
        completions_.write(c);
    }
}

}  // namespace ufi::runtime::proto
