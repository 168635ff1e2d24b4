// The target's access checks and counting (target_access.h).
#include "runtime/proto/target_access.h"

#include "base/log/log.h"
#include "runtime/cntr/access_tally.h"
#include "runtime/cntr/binding.h"
#include "runtime/mr/binding.h"
#include "runtime/mr/mr_state.h"

#include <rdma/fi_errno.h>

#include <algorithm>

namespace ufi::runtime::proto {

using log::Subsys;

mr::MrState *TargetAccess::keys() noexcept {
    if (mr_state_ == nullptr) mr_state_ = mr::mr_state_of(domain_);
    return mr_state_;
}

int TargetAccess::check(fi_addr_t peer_key, const wire::RmaSeg *segs, size_t nsegs,
                        uint64_t total, uint64_t access, bool first, IovList &out) noexcept {
    out.count = 0;
    out.total = 0;
    // The key the peer was admitted with, against each MR's own.
    mr::PeerAuth auth;
    auth.key = auth_key_.data();
    auth.key_len = auth_key_.size();
    auth.key_handle = peer_key;
    uint64_t sum = 0;
    for (size_t i = 0; i < nsegs; ++i) {
        const wire::RmaSeg &s = segs[i];
        if (s.len > total - sum) return -FI_EINVAL;  // the segments exceed the total
        // A single-use key is used up by the operation's first check of it; its later
        // fragments (and later segments naming it again) find it used by this very access.
        bool repeated = !first;
        for (size_t j = 0; j < i && !repeated; ++j) repeated = segs[j].key == s.key;
        uint64_t done = 0;
        do {
            mr::RemoteTarget t;
            const mr::KeyCheck c =
                mr::check_remote_access(keys(), s.key, s.addr + done, s.len - done, access,
                                        !repeated && done == 0, &t, &auth);
            if (c != mr::KeyCheck::Ok && !(c == mr::KeyCheck::Consumed && (repeated || done != 0))) {
                UFI_LOG_DEBUG(Subsys::EpData, "RMA refused: key {:#x} [{:#x}, +{}): {}", s.key,
                              s.addr + done, s.len - done, mr::key_check_name(c));
                return mr::key_check_errno(c);
            }
            const size_t n = std::min<uint64_t>(t.contiguous, s.len - done);
            if (n == 0 && done < s.len) return -FI_EACCES;  // no progress: never loop
            if (n != 0) {
                if (out.count == kMaxIov) {
                    UFI_LOG_INFO(Subsys::EpData,
                                 "RMA refused: its target spans more than {} buffers", kMaxIov);
                    return -FI_EINVAL;
                }
                out.v[out.count++] = {reinterpret_cast<uint8_t *>(t.local_addr), n};
            }
            done += n;
        } while (done < s.len);
        sum += s.len;
    }
    if (sum != total) return -FI_EINVAL;
    out.total = sum;
    return 0;
}

int TargetAccess::check_one(fi_addr_t peer_key, const wire::RmaSeg &s, uint64_t access,
                            IovList &out) noexcept {
    mr::PeerAuth auth;
    auth.key = auth_key_.data();
    auth.key_len = auth_key_.size();
    auth.key_handle = peer_key;
    mr::RemoteTarget t;
    const mr::KeyCheck c =
        mr::check_remote_access(keys(), s.key, s.addr, s.len, access, true, &t, &auth);
    if (c != mr::KeyCheck::Ok) {
        UFI_LOG_DEBUG(Subsys::EpData, "RMA refused: key {:#x} [{:#x}, +{}): {}", s.key, s.addr,
                      s.len, mr::key_check_name(c));
        return mr::key_check_errno(c);
    }
    if (t.contiguous >= s.len) {
        out.v[0] = {reinterpret_cast<uint8_t *>(t.local_addr), s.len};
        out.count = s.len != 0 ? 1 : 0;
        out.total = s.len;
        return 0;
    }
    // Across buffers of an MR registered from several: the general walk (not `first`: the
    // check above used a single-use key up already).
    return check(peer_key, &s, 1, s.len, access, false, out);
}

void TargetAccess::count(const wire::RmaSeg *segs, size_t nsegs, uint64_t total,
                         uint64_t access) noexcept {
    // One access, one count per counter, however many bindings reach it: a fetching atomic
    // is a read and a write, a counter may be bound to the endpoint and to the MR, an access
    // may span several MRs bound to one counter (or one MR several times).
    mr::MrState *state = keys();
    // (Until some MR of the domain has a counter bound, there is nothing to look up.)
    const bool mr_counters =
        state != nullptr && state->counters_bound.load(std::memory_order_acquire);
    cntr::Cntr *w = (access & FI_REMOTE_WRITE) ? rem_write_ : nullptr;
    cntr::Cntr *r = (access & FI_REMOTE_READ) ? rem_read_ : nullptr;
    if (!mr_counters) {  // the common case: the endpoint's counters only
        if (w != nullptr) cntr::on_completion(w, total);
        if (r != nullptr && r != w) cntr::on_completion(r, total);
        return;
    }
    cntr::AccessTally tally;
    tally.count_whole(w, total);
    tally.count_whole(r, total);
    for (size_t i = 0; i < nsegs; ++i) {
        mr::count_remote_access(state, segs[i].key, access, segs[i].len, tally);
    }
}

}  // namespace ufi::runtime::proto
