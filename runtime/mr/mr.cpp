#include "runtime/mr/mr.h"

#include "runtime/av/av.h"
#include "runtime/av/binding.h"
#include "runtime/cntr/binding.h"
#include "runtime/domain/domain.h"
#include "runtime/ep/binding.h"
#include "runtime/mr/binding.h"
#include "runtime/eq/binding.h"
#include "base/log/log.h"
#include "runtime/mr/address_probe.h"
#include "runtime/mr/limits.h"
#include "transports/status.h"

#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace ufi::runtime::mr {

namespace {

using log::Subsys;

// ---- helpers -------------------------------------------------------------------------------

const char *call_name(RegRequest::Call call) {
    switch (call) {
        case RegRequest::Call::Reg:
            return "fi_mr_reg";
        case RegRequest::Call::Regv:
            return "fi_mr_regv";
        case RegRequest::Call::Regattr:
            break;
    }
    return "fi_mr_regattr";
}

// Page sizes the OS supports: the base page and every huge page size it lists.
const std::vector<std::size_t> &supported_page_sizes() {
    static const std::vector<std::size_t> sizes = [] {
        std::vector<std::size_t> out;
        const long page = sysconf(_SC_PAGESIZE);
        out.push_back(page > 0 ? static_cast<std::size_t>(page) : 4096);
        if (DIR *dir = opendir("/sys/kernel/mm/hugepages")) {
            while (const dirent *e = readdir(dir)) {
                unsigned long kb = 0;
                if (std::sscanf(e->d_name, "hugepages-%lukB", &kb) == 1 && kb != 0)
                    out.push_back(kb * 1024);
            }
            closedir(dir);
        }
        return out;
    }();
    return sizes;
}

bool page_size_supported(std::size_t size) {
    const auto &sizes = supported_page_sizes();
    return std::find(sizes.begin(), sizes.end(), size) != sizes.end();
}

// FI_MR_ALLOCATED: the range must be mapped now. msync(MS_ASYNC) walks the mappings without
// touching pages and fails with ENOMEM on a hole; its cost does not grow with the length.
bool range_is_mapped(std::uintptr_t addr, std::size_t len) {
    static const std::size_t page = supported_page_sizes().front();
    const std::uintptr_t start = addr & ~(page - 1);
    return msync(reinterpret_cast<void *>(start), addr + len - start, MS_ASYNC) == 0;
}

// The domain's mr_iov_limit: how many buffers one registration (and one refresh) may name.
std::size_t mr_iov_limit(const Domain &domain) {
    return domain.info != nullptr && domain.info->domain_attr != nullptr
               ? domain.info->domain_attr->mr_iov_limit
               : 1;
}

bool contains(const Segment &outer, std::uintptr_t addr, std::size_t len) {
    return addr >= outer.addr && addr + len <= outer.addr + outer.len;
}

}  // namespace

// Only an EQ bound with FI_REG_MR receives registration events.
void post_reg_event(Domain *domain, Mr *mr, void *context) noexcept {
    fid_eq *bound = domain->reg_mr_eq.load(std::memory_order_acquire);
    if (bound == nullptr) return;
    eq::Eq *eq = eq::eq_of(bound);
    if (eq == nullptr) return;
    fi_eq_entry entry{};
    entry.fid = &mr->fid;
    entry.context = context;
    const int rc = eq::post(eq, FI_MR_COMPLETE, &entry, sizeof entry, 0);
    if (rc != 0) {
        UFI_LOG_WARN(
            Subsys::Mr,
            "fi_mr_reg: the FI_MR_COMPLETE event could not be posted to the domain's EQ ({})", rc);
    }
}

namespace {

// Takes the AV's authorization keys for an enabled MR (FI_AV_AUTH_KEY domains). With
// FI_AUTH_KEY, only the key named by auth_src_addr is kept.
int hold_auth_keys(Mr *mr, const char *call) {
    if (mr->auth_av == nullptr || mr->holds_auth_keys) return 0;
    std::vector<fi_addr_t> keys = av::hold_auth_keys(mr->auth_av);
    if (mr->auth_src_is_key) {
        const bool present = std::find(keys.begin(), keys.end(), mr->auth_src_addr) != keys.end();
        if (!present) {
            av::release_auth_keys(mr->auth_av, keys);
            UFI_LOG_WARN(
                Subsys::Mr,
                "{}: auth_key->src_addr {:#x} is not an authorization key of the AV (FI_AUTH_KEY)",
                call, mr->auth_src_addr);
            return -FI_EINVAL;
        }
        std::vector<fi_addr_t> others;
        for (fi_addr_t k : keys) {
            if (k != mr->auth_src_addr) others.push_back(k);
        }
        av::release_auth_keys(mr->auth_av, others);
        keys.assign(1, mr->auth_src_addr);
    }
    mr->held_auth_keys = std::move(keys);
    mr->holds_auth_keys = true;
    return 0;
}

void release_held_auth_keys(Mr *mr) noexcept {
    if (mr->holds_auth_keys && !mr->held_auth_keys.empty())
        av::release_auth_keys(mr->auth_av, mr->held_auth_keys);
    mr->held_auth_keys.clear();
    mr->holds_auth_keys = false;
}

// Validates the request against the domain; fills the MR's attributes (not its
// registrations). 0 or the error, with one WARN line naming the argument.
int check_request(Domain *domain, MrState &state, const RegRequest &req, Mr &mr,
                  std::vector<Segment> &segs) {
    const char *call = call_name(req.call);
    const MrModePolicy &policy = state.policy;
    const bool hmem = (domain->caps & FI_HMEM) != 0;

    // Flags that exist but that this domain cannot honour.
    if ((req.flags & FI_AUTH_KEY) && !domain->av_auth_keys) {
        UFI_LOG_WARN(Subsys::Mr, "{}: flag FI_AUTH_KEY needs a domain opened with FI_AV_AUTH_KEY",
                     call);
        return -FI_EBADFLAGS;
    }
    if (req.flags & FI_RMA_PMEM) {
        UFI_LOG_WARN(
            Subsys::Mr,
            "{}: flag FI_RMA_PMEM: ufi offers no persistent-memory semantics (FI_RMA_PMEM)", call);
        return -FI_EBADFLAGS;
    }
    if ((req.flags & (FI_HMEM_DEVICE_ONLY | FI_HMEM_HOST_ALLOC | FI_MR_DMABUF)) && !hmem) {
        UFI_LOG_WARN(
            Subsys::Mr,
            "{}: flags FI_HMEM_DEVICE_ONLY, FI_HMEM_HOST_ALLOC and FI_MR_DMABUF need the FI_HMEM "
            "capability, which this domain was not opened with",
            call);
        return -FI_EBADFLAGS;
    }
    if (domain->av_auth_keys && req.call != RegRequest::Call::Regattr) {
        UFI_LOG_WARN(Subsys::Mr, "{}: the domain uses FI_AV_AUTH_KEY: register with fi_mr_regattr",
                     call);
        return -FI_EINVAL;
    }
    if (req.offset != 0) {
        UFI_LOG_WARN(Subsys::Mr, "{}: offset {} must be 0 (reserved)", call, req.offset);
        return -FI_EINVAL;
    }
    if (req.access & ~kKnownAccess) {
        UFI_LOG_WARN(Subsys::Mr, "{}: access {:#x} has undefined bits {:#x}", call, req.access,
                     req.access & ~kKnownAccess);
        return -FI_EINVAL;
    }

    // The memory interface (only read with FI_HMEM, as libfabric does).
    int iface = FI_HMEM_SYSTEM;
    if (hmem) {
        iface = req.iface;
        if (iface < FI_HMEM_SYSTEM || iface > FI_HMEM_SYNAPSEAI) {
            UFI_LOG_WARN(Subsys::Mr, "{}: iface {} is not an fi_hmem_iface", call, iface);
            return -FI_EINVAL;
        }
        if (iface != FI_HMEM_SYSTEM && req.base_mr == nullptr) {
            UFI_LOG_WARN(Subsys::Mr,
                         "{}: iface {}: ufi registers system memory only (FI_HMEM_SYSTEM)", call,
                         iface);
            return -FI_ENOSYS;
        }
        if ((req.flags & (FI_HMEM_DEVICE_ONLY | FI_HMEM_HOST_ALLOC)) && iface == FI_HMEM_SYSTEM &&
            req.base_mr == nullptr) {
            UFI_LOG_WARN(Subsys::Mr,
                         "{}: flags FI_HMEM_DEVICE_ONLY/FI_HMEM_HOST_ALLOC need a device iface",
                         call);
            return -FI_EINVAL;
        }
    }

    // Segments.
    const bool dmabuf = (req.flags & FI_MR_DMABUF) != 0;
    const std::size_t count = dmabuf ? req.dmabuf.size() : req.iov.size();
    const std::size_t limit = mr_iov_limit(*domain);
    if (count == 0) {
        UFI_LOG_WARN(Subsys::Mr, "{}: {} is empty (count 0)", call, dmabuf ? "dmabuf" : "iov");
        return -FI_EINVAL;
    }
    if (count > limit) {
        UFI_LOG_WARN(Subsys::Mr, "{}: iov count {} exceeds the domain's mr_iov_limit {}", call,
                     count, limit);
        return -FI_EINVAL;
    }
    if (dmabuf && req.base_mr != nullptr) {
        UFI_LOG_WARN(Subsys::Mr, "{}: base_mr must be NULL with FI_MR_DMABUF", call);
        return -FI_EINVAL;
    }
    segs.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        std::uintptr_t addr;
        std::size_t len;
        if (dmabuf) {
            const fi_mr_dmabuf &d = req.dmabuf[i];
            if (d.fd < 0 || d.len == 0) {
                UFI_LOG_WARN(Subsys::Mr,
                             "{}: dmabuf[{}] has fd {} and len {}: needs a descriptor and len > 0",
                             call, i, d.fd, d.len);
                return -FI_EINVAL;
            }
            if (d.base_addr == nullptr) {
                UFI_LOG_WARN(Subsys::Mr,
                             "{}: dmabuf[{}].base_addr is NULL: ufi registers DMA-buf system "
                             "memory through its "
                             "mapping only",
                             call, i);
                return -FI_ENOSYS;
            }
            addr = reinterpret_cast<std::uintptr_t>(d.base_addr) + d.offset;
            len = d.len;
        } else {
            addr = reinterpret_cast<std::uintptr_t>(req.iov[i].iov_base);
            len = req.iov[i].iov_len;
        }
        if (len == 0) {
            UFI_LOG_WARN(Subsys::Mr, "{}: {} length is 0 (must be > 0)", call,
                         req.call == RegRequest::Call::Reg ? std::string("len")
                                                           : "iov[" + std::to_string(i) + "]");
            return -FI_EINVAL;
        }
        if (addr == 0) {
            // NULL names the address space from 0 (docs/memory-keys.md): one buffer of system
            // memory, registered as itself (not a sub-MR), where allocation is not required.
            int refusal = -FI_EINVAL;
            const char *why = nullptr;
            if (dmabuf || count != 1) {
                why = "only a single buffer may start at NULL";
            } else if (req.base_mr != nullptr) {
                why = "a sub-MR cannot start at NULL";
            } else if (iface != FI_HMEM_SYSTEM) {
                why = "device memory cannot start at NULL";
            } else if (policy.allocated) {
                why = "FI_MR_ALLOCATED is in effect: the range must be allocated";
                refusal = -FI_EFAULT;  // as for any range that is not mapped
            } else if (!address_probe_supported()) {
                why = "this kernel cannot check a peer's accesses to it (MADV_POPULATE_READ/WRITE, "
                      "Linux 5.14)";
                refusal = -FI_ENOSYS;
            }
            if (why != nullptr) {
                UFI_LOG_WARN(Subsys::Mr, "{}: {} is NULL: {}", call,
                             req.call == RegRequest::Call::Reg ? std::string("buf")
                                                               : "iov[" + std::to_string(i) + "]",
                             why);
                return refusal;
            }
            segs[i].unpinned = true;
        }
        if (addr + len < addr) {
            UFI_LOG_WARN(Subsys::Mr, "{}: iov[{}] wraps the address space", call, i);
            return -FI_EINVAL;
        }
        segs[i].addr = addr;
        segs[i].len = len;
        if (mr.length + len < mr.length) return -FI_EINVAL;
        mr.length += len;
    }

    // Sub-MRs.
    if (req.base_mr != nullptr) {
        Mr *base = mr_of(const_cast<fid_mr *>(req.base_mr));
        if (base == nullptr || base->domain != domain) {
            UFI_LOG_WARN(Subsys::Mr, "{}: base_mr is not a memory region of this domain", call);
            return -FI_EINVAL;
        }
        for (std::size_t i = 0; i < segs.size(); ++i) {
            bool inside = false;
            for (const Segment &s : base->segments)
                inside = inside || contains(s, segs[i].addr, segs[i].len);
            if (!inside) {
                UFI_LOG_WARN(Subsys::Mr, "{}: iov[{}] is not contained in base_mr", call, i);
                return -FI_EINVAL;
            }
        }
        mr.base = base;
        // Inherited from the base MR (the page: ignored for sub-MRs).
        mr.iface = base->iface;
        mr.device = base->device;
        mr.page_size = base->page_size;
    } else {
        if (req.hmem_data != nullptr) {
            UFI_LOG_WARN(Subsys::Mr, "{}: hmem_data must be NULL (reserved)", call);
            return -FI_EINVAL;
        }
        if (req.page_size != 0 && !page_size_supported(req.page_size)) {
            UFI_LOG_WARN(Subsys::Mr, "{}: page_size {} is not a page size this system supports",
                         call, req.page_size);
            return -FI_EINVAL;
        }
        mr.iface = iface;
        mr.device = iface == FI_HMEM_SYSTEM ? 0 : req.device;
        mr.page_size = req.page_size;
        if (policy.allocated) {
            for (std::size_t i = 0; i < segs.size(); ++i) {
                // A range the registration cache holds is mapped (ucm reports unmaps): no
                // system call for the common case of registering a buffer again, and the
                // hit's reference is the segment's registration (register_mr takes no other).
                const bool cached =
                    state.cache != nullptr &&
                    state.cache->acquire_cached(reinterpret_cast<const void *>(segs[i].addr),
                                                segs[i].len, segs[i].region);
                if (!cached && !range_is_mapped(segs[i].addr, segs[i].len)) {
                    UFI_LOG_WARN(
                        Subsys::Mr,
                        "{}: {} [{:#x}, +{}) is not mapped: FI_MR_ALLOCATED needs allocated memory",
                        call,
                        req.call == RegRequest::Call::Reg ? std::string("buf")
                                                          : "iov[" + std::to_string(i) + "]",
                        segs[i].addr, segs[i].len);
                    return -FI_EFAULT;
                }
            }
        }
    }
    mr.sub_mr_cnt = req.sub_mr_cnt;

    // Authorization keys.
    if (domain->av_auth_keys) {
        if (req.auth_key_size != sizeof(fi_mr_auth_key) || req.auth_key == nullptr) {
            UFI_LOG_WARN(Subsys::Mr,
                         "{}: the domain uses FI_AV_AUTH_KEY: auth_key must point to a struct "
                         "fi_mr_auth_key and "
                         "auth_key_size be {} (got {}, auth_key {})",
                         call, sizeof(fi_mr_auth_key), req.auth_key_size,
                         req.auth_key ? "set" : "NULL");
            return -FI_EINVAL;
        }
        fi_mr_auth_key key;
        std::memcpy(&key, req.auth_key, sizeof key);
        av::Av *av = key.av != nullptr ? av::av_of(key.av) : nullptr;
        if (av == nullptr) {
            UFI_LOG_WARN(Subsys::Mr, "{}: auth_key->av is not an address vector of ufi's", call);
            return -FI_EINVAL;
        }
        if (av->domain != domain) {
            UFI_LOG_WARN(Subsys::Mr, "{}: auth_key->av belongs to another domain", call);
            return -FI_EDOMAIN;
        }
        mr.auth_av = av;
        mr.auth_src_addr = key.src_addr;
        mr.auth_src_is_key = (req.flags & FI_AUTH_KEY) != 0;
        if (mr.auth_src_is_key &&
            (key.src_addr == FI_ADDR_UNSPEC || key.src_addr == FI_ADDR_NOTAVAIL)) {
            UFI_LOG_WARN(Subsys::Mr,
                         "{}: FI_AUTH_KEY needs auth_key->src_addr to name an authorization key",
                         call);
            return -FI_EINVAL;
        }
    } else if (req.auth_key_size != 0) {
        if (req.auth_key == nullptr || req.auth_key_size > 64) {
            UFI_LOG_WARN(Subsys::Mr,
                         "{}: auth_key_size {} with auth_key {}: keys are 1 to 64 bytes", call,
                         req.auth_key_size, req.auth_key ? "set" : "NULL");
            return -FI_EINVAL;
        }
        mr.auth_key.assign(req.auth_key, req.auth_key + req.auth_key_size);
    }
    return 0;
}

}  // namespace

// ---- registration ------------------------------------------------------------------------

int register_mr(Domain *domain, const RegRequest &req, fi_ops *ops, Mr **out) {
    MrState *state = mr_state_of(domain);
    if (state == nullptr) return -FI_ENOMEM;
    const char *call = call_name(req.call);

    std::unique_ptr<Mr, MrPool::Recycler> mr(state->pool.make(), MrPool::Recycler{&state->pool});
    std::vector<Segment> &segs = mr->segments;  // filled in place (its capacity is recycled)
    int rc = check_request(domain, *state, req, *mr, segs);
    if (rc != 0) return rc;

    const MrModePolicy &policy = state->policy;
    mr->domain = domain;
    mr->state = state;
    mr->access = req.access;
    mr->reg_flags = req.flags;
    mr->virt_addr = policy.virt_addr;
    mr->single_use = (req.flags & FI_MR_SINGLE_USE) != 0;
    mr->created_disabled = policy.endpoint || (policy.rma_event && (req.flags & FI_RMA_EVENT));
    mr->desc.mr = mr.get();

    // Registrations: a sub-MR shares its base's (and holds the base open from here on);
    // others go through the cache.
    struct BaseHold {
        Mr *base = nullptr;
        ~BaseHold() {
            if (base != nullptr) base->sub_mrs.fetch_sub(1, std::memory_order_acq_rel);
        }
    } base_hold;
    if (mr->base != nullptr) {
        // Counted on the base unless its fi_close already won (Mr::kClosing).
        int subs = mr->base->sub_mrs.load(std::memory_order_acquire);
        do {
            if (subs < 0) {
                UFI_LOG_WARN(Subsys::Mr, "{}: base_mr is being closed", call);
                return -FI_EINVAL;
            }
        } while (!mr->base->sub_mrs.compare_exchange_weak(subs, subs + 1, std::memory_order_acq_rel,
                                                          std::memory_order_acquire));
        base_hold.base = mr->base;
        std::lock_guard<std::mutex> lock(mr->base->mutex);  // against fi_mr_refresh(base)
        for (Segment &s : segs) {
            for (const Segment &b : mr->base->segments) {
                if (contains(b, s.addr, s.len)) {
                    s.region = b.region;
                    s.unpinned = b.unpinned;
                    break;
                }
            }
        }
    } else {
        for (std::size_t i = 0; i < segs.size(); ++i) {
            if (segs[i].region) continue;  // a cache hit already (check_request)
            if (segs[i].unpinned) continue;  // nothing to pin: checked per access instead
            std::string failed_md;
            const transports::Status status = state->cache->acquire(
                reinterpret_cast<void *>(segs[i].addr), segs[i].len, segs[i].region, &failed_md);
            if (status != transports::Status::kOk) {
                UFI_LOG_WARN(Subsys::Mr, "{}: registering [{:#x}, +{}) with UCT md {} failed: {}",
                             call, segs[i].addr, segs[i].len, failed_md,
                             transports::to_string(status));
                return transports::fi_errno_of(status);
            }
        }
    }

    // The key: every region takes one from the table, local-only regions too, so that the
    // requested-key rules (in range, not in use: fi_mr(3)) hold for every key fi_mr_key
    // returns. Peers still cannot use a local-only region: it grants no remote access.
    rc = state->keys.insert(mr.get(), req.requested_key, &mr->table_key);
    mr->in_key_table = rc == 0;
    if (rc != 0) {
        if (rc == -FI_ENOKEY) {
            UFI_LOG_WARN(Subsys::Mr, "{}: requested_key {:#x} is already in use in this domain",
                         call, req.requested_key);
        } else if (rc == -FI_EKEYREJECTED) {
            UFI_LOG_WARN(Subsys::Mr,
                         "{}: requested_key {:#x} is FI_KEY_NOTAVAIL, which names no key", call,
                         req.requested_key);
        } else {
            UFI_LOG_WARN(Subsys::Mr, "{}: no key left for a new memory region ({})", call, rc);
        }
        return rc;
    }

    if (!mr->created_disabled) {
        rc = hold_auth_keys(mr.get(), call);
        if (rc != 0) {
            if (mr->in_key_table) state->keys.erase(mr->table_key);
            return rc;
        }
        mr->enabled.store(true, std::memory_order_release);
    }

    mr->fid.fclass = FI_CLASS_MR;
    mr->fid.context = req.context;
    mr->fid.ops = ops;
    mr->mem_desc = &mr->desc;
    mr->key = policy.raw_keys ? FI_KEY_NOTAVAIL : mr->table_key;
    base_hold.base = nullptr;  // the sub-MR keeps its count on the base until fi_close
    // The MR uses the AV until it closes (its keys, or taking them at fi_mr_enable): the
    // AV's binding count keeps fi_close(av) at -FI_EBUSY meanwhile.
    if (mr->auth_av != nullptr) av::attach_endpoint(mr->auth_av);
    // (fi_close(domain) counts open MRs in the key table: no count of their own on the domain)
    Mr *m = mr.release();
    UFI_LOG_DEBUG(Subsys::Mr, "{}: {} segment(s), {} bytes, key {:#x}{}", call, m->segments.size(),
                  m->length, m->table_key,
                  m->created_disabled ? " (disabled until fi_mr_enable)" : "");
    *out = m;  // the caller writes the application's handle, then posts the event
    return 0;
}

int close_mr(Mr *mr) noexcept {
    MrState *state = mr->state;
    // One exchange decides between this close and a sub-MR being made from it at once.
    int subs = 0;
    if (!mr->sub_mrs.compare_exchange_strong(subs, Mr::kClosing, std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
        UFI_LOG_WARN(Subsys::Mr, "fi_close(mr key {:#x}): {} sub-MRs created from it are still open",
                     mr->table_key, subs);
        return -FI_EBUSY;
    }
    if (mr->base != nullptr) mr->base->sub_mrs.fetch_sub(1, std::memory_order_acq_rel);
    // No lookup finds it after this (erase waits for lookups in progress).
    if (mr->in_key_table) state->keys.erase(mr->table_key);
    for (const Mr::CounterBinding &b : mr->counters) cntr::detach_mr(b.cntr);
    if (mr->endpoint != nullptr) ep::detach_mr(mr->endpoint);
    release_held_auth_keys(mr);
    if (mr->auth_av != nullptr) av::detach_endpoint(mr->auth_av);
    mr->desc.magic = 0;
    state->pool.recycle(mr);
    return 0;
}

// ---- bindings, enable, refresh -----------------------------------------------------------

int bind_mr(Mr *mr, fid_t bfid, std::uint64_t flags) {
    const MrModePolicy &policy = mr->state->policy;
    std::lock_guard<std::mutex> lock(mr->mutex);
    switch (bfid->fclass) {
        case FI_CLASS_CNTR: {
            cntr::Cntr *c = cntr::cntr_of(bfid);
            if (c == nullptr) {
                UFI_LOG_WARN(Subsys::Mr, "fi_mr_bind: bfid is not a counter of ufi's");
                return -FI_EINVAL;
            }
            constexpr std::uint64_t kCntrFlags = FI_REMOTE_WRITE | FI_REMOTE_READ;
            if (flags & ~kCntrFlags) {
                UFI_LOG_WARN(
                    Subsys::Mr,
                    "fi_mr_bind: flags {:#x}: a counter takes FI_REMOTE_WRITE and FI_REMOTE_READ",
                    flags);
                return -FI_EBADFLAGS;
            }
            if (flags == 0) {
                UFI_LOG_WARN(Subsys::Mr,
                             "fi_mr_bind: flags 0: say which events the counter counts "
                             "(FI_REMOTE_WRITE, FI_REMOTE_READ)");
                return -FI_EINVAL;
            }
            if (mr->created_disabled && mr->enabled.load()) {
                UFI_LOG_WARN(Subsys::Mr,
                             "fi_mr_bind: the MR is enabled: bind counters before fi_mr_enable");
                return -FI_EINVAL;
            }
            if (policy.rma_event && !(mr->reg_flags & FI_RMA_EVENT)) {
                UFI_LOG_WARN(
                    Subsys::Mr,
                    "fi_mr_bind: FI_MR_RMA_EVENT: register the MR with flag FI_RMA_EVENT to bind "
                    "a counter");
                return -FI_EINVAL;
            }
            mr->state->counters_bound.store(true, std::memory_order_release);
            mr->counted_access.fetch_or(flags, std::memory_order_release);
            for (Mr::CounterBinding &b : mr->counters) {
                if (b.cntr == c) {
                    b.flags |= flags;
                    return 0;
                }
            }
            mr->counters.push_back({c, flags});
            cntr::attach_mr(c);
            return 0;
        }
        case FI_CLASS_EP:
        case FI_CLASS_TX_CTX:  // (a scalable endpoint's contexts are endpoints)
        case FI_CLASS_RX_CTX: {
            if (!policy.endpoint) {
                UFI_LOG_WARN(
                    Subsys::Mr,
                    "fi_mr_bind: endpoints are bound to MRs only under FI_MR_ENDPOINT (MRs are "
                    "domain-wide here)");
                return -FI_EINVAL;
            }
            if (flags != 0) {
                UFI_LOG_WARN(Subsys::Mr,
                             "fi_mr_bind: flags {:#x}: binding an endpoint takes flags 0", flags);
                return -FI_EBADFLAGS;
            }
            ep::Endpoint *e = ep::endpoint_of(bfid);
            if (e == nullptr) {
                UFI_LOG_WARN(Subsys::Mr, "fi_mr_bind: bfid is not an endpoint of ufi's");
                return -FI_EINVAL;
            }
            if (mr->endpoint != nullptr) {
                UFI_LOG_WARN(Subsys::Mr, "fi_mr_bind: the MR is already bound to an endpoint");
                return -FI_EINVAL;
            }
            if (mr->enabled.load()) {
                UFI_LOG_WARN(
                    Subsys::Mr,
                    "fi_mr_bind: the MR is enabled: bind the endpoint before fi_mr_enable");
                return -FI_EINVAL;
            }
            mr->endpoint = e;
            ep::attach_mr(e);
            return 0;
        }
        case FI_CLASS_CQ:
            UFI_LOG_WARN(
                Subsys::Mr,
                "fi_mr_bind: ufi reports accesses to memory regions through counters, not CQs");
            return -FI_ENOSYS;
        default:
            UFI_LOG_WARN(Subsys::Mr,
                         "fi_mr_bind: bfid (class {}) is neither a counter nor an endpoint",
                         bfid->fclass);
            return -FI_EINVAL;
    }
}

int enable_mr(Mr *mr) {
    std::lock_guard<std::mutex> lock(mr->mutex);
    if (mr->enabled.load()) return 0;
    if (mr->state->policy.endpoint && mr->endpoint == nullptr) {
        UFI_LOG_WARN(Subsys::Mr,
                     "fi_mr_enable: FI_MR_ENDPOINT: bind the MR to an endpoint first (fi_mr_bind)");
        return -FI_EINVAL;
    }
    const int rc = hold_auth_keys(mr, "fi_mr_enable");
    if (rc != 0) return rc;
    mr->enabled.store(true, std::memory_order_release);
    return 0;
}

int refresh_mr(Mr *mr, std::span<const iovec> iov, std::uint64_t flags) {
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_refresh: flags {:#x} are not defined (must be 0)", flags);
        return -FI_EBADFLAGS;
    }
    // The same bound as fi_mr_regv/regattr: never read more entries than a region may have.
    const std::size_t limit = mr_iov_limit(*mr->domain);
    if (iov.size() > limit) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_refresh: iov_count {} exceeds the domain's mr_iov_limit {}",
                     iov.size(), limit);
        return -FI_EINVAL;
    }
    std::vector<std::pair<std::uintptr_t, std::size_t>> ranges;
    for (std::size_t i = 0; i < iov.size(); ++i) {
        const auto addr = reinterpret_cast<std::uintptr_t>(iov[i].iov_base);
        const std::size_t len = iov[i].iov_len;
        bool inside = len != 0 && addr + len >= addr;
        if (inside) {
            inside = false;
            for (const Segment &s : mr->segments) inside = inside || contains(s, addr, len);
        }
        if (!inside) {
            UFI_LOG_WARN(Subsys::Mr,
                         "fi_mr_refresh: iov[{}] [{:#x}, +{}) is not inside the memory region", i,
                         addr, len);
            return -FI_EINVAL;
        }
        ranges.emplace_back(addr, len);
    }
    std::lock_guard<std::mutex> lock(mr->mutex);
    MrState &state = *mr->state;
    const bool toggle = state.policy.mmu_notify && mr->enabled.load();
    if (toggle) mr->enabled.store(false, std::memory_order_release);
    int rc = 0;
    for (Segment &s : mr->segments) {
        bool touched = ranges.empty();
        for (const auto &[addr, len] : ranges)
            touched = touched || (addr < s.addr + s.len && addr + len > s.addr);
        if (!touched || s.unpinned) continue;  // (nothing pinned: nothing to renew)
        // Registrations of the range are dropped from the cache and made anew; other holders
        // of the old one keep it.
        state.cache->invalidate(reinterpret_cast<void *>(s.addr), s.len);
        transports::RegionRef fresh;
        std::string failed_md;
        const transports::Status status =
            state.cache->acquire(reinterpret_cast<void *>(s.addr), s.len, fresh, &failed_md);
        if (status != transports::Status::kOk) {
            UFI_LOG_WARN(Subsys::Mr,
                         "fi_mr_refresh: registering [{:#x}, +{}) again with md {} failed: {}",
                         s.addr, s.len, failed_md, transports::to_string(status));
            rc = transports::fi_errno_of(status);
            break;
        }
        s.region = std::move(fresh);
    }
    if (toggle) mr->enabled.store(true, std::memory_order_release);
    return rc;
}

// ---- keys --------------------------------------------------------------------------------

std::uint64_t peer_base_address(const Mr &mr) {
    return mr.virt_addr ? mr.segments.front().addr : 0;
}

transports::RkeyBundle make_bundle(const Mr &mr) {
    const transports::MemoryDomains &mds = mr.state->mds;
    transports::RkeyBundle b;
    b.flags =
        static_cast<std::uint8_t>((mr.virt_addr ? transports::RkeyBundle::kFlagVirtAddr : 0) |
                                  (mr.single_use ? transports::RkeyBundle::kFlagSingleUse : 0));
    b.key = mr.table_key;
    b.base_addr = mr.segments.front().addr;
    b.length = mr.length;
    b.access = mr.access;
    for (const Segment &s : mr.segments) b.segments.push_back({s.addr, s.len});
    for (std::size_t i : mds.registering())
        b.mds.push_back({mds[i].component_name, mds[i].md_name});
    for (const Segment &s : mr.segments) {
        for (std::size_t i : mds.registering()) {
            std::vector<std::uint8_t> packed;
            if (s.region) {
                const transports::Status status = s.region->registration().pack_rkey(i, packed);
                if (status != transports::Status::kOk) {
                    UFI_LOG_WARN(Subsys::Mr, "packing the remote key of md {} failed: {}",
                                 mds[i].md_name, transports::to_string(status));
                    packed.clear();
                }
            }
            b.rkeys.push_back(std::move(packed));
        }
    }
    return b;
}

int raw_attr(Mr *mr, std::uint64_t *base_addr, std::uint8_t *raw_key, std::size_t *key_size,
             std::uint64_t flags) {
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_raw_attr: flags {:#x} are not defined (must be 0)", flags);
        return -FI_EBADFLAGS;
    }
    std::lock_guard<std::mutex> lock(mr->mutex);  // refresh may swap registrations
    const transports::RkeyBundle bundle = make_bundle(*mr);
    const std::size_t needed = bundle.encoded_size();
    if (needed == 0) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_raw_attr: the key bundle exceeds its format's limits");
        return -FI_EOTHER;
    }
    *base_addr = peer_base_address(*mr);
    if (*key_size < needed || raw_key == nullptr) {
        const bool too_small = *key_size < needed;
        *key_size = needed;
        if (too_small) return -FI_ETOOSMALL;  // the expected answer to a size query: no log
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_raw_attr: raw_key is NULL");
        return -FI_EINVAL;
    }
    bundle.encode(std::span<std::uint8_t>(raw_key, needed));
    *key_size = needed;
    return 0;
}

int xpu_desc(Mr *mr, void *buf, std::size_t *len, std::uint64_t flags, const fid_xpu_ctx *ctx) {
    if (flags & ~static_cast<std::uint64_t>(FI_XPU)) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_get_xpu_desc: flags {:#x} are not defined", flags);
        return -FI_EBADFLAGS;
    }
    if ((flags & FI_XPU) || ctx != nullptr) {
        UFI_LOG_WARN(Subsys::Mr,
                     "fi_mr_get_xpu_desc: ctx: ufi has no XPU contexts (no FI_XPU support)");
        return -FI_EINVAL;
    }
    // The host descriptor: the value fi_mr_desc() returns.
    const void *desc = mr->mem_desc;
    if (*len < sizeof desc) {
        *len = sizeof desc;
        return -FI_ETOOSMALL;
    }
    if (buf == nullptr) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_get_xpu_desc: buf is NULL");
        return -FI_EINVAL;
    }
    std::memcpy(buf, &desc, sizeof desc);
    *len = sizeof desc;
    return 0;
}

int map_raw(Domain *domain, std::uint64_t base_addr, const std::uint8_t *raw_key,
            std::size_t key_size, std::uint64_t *key, std::uint64_t flags) {
    if (flags != 0) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_map_raw: flags {:#x} are not defined (must be 0)", flags);
        return -FI_EBADFLAGS;
    }
    MrState *state = mr_state_of(domain);
    if (state == nullptr) return -FI_ENOMEM;
    auto mapped = std::make_unique<MappedKey>();
    std::string why;
    if (!transports::RkeyBundle::decode(std::span<const std::uint8_t>(raw_key, key_size),
                                        mapped->bundle, &why)) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_map_raw: raw_key ({} bytes) is not a valid ufi key: {}",
                     key_size, why);
        return -FI_EINVAL;
    }
    const transports::RkeyBundle &b = mapped->bundle;
    const std::uint64_t expected =
        (b.flags & transports::RkeyBundle::kFlagVirtAddr) ? b.base_addr : 0;
    if (base_addr != expected) {
        UFI_LOG_WARN(Subsys::Mr,
                     "fi_mr_map_raw: base_addr {:#x} is not the one fi_mr_raw_attr gave with this "
                     "key ({:#x})",
                     base_addr, expected);
        return -FI_EINVAL;
    }
    // The checksum only catches accidents: a forged key, or one from another UCX version, may
    // carry rkeys of any size, and UCT reads an rkey by its own packed size.
    if (!transports::UnpackedRkeys::sizes_match(b, state->mds, &why)) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_map_raw: raw_key ({} bytes) is not a valid ufi key: {}",
                     key_size, why);
        return -FI_EINVAL;
    }
    mapped->rkeys.unpack(b, state->mds);
    for (std::size_t s = 0; s < b.segments.size(); ++s) {
        for (std::size_t m = 0; m < b.mds.size(); ++m) {
            const auto &e = mapped->rkeys.at(s, m);
            if (!e.usable()) UFI_LOG_INFO(Subsys::Mr, "fi_mr_map_raw: {}", e.why);
        }
    }
    int error = 0;
    const std::uint64_t handle = state->mapped.insert(std::move(mapped), &error);
    if (error != 0) {
        UFI_LOG_WARN(Subsys::Mr, "fi_mr_map_raw: no room for another mapped key ({})", error);
        return error;
    }
    *key = handle;
    return 0;
}

int unmap_key(Domain *domain, std::uint64_t key) {
    MrState *state = mr_state_of(domain);
    if (state == nullptr) return -FI_ENOMEM;
    if (!state->mapped.erase(key)) {
        UFI_LOG_WARN(
            Subsys::Mr,
            "fi_mr_unmap_key: key {:#x} is not a key fi_mr_map_raw returned on this domain", key);
        return -FI_EINVAL;
    }
    return 0;
}

}  // namespace ufi::runtime::mr
