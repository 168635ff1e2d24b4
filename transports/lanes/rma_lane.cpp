#include "transports/lanes/rma_lane.h"

#include "base/log/log.h"
#include "transports/fork_safety.h"
#include "transports/iface/record_addr.h"
#include "transports/lanes/uct_views.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

namespace ufi::transports {

// ---- LocalRegion -------------------------------------------------------------------------

LocalRegion::LocalRegion(LocalRegion &&o) noexcept
    : md_(std::exchange(o.md_, nullptr)),
      memh_(std::exchange(o.memh_, static_cast<uct_mem_h>(nullptr))),
      rkey_size_(o.rkey_size_),
      generation_(o.generation_) {}

LocalRegion &LocalRegion::operator=(LocalRegion &&o) noexcept {
    if (this != &o) {
        reset();
        md_ = std::exchange(o.md_, nullptr);
        memh_ = std::exchange(o.memh_, static_cast<uct_mem_h>(nullptr));
        rkey_size_ = o.rkey_size_;
        generation_ = o.generation_;
    }
    return *this;
}

Status LocalRegion::create(const OpenIface &iface, void *addr, size_t len, LocalRegion &out) {
    out.reset();
    uct_md_h md = iface.md;
    uct_mem_h memh = UCT_MEM_HANDLE_NULL;
    const Status s =
        status_of(uct_md_mem_reg(md, addr, len == 0 ? 1 : len, UCT_MD_MEM_ACCESS_ALL, &memh));
    if (s != kOk) return s;
    out.md_ = md;
    out.memh_ = memh;
    out.rkey_size_ = iface.rkey_packed_size;
    out.generation_ = fork::generation();
    return kOk;
}

Status LocalRegion::pack(std::vector<uint8_t> &out) const {
    out.assign(rkey_size_, 0);
    if (rkey_size_ == 0) {
        // A 0-byte key is still packed (UCT's unpack expects the call to have happened).
        uint8_t dummy[8];
        return status_of(uct_md_mkey_pack(md_, memh_, dummy));
    }
    return status_of(uct_md_mkey_pack(md_, memh_, out.data()));
}

void LocalRegion::reset() noexcept {
    if (md_ != nullptr && !fork::inherited(generation_)) uct_md_mem_dereg(md_, memh_);
    md_ = nullptr;
    memh_ = UCT_MEM_HANDLE_NULL;
}

// ---- PeerKey -------------------------------------------------------------------------------

PeerKey::PeerKey(PeerKey &&o) noexcept
    : component_(o.component_),
      bundle_(o.bundle_),
      valid_(std::exchange(o.valid_, false)),
      generation_(o.generation_) {}

PeerKey &PeerKey::operator=(PeerKey &&o) noexcept {
    if (this != &o) {
        reset();
        component_ = o.component_;
        bundle_ = o.bundle_;
        valid_ = std::exchange(o.valid_, false);
        generation_ = o.generation_;
    }
    return *this;
}

Status PeerKey::unpack(const OpenIface &iface, const uint8_t *packed, size_t len, PeerKey &out) {
    out.reset();
    if (len != iface.rkey_packed_size) return Status::kInvalidParam;
    static const uint8_t kEmpty[8] = {};
    const Status s =
        status_of(uct_rkey_unpack(iface.component, len == 0 ? kEmpty : packed, as_uct(out.bundle_)));
    if (s != kOk) return s;
    out.component_ = iface.component;
    out.valid_ = true;
    out.generation_ = fork::generation();
    return kOk;
}

void PeerKey::reset() noexcept {
    if (valid_ && !fork::inherited(generation_)) uct_rkey_release(component_, as_uct(bundle_));
    valid_ = false;
}

// ---- RmaLane -------------------------------------------------------------------------------

Status RmaLane::connect(const OpenIface &iface, const address::TransportRecord &peer, RmaLane &out) {
    RmaLane lane;
    const Status s =
        Ep::connect_to_iface(iface.iface.get(), PeerDeviceAddr(peer, iface.ns_mark).get(),
                             iface_addr_of(peer), lane.owned_);
    if (s != kOk) return s;
    lane.ep_ = lane.owned_.get();
    lane.iface_ = &iface;
    out = std::move(lane);
    return kOk;
}

void RmaLane::share(const AmLane &lane, RmaLane &out) noexcept {
    out.reset();
    out.ep_ = lane.handle();
    out.iface_ = &lane.iface();
}

Status RmaLane::get(const Iov *iov, size_t n, uint64_t raddr, RemoteKey rkey,
                    Completion *comp) noexcept {
    return status_of(uct_ep_get_zcopy(ep_, as_uct(iov), n, raddr, rkey, as_uct(comp)));
}

Status RmaLane::put(const Iov *iov, size_t n, uint64_t raddr, RemoteKey rkey,
                    Completion *comp) noexcept {
    return status_of(uct_ep_put_zcopy(ep_, as_uct(iov), n, raddr, rkey, as_uct(comp)));
}

bool lane_serves_rma(const AmLane &lane, RmaKind kind) noexcept {
    const uint64_t op = kind == RmaKind::kGet ? UCT_IFACE_FLAG_GET_ZCOPY : UCT_IFACE_FLAG_PUT_ZCOPY;
    return lane.connected() && (lane.iface().caps.flags & op) &&
           lane.iface().md_can_register;
}

LaneChoice choose_rma_lane(const EndpointWorker &worker, const address::EndpointAddress &peer,
                           RmaKind kind, const AmLane *am_lane) {
    LaneChoice best;
    double best_bw = -1;
    const uint64_t op = kind == RmaKind::kGet ? UCT_IFACE_FLAG_GET_ZCOPY : UCT_IFACE_FLAG_PUT_ZCOPY;
    const auto &ifaces = worker.ifaces();
    if (am_lane != nullptr && lane_serves_rma(*am_lane, kind)) {
        for (size_t i = 0; i < ifaces.size(); ++i) {
            if (ifaces[i].get() != &am_lane->iface()) continue;
            best.iface = i;
            best.p2p = am_lane->p2p();
            best_bw = ifaces[i]->caps.perf.bandwidth_dedicated + ifaces[i]->caps.perf.bandwidth_shared;
        }
    }
    for (size_t i = 0; i < ifaces.size(); ++i) {
        const OpenIface &oi = *ifaces[i];
        const IfaceCaps &a = oi.caps;
        if (!(a.flags & op) || !(a.flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE)) continue;
        if (!oi.md_can_register) continue;
        if (!zcopy_permitted(oi)) continue;
        for (size_t r = 0; r < peer.records.size(); ++r) {
            const address::TransportRecord &rec = peer.records[r];
            if (!record_fits(oi, rec)) continue;
            if (!uct_iface_is_reachable(oi.iface.get(), PeerDeviceAddr(rec, oi.ns_mark).get(),
                                        iface_addr_of(rec))) continue;
            const double bw = a.perf.bandwidth_dedicated + a.perf.bandwidth_shared;
            if (bw > best_bw) {
                best.iface = i;
                best.record = r;
                best_bw = bw;
            }
        }
    }
    if (best.iface == SIZE_MAX) best.why = "no zero-copy transport reaches the peer";
    return best;
}

bool zcopy_permitted(const OpenIface &iface) noexcept {
    return iface.resource == nullptr || iface.resource->tl != "cma" ||
           cross_process_copy_permitted();
}

bool cross_process_copy_permitted() noexcept {
    static const bool permitted = [] {
        // A seccomp filter (containers) refuses the system call itself, even on this process.
        int probe = 42, copy = 0;
        iovec local{&copy, sizeof copy};
        iovec remote{&probe, sizeof probe};
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != sizeof probe || copy != 42) {
            UFI_LOG_INFO(log::Subsys::EpData,
                         "cross-process copy (cma) is not permitted here ({}): large messages "
                         "between processes of this host are copied through shared memory",
                         std::strerror(errno));
            return false;
        }
        // Yama: 2 and 3 forbid attaching to other processes without CAP_SYS_PTRACE (UCX's
        // cma hides itself then; checked here too).
        std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope");
        int scope = 0;
        if (yama >> scope && scope >= 2) {
            UFI_LOG_INFO(log::Subsys::EpData,
                         "kernel.yama.ptrace_scope is {}: cross-process copy (cma) is not used",
                         scope);
            return false;
        }
        return true;
    }();
    return permitted;
}

}  // namespace ufi::transports
