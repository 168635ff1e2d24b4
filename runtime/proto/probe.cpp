// FI_PEEK, FI_CLAIM and FI_DISCARD (fi_tagged(3)): looking at the unexpected messages without
// receiving them, reserving one for a later receive, or dropping one. A claimed message stays
// in its queue, invisible to other receives, and is found again by the context of the peek
// that claimed it (kept in a table here: ufi never writes into an application's context
// without FI_CONTEXT mode).
#include "base/log/log.h"
#include "runtime/cntr/binding.h"
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <new>

namespace ufi::runtime::proto {

using log::Subsys;

ssize_t DataPath::peek(fi_addr_t src, void *context, uint64_t flags, uint64_t tag,
                       uint64_t ignore) noexcept {
    if ((flags & FI_CLAIM) && context == nullptr) {
        UFI_LOG_INFO(Subsys::EpData, "fi_trecvmsg: FI_PEEK | FI_CLAIM needs a context");
        return -FI_EINVAL;
    }
    RecvReq probe;  // a matcher only: never queued
    probe.tagged = true;
    probe.tag = tag;
    probe.ignore = ignore;
    ssize_t rc = 0;
    probe.src = recv_source(src, true, rc);
    if (rc != 0) return rc;
    UnexpMsg *u = match_.has_unexpected(true) ? match_.first_unexpected(probe) : nullptr;
    Completion c{};
    c.cq = cfg_.rx_cq;
    c.context = context;
    c.flags = FI_RECV | FI_TAGGED;
    c.src = FI_ADDR_NOTAVAIL;
    if (u == nullptr) {
        c.tag = tag;
        c.err = FI_ENOMSG;
        if (c.cq != nullptr) completions_.write(c);
        return 0;
    }
    const bool has_data = (u->wire_flags & wire::kHasData) != 0;
    c.flags |= has_data ? FI_REMOTE_CQ_DATA : 0;
    c.len = u->total;
    c.data = has_data ? u->data : 0;
    c.tag = u->tag;
    c.src = u->src < peers_.size() ? peers_.source_of(*peers_[u->src]) : FI_ADDR_NOTAVAIL;
    if (flags & FI_CLAIM) {
        try {
            if (!claimed_.emplace(context, u).second) {
                UFI_LOG_INFO(Subsys::EpData,
                             "fi_trecvmsg: FI_PEEK | FI_CLAIM with a context that holds a claimed "
                             "message already");
                return -FI_EINVAL;
            }
        } catch (const std::bad_alloc &) {
            return -FI_ENOMEM;
        }
        u->claim_ctx = context;
    } else if (flags & FI_DISCARD) {
        match_.remove_unexpected(u);
        drop_unexpected(u);
    }
    if (c.cq != nullptr) completions_.write(c);
    return 0;
}

bool DataPath::has_unexpected_for(fi_addr_t src, bool tagged, uint64_t tag,
                                  uint64_t ignore) noexcept {
    if (!match_.has_unexpected(tagged)) return false;
    RecvReq probe;  // a matcher only: never queued
    probe.tagged = tagged;
    probe.tag = tag;
    probe.ignore = ignore;
    ssize_t rc = 0;
    probe.src = recv_source(src, tagged, rc);
    return rc == 0 && match_.first_unexpected(probe) != nullptr;
}

void DataPath::complete_canceled(void *context, bool tagged, uint64_t tag) noexcept {
    Completion c{};
    c.cq = cfg_.rx_cq;
    c.context = context;
    c.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
    c.tag = tag;
    c.src = FI_ADDR_NOTAVAIL;
    c.err = FI_ECANCELED;
    if (cfg_.recv_cntr != nullptr) cntr::on_error(cfg_.recv_cntr);
    if (c.cq != nullptr) completions_.write(c);
}

ssize_t DataPath::claim(const IovList &iov, void *context, uint64_t flags) noexcept {
    const auto it = context != nullptr ? claimed_.find(context) : claimed_.end();
    if (it == claimed_.end()) {
        UFI_LOG_INFO(Subsys::EpData,
                     "fi_trecvmsg: FI_CLAIM names no message claimed by FI_PEEK | FI_CLAIM with "
                     "this context");
        return -FI_EINVAL;
    }
    UnexpMsg *u = it->second;
    if (flags & FI_DISCARD) {
        claimed_.erase(it);
        match_.remove_unexpected(u);
        Completion c{};
        c.cq = cfg_.rx_cq;
        c.context = context;
        c.flags = FI_RECV | FI_TAGGED;
        c.tag = u->tag;
        c.src = u->src < peers_.size() ? peers_.source_of(*peers_[u->src]) : FI_ADDR_NOTAVAIL;
        drop_unexpected(u);
        if (c.cq != nullptr) completions_.write(c);
        return 0;
    }
    ssize_t rc = 0;
    RecvReq *r = new_recv(FI_ADDR_UNSPEC, context, flags, u->tag, 0, true, rc);
    if (r == nullptr) return rc;  // -FI_EAGAIN: the claim holds; the caller retries
    claimed_.erase(it);
    match_.remove_unexpected(u);
    r->iov.assign(iov);
    ++rx_posted_;
    deliver_unexpected(r, u);
    return 0;
}

void DataPath::drop_unexpected(UnexpMsg *u) noexcept {
    u->claim_ctx = nullptr;
    if (u->rts) {
        // The data stays at the sender: tell it the message was taken (and dropped).
        if (u->src < peers_.size()) ctrl_.send_ack(*peers_[u->src], wire::kAmAts, u->rts_info.send_id, 0);
        u->rts = false;
        retire_unexpected(u);
        return;
    }
    if (u->received < u->total) {
        u->discarded = true;  // its last fragment retires it
        return;
    }
    retire_unexpected(u);
}

}  // namespace ufi::runtime::proto
