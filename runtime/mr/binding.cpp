#include "runtime/mr/binding.h"

#include "runtime/cntr/binding.h"
#include "runtime/domain/domain.h"
#include "runtime/fid_cast.h"
#include "runtime/mr/address_probe.h"
#include "runtime/mr/mr.h"
#include "transports/status.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::mr {

Mr *mr_of(fid_mr *mr) noexcept { return mr == nullptr ? nullptr : mr_of(&mr->fid); }

Mr *mr_of(fid_t fid) noexcept {
    Mr *m = object_of<Mr>(fid, FI_CLASS_MR);  // class and ufi's ops table first
    return m != nullptr && m->desc.magic == MrDesc::kMagic ? m : nullptr;
}

Mr *mr_of_desc(void *desc) noexcept {
    if (desc == nullptr) return nullptr;
    auto *d = static_cast<MrDesc *>(desc);
    return d->magic == MrDesc::kMagic ? d->mr : nullptr;
}

bool local_desc_required(Domain *domain) noexcept {
    MrState *state = mr_state_of(domain);
    return state != nullptr ? state->policy.local_desc_required
                            : mr_mode_policy(domain->mr_mode).local_desc_required;
}

int check_local(Domain *domain, const Mr *mr, const void *buf, std::size_t len,
                std::uint64_t access) noexcept {
    if (mr == nullptr || mr->domain != domain) return -FI_EINVAL;
    const auto addr = reinterpret_cast<std::uintptr_t>(buf);
    bool inside = false;
    for (const Segment &s : mr->segments)
        inside = inside || (addr >= s.addr && addr + len <= s.addr + s.len);
    if (!inside) return -FI_EINVAL;
    if (mr->state->policy.local_desc_required && (mr->access & access) != access) return -FI_EACCES;
    return 0;
}

int acquire_local(Domain *domain, const void *buf, std::size_t len, transports::RegionRef &out) {
    if (buf == nullptr || len == 0) return -FI_EINVAL;
    MrState *state = mr_state_of(domain);
    if (state == nullptr) return -FI_ENOMEM;
    return transports::fi_errno_of(state->cache->acquire(const_cast<void *>(buf), len, out));
}

const transports::MemoryDomains *memory_domains(Domain *domain) noexcept {
    MrState *state = mr_state_of(domain);
    return state != nullptr ? &state->mds : nullptr;
}

bool is_mapped_key(std::uint64_t key) noexcept {
    return MappedKeys::is_mapped_handle(key);
}

const MappedKey *find_mapped_key(Domain *domain, std::uint64_t key) noexcept {
    MrState *state = mr_state_of(domain);
    return state != nullptr && !state->mapped.empty() ? state->mapped.find(key) : nullptr;
}

int key_check_errno(KeyCheck check) noexcept {
    switch (check) {
        case KeyCheck::Ok:
            return 0;
        case KeyCheck::UnknownKey:
        case KeyCheck::Consumed:
            return -FI_EKEYREJECTED;
        case KeyCheck::Disabled:
        case KeyCheck::AccessDenied:
        case KeyCheck::OutOfBounds:
        case KeyCheck::Unauthorized:
            break;
        case KeyCheck::NotMapped:
            return -FI_EFAULT;
    }
    return -FI_EACCES;
}

const char *key_check_name(KeyCheck check) noexcept {
    switch (check) {
        case KeyCheck::Ok:
            return "ok";
        case KeyCheck::UnknownKey:
            return "unknown key";
        case KeyCheck::Disabled:
            return "memory region not enabled";
        case KeyCheck::AccessDenied:
            return "access not granted";
        case KeyCheck::OutOfBounds:
            return "outside the memory region";
        case KeyCheck::Consumed:
            return "single-use key already used";
        case KeyCheck::Unauthorized:
            return "the peer does not hold the region's authorization key";
        case KeyCheck::NotMapped:
            return "not mapped here for that access";
    }
    return "?";
}

namespace {

// Whether a peer admitted with `auth` may reach `mr` (its key fixed at registration and, on
// FI_AV_AUTH_KEY domains, the keys held from fi_mr_enable on).
bool peer_authorized(const Mr &mr, const PeerAuth &auth) {
    if (mr.holds_auth_keys) {
        return std::find(mr.held_auth_keys.begin(), mr.held_auth_keys.end(), auth.key_handle) !=
               mr.held_auth_keys.end();
    }
    if (mr.auth_key.empty()) return true;  // the domain's key: every peer the endpoint admitted
    return auth.key_len == mr.auth_key.size() &&
           std::memcmp(auth.key, mr.auth_key.data(), auth.key_len) == 0;
}

}  // namespace

KeyCheck check_remote_access(Domain *domain, std::uint64_t key, std::uint64_t addr, std::size_t len,
                             std::uint64_t access, bool consume, RemoteTarget *out,
                             const PeerAuth *auth) noexcept {
    return check_remote_access(mr_state_of(domain), key, addr, len, access, consume, out, auth);
}

KeyCheck check_remote_access(MrState *state, std::uint64_t key, std::uint64_t addr, std::size_t len,
                             std::uint64_t access, bool consume, RemoteTarget *out,
                             const PeerAuth *auth) noexcept {
    if (state == nullptr) return KeyCheck::UnknownKey;
    return state->keys.visit(key, [&](Mr *mr) {
        // A local-only region is in the table for its key's sake only: peers never reach it.
        if (mr == nullptr || (mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) == 0)
            return KeyCheck::UnknownKey;
        if (!mr->enabled.load(std::memory_order_acquire)) return KeyCheck::Disabled;
        if (auth != nullptr && !peer_authorized(*mr, *auth)) return KeyCheck::Unauthorized;
        if ((mr->access & access) != access) return KeyCheck::AccessDenied;
        if (addr + len < addr) return KeyCheck::OutOfBounds;
        RemoteTarget t;
        if (mr->virt_addr) {
            bool found = false;
            for (std::size_t i = 0; i < mr->segments.size() && !found; ++i) {
                const Segment &s = mr->segments[i];
                if (addr >= s.addr && addr + len <= s.addr + s.len) {
                    t = RemoteTarget{static_cast<std::uintptr_t>(addr), len, i};
                    found = true;
                }
            }
            if (!found) return KeyCheck::OutOfBounds;
        } else {
            if (addr > mr->length || len > mr->length - addr) return KeyCheck::OutOfBounds;
            std::uint64_t offset = addr;
            std::size_t i = 0;
            while (i < mr->segments.size() && offset >= mr->segments[i].len)
                offset -= mr->segments[i++].len;
            if (i == mr->segments.size()) {
                if (len != 0) return KeyCheck::OutOfBounds;
                i = mr->segments.size() - 1;
                offset = mr->segments[i].len;
            }
            const Segment &s = mr->segments[i];
            const std::size_t room = s.len - offset;
            t = RemoteTarget{s.addr + offset, len < room ? len : room, i};
        }
        // Registered from NULL: the range must be mapped for this access, now.
        if (mr->segments[t.segment].unpinned &&
            !range_accessible(t.local_addr, t.contiguous, (access & FI_REMOTE_WRITE) != 0)) {
            return KeyCheck::NotMapped;
        }
        if (out != nullptr) *out = t;  // Consumed too: a write's later fragments use it
        if (mr->single_use) {
            if (consume ? mr->consumed.exchange(true) : mr->consumed.load())
                return KeyCheck::Consumed;
        }
        return KeyCheck::Ok;
    });
}

void count_remote_access(Domain *domain, std::uint64_t key, std::uint64_t access,
                         std::uint64_t bytes, cntr::AccessTally &tally) noexcept {
    count_remote_access(mr_state_of(domain), key, access, bytes, tally);
}

void count_remote_access(MrState *state, std::uint64_t key, std::uint64_t access,
                         std::uint64_t bytes, cntr::AccessTally &tally) noexcept {
    if (state == nullptr || !state->counters_bound.load(std::memory_order_acquire)) return;
    state->keys.visit(key, [&](Mr *mr) {
        if (mr == nullptr || (mr->counted_access.load(std::memory_order_acquire) & access) == 0) {
            return 0;
        }
        std::lock_guard<std::mutex> lock(mr->mutex);  // against fi_mr_bind
        for (const Mr::CounterBinding &b : mr->counters) {
            if (b.flags & access) tally.count_segment(b.cntr, bytes);
        }
        return 0;
    });
}

int build_key_reply(Domain *domain, std::uint64_t key, std::vector<std::uint8_t> &out) noexcept {
    MrState *state = mr_state_of(domain);
    if (state == nullptr) return -FI_ENOMEM;
    try {
        return state->keys.visit(key, [&](Mr *mr) {
            // A local-only region is not reachable by peers: as if there were no such key.
            if (mr == nullptr || (mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) == 0)
                return -FI_EKEYREJECTED;
            if (!mr->enabled.load(std::memory_order_acquire)) return -FI_EACCES;
            if (mr->single_use && mr->consumed.load()) return -FI_EKEYREJECTED;
            std::lock_guard<std::mutex> lock(mr->mutex);
            out = make_bundle(*mr).encode();
            return out.empty() ? -FI_EOTHER : 0;
        });
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
}

}  // namespace ufi::runtime::mr
