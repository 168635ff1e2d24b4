// A memory region (fid_mr): the registered segments and the UCT registrations under them, its
// key in the domain's key table, access rights, enabled state, bindings (counters, an
// endpoint under FI_MR_ENDPOINT), authorization keys and sub-MR links. The operations here
// implement fi_mr(3) on top of the domain's MrState; api/mr.cpp is the C face.
#pragma once

#include "runtime/mr/mr_state.h"
#include "transports/memory/reg_cache.h"
#include "transports/memory/rkey_bundle.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace ufi::runtime {
struct Domain;
namespace av {
class Av;
}
namespace cntr {
class Cntr;
}
namespace ep {
class Endpoint;
}
}  // namespace ufi::runtime

namespace ufi::runtime::mr {

struct Mr;

// What fi_mr_desc() returns: the data path recognises ufi descriptors by the magic.
struct MrDesc {
    static constexpr std::uint64_t kMagic = 0x7566692d6d722d64;  // "ufi-mr-d"
    std::uint64_t magic = kMagic;
    Mr *mr = nullptr;
};

struct Segment {
    std::uintptr_t addr = 0;
    std::size_t len = 0;
    transports::RegionRef region;  // the registration covering it
    // Registered from NULL (the address space, docs/memory-keys.md): no registration pins it,
    // so it has no region and every peer's access to it is checked against what the process
    // maps at that moment (address_probe.h).
    bool unpinned = false;
};

struct Mr : fid_mr {
    using CStruct = fid_mr;

    Domain *domain = nullptr;
    MrState *state = nullptr;
    std::vector<Segment> segments;
    std::size_t length = 0;       // sum of the segment lengths
    std::uint64_t access = 0;     // FI_SEND ... FI_REMOTE_WRITE, FI_COLLECTIVE
    std::uint64_t reg_flags = 0;  // the registration call's flags
    std::uint64_t table_key =
        0;  // the key in the table (fid_mr::key is FI_KEY_NOTAVAIL under FI_MR_RAW)
    // Every region is in the key table once registered (local-only ones too: their requested
    // key is checked and reserved like any other); false only before it got its key.
    bool in_key_table = false;
    bool virt_addr = false;   // peers address it by virtual address
    bool single_use = false;  // FI_MR_SINGLE_USE
    std::atomic<bool> consumed{false};
    std::atomic<bool> enabled{false};
    bool created_disabled = false;  // FI_MR_ENDPOINT, or FI_MR_RMA_EVENT with FI_RMA_EVENT
    Mr *base = nullptr;             // sub-MRs: the MR it was created from
    // Open sub-MRs made from this one; kClosing once its fi_close went through.
    static constexpr int kClosing = -1;
    std::atomic<int> sub_mrs{0};
    int iface = FI_HMEM_SYSTEM;
    std::uint64_t device = 0;
    std::size_t page_size = 0;   // validated hint; ufi lets the OS choose
    std::size_t sub_mr_cnt = 0;  // hint, unused

    struct CounterBinding {
        cntr::Cntr *cntr = nullptr;
        std::uint64_t flags = 0;  // FI_REMOTE_WRITE | FI_REMOTE_READ
    };
    std::vector<CounterBinding> counters;
    // The flags of `counters`, OR-ed: a peer's access to an MR nobody counts takes no lock.
    std::atomic<std::uint64_t> counted_access{0};
    ep::Endpoint *endpoint = nullptr;

    // Authorization: the classic per-MR key (empty: the domain's), or on FI_AV_AUTH_KEY
    // domains the AV, an optional source address (an auth-key handle with FI_AUTH_KEY) and
    // the key handles held while enabled.
    std::vector<std::uint8_t> auth_key;
    av::Av *auth_av = nullptr;
    fi_addr_t auth_src_addr = FI_ADDR_UNSPEC;
    bool auth_src_is_key = false;
    std::vector<fi_addr_t> held_auth_keys;
    bool holds_auth_keys = false;

    MrDesc desc;
    std::mutex mutex;  // bind / enable / refresh on this MR
    void *pool_block = nullptr;  // its storage (MrPool, runtime/mr/mr_pool.h)
};

// A registration request: fi_mr_reg, fi_mr_regv and fi_mr_regattr all become one of these
// (api/mr.cpp fills it from what the caller's API version holds).
struct RegRequest {
    enum class Call { Reg, Regv, Regattr };
    Call call = Call::Regattr;
    std::span<const iovec> iov;            // unless FI_MR_DMABUF
    std::span<const fi_mr_dmabuf> dmabuf;  // with FI_MR_DMABUF
    std::uint64_t access = 0;
    std::uint64_t offset = 0;
    std::uint64_t requested_key = 0;
    void *context = nullptr;
    std::size_t auth_key_size = 0;
    const std::uint8_t *auth_key = nullptr;
    int iface = FI_HMEM_SYSTEM;
    std::uint64_t device = 0;
    void *hmem_data = nullptr;
    std::size_t page_size = 0;
    const fid_mr *base_mr = nullptr;
    std::size_t sub_mr_cnt = 0;
    std::uint64_t flags = 0;
};

// Registration flags the page defines (anything else is -FI_EBADFLAGS).
inline constexpr std::uint64_t kKnownRegFlags = FI_RMA_EVENT | FI_RMA_PMEM | FI_HMEM_DEVICE_ONLY |
                                                FI_HMEM_HOST_ALLOC | FI_MR_DMABUF |
                                                FI_MR_SINGLE_USE | FI_AUTH_KEY;
inline constexpr std::uint64_t kKnownAccess =
    FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_COLLECTIVE;

// fi_mr_reg/regv/regattr. `ops` becomes the MR's fid ops. 0 or a negative fi errno; may
// throw std::bad_alloc (api/ catches it).
int register_mr(Domain *domain, const RegRequest &req, fi_ops *ops, Mr **out);

// Posts FI_MR_COMPLETE to the domain's EQ when one is bound with FI_REG_MR. Called after the
// application's `mr` output is written (fi_mr(3): the handle is set before any event for it
// can be read).
void post_reg_event(Domain *domain, Mr *mr, void *context) noexcept;

// fi_close: -FI_EBUSY while sub-MRs exist.
int close_mr(Mr *mr) noexcept;

// fi_mr_bind: a counter (FI_REMOTE_WRITE / FI_REMOTE_READ) or, under FI_MR_ENDPOINT, an
// endpoint (flags 0).
int bind_mr(Mr *mr, fid_t bfid, std::uint64_t flags);

// fi_mr_enable.
int enable_mr(Mr *mr);

// fi_mr_refresh: `iov` empty means the whole region.
int refresh_mr(Mr *mr, std::span<const iovec> iov, std::uint64_t flags);

// fi_mr_raw_attr.
int raw_attr(Mr *mr, std::uint64_t *base_addr, std::uint8_t *raw_key, std::size_t *key_size,
             std::uint64_t flags);

// FI_GET_MR_XPU_DESC (fi_mr_get_xpu_desc).
int xpu_desc(Mr *mr, void *buf, std::size_t *len, std::uint64_t flags, const fid_xpu_ctx *ctx);

// fi_mr_map_raw / fi_mr_unmap_key.
int map_raw(Domain *domain, std::uint64_t base_addr, const std::uint8_t *raw_key,
            std::size_t key_size, std::uint64_t *key, std::uint64_t flags);
int unmap_key(Domain *domain, std::uint64_t key);

// The bundle a peer needs for `mr` (its raw key; the reply to a key request).
transports::RkeyBundle make_bundle(const Mr &mr);
// The address a peer uses for the region's first byte: its virtual address under
// FI_MR_VIRT_ADDR, else 0.
std::uint64_t peer_base_address(const Mr &mr);

}  // namespace ufi::runtime::mr
