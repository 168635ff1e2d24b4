// fi_getinfo, fi_dupinfo, fi_freeinfo: the ABI adapter. Each symbol version reads the
// caller's structs only up to the size its version knew (shared/abi-notes.md), copying them
// into zeroed full-size ones before the runtime sees them.
#include "api/export.h"
#include "api/loader.h"
#include "base/log/log.h"
#include "runtime/ep/passive_endpoint.h"
#include "runtime/info/getinfo.h"
#include "runtime/info/info_alloc.h"

#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace {

using ufi::runtime::info::AttrLayout;

// The layouts each symbol version knew.
constexpr AttrLayout kLayout_1_3{offsetof(fi_domain_attr, max_ep_auth_key), offsetof(fi_ep_attr, xpu_ctx)};
constexpr AttrLayout kLayout_1_7{offsetof(fi_domain_attr, max_group_id), offsetof(fi_ep_attr, xpu_ctx)};
constexpr AttrLayout kLayout_1_8{offsetof(fi_domain_attr, max_cntr_value), offsetof(fi_ep_attr, xpu_ctx)};
constexpr AttrLayout kLayout_1_9{offsetof(fi_domain_attr, max_xpu_ctx_cnt), offsetof(fi_ep_attr, xpu_ctx)};
constexpr AttrLayout kLayout_1_10{sizeof(fi_domain_attr), sizeof(fi_ep_attr)};

// hints->handle naming a passive endpoint (fi_getinfo(3): an active endpoint may take over a
// passive endpoint's address): the answers are connected (FI_EP_MSG) entries whose source is
// the passive endpoint's name, and they carry the handle, so that fi_endpoint makes an
// endpoint that connects from that address. `widened` is the caller's hints copy to adjust.
int getinfo_from_pep(uint32_t version, const char *node, const char *service, uint64_t flags,
                     ufi::runtime::ep::PassiveEndpoint *pep, fi_info &widened, fi_ep_attr &ep,
                     sockaddr_storage &name, fi_info **info) {
    if (widened.ep_attr != nullptr && ep.type != FI_EP_UNSPEC && ep.type != FI_EP_MSG) {
        UFI_LOG_INFO(ufi::log::Subsys::Core, "fi_getinfo: a passive endpoint handle serves FI_EP_MSG only");
        return -FI_ENODATA;
    }
    widened.ep_attr = &ep;
    ep.type = FI_EP_MSG;
    if (widened.src_addr == nullptr) {
        size_t len = sizeof name;
        if (pep->getname(&name, &len) != 0) return -FI_ENODATA;
        widened.src_addr = &name;
        widened.src_addrlen = len;
        if (widened.addr_format == FI_FORMAT_UNSPEC) {
            widened.addr_format = name.ss_family == AF_INET6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
        }
    }
    const fid_t handle = widened.handle;
    widened.handle = nullptr;
    const int rc = ufi::runtime::info::getinfo(version, node, service, flags, &widened, info);
    if (rc == 0) {
        for (fi_info *i = *info; i != nullptr; i = i->next) i->handle = handle;
    }
    return rc;
}

int getinfo_sized(const AttrLayout &layout, uint32_t version, const char *node,
                  const char *service, uint64_t flags, const fi_info *hints, fi_info **info) {
    return ufi::api::guarded([&] {
        if (hints == nullptr) {
            return ufi::runtime::info::getinfo(version, node, service, flags, nullptr, info);
        }
        fi_info widened = *hints;
        fi_domain_attr domain{};
        fi_ep_attr ep{};
        if (hints->domain_attr != nullptr) {
            memcpy(static_cast<void *>(&domain), hints->domain_attr, layout.domain_attr_size);
            widened.domain_attr = &domain;
        }
        if (hints->ep_attr != nullptr) {
            memcpy(static_cast<void *>(&ep), hints->ep_attr, layout.ep_attr_size);
            widened.ep_attr = &ep;
        }
        if (hints->handle != nullptr) {
            // Looked up, never read: only ufi's live objects are (a handle of an fi_info whose
            // request was refused since is gone).
            if (auto *pep = ufi::runtime::ep::live_passive_endpoint(hints->handle)) {
                sockaddr_storage name{};
                return getinfo_from_pep(version, node, service, flags, pep, widened, ep, name, info);
            }
            if (ufi::runtime::ep::conn_request_of(hints->handle) == nullptr) {
                UFI_LOG_INFO(ufi::log::Subsys::Core,
                             "fi_getinfo: hints->handle is no live passive endpoint or connection "
                             "request of ufi's; the answers do not carry it");
            }
        }
        return ufi::runtime::info::getinfo(version, node, service, flags, &widened, info);
    });
}

fi_info *dupinfo_sized(const AttrLayout &layout, const fi_info *info) noexcept {
    return ufi::runtime::info::dup_info(info, layout);
}

}  // namespace

UFI_EXPORT int fi_getinfo(uint32_t version, const char *node, const char *service,
                          uint64_t flags, const struct fi_info *hints, struct fi_info **info) {
    return getinfo_sized(kLayout_1_10, version, node, service, flags, hints, info);
}

UFI_EXPORT struct fi_info *fi_dupinfo(const struct fi_info *info) {
    return dupinfo_sized(kLayout_1_10, info);
}

UFI_EXPORT void fi_freeinfo(struct fi_info *info) { ufi::runtime::info::free_info(info); }

// Older symbol versions. fi_freeinfo reads nothing beyond the 1.3 layout, so every version
// of it is the same function.
#define UFI_GETINFO_VERSION(tag, layout, node_name)                                               \
    UFI_EXPORT int fi_getinfo_##tag(uint32_t version, const char *node, const char *service,     \
                                    uint64_t flags, const struct fi_info *hints,                 \
                                    struct fi_info **info) {                                     \
        return getinfo_sized(layout, version, node, service, flags, hints, info);                \
    }                                                                                             \
    UFI_EXPORT struct fi_info *fi_dupinfo_##tag(const struct fi_info *info) {                    \
        return dupinfo_sized(layout, info);                                                       \
    }                                                                                             \
    UFI_EXPORT void fi_freeinfo_##tag(struct fi_info *info) { ufi::runtime::info::free_info(info); } \
    UFI_SYMVER(fi_getinfo_##tag, fi_getinfo@node_name);                                           \
    UFI_SYMVER(fi_dupinfo_##tag, fi_dupinfo@node_name);                                           \
    UFI_SYMVER(fi_freeinfo_##tag, fi_freeinfo@node_name)

UFI_GETINFO_VERSION(v1_3, kLayout_1_3, FABRIC_1.3);
UFI_GETINFO_VERSION(v1_7, kLayout_1_7, FABRIC_1.7);
UFI_GETINFO_VERSION(v1_8, kLayout_1_8, FABRIC_1.8);
UFI_GETINFO_VERSION(v1_9, kLayout_1_9, FABRIC_1.9);

namespace ufi::api {

int loader_getinfo(uint32_t loader_version, uint32_t version, const char *node,
                   const char *service, uint64_t flags, const fi_info *hints, fi_info **info) {
    // The structs a loading libfabric passes and reads are its own version's: FABRIC_1.3's
    // layout up to 1.19, FABRIC_1.7's in 1.20 to 1.22, then 2.0's and 2.1's (libfabric's
    // symbol history, shared/abi-notes.md).
    const uint32_t major = FI_MAJOR(loader_version), minor = FI_MINOR(loader_version);
    const AttrLayout &layout = major < 2 ? (minor < 20 ? kLayout_1_3 : kLayout_1_7)
                               : minor == 0 ? kLayout_1_8
                               : minor == 1 ? kLayout_1_9
                                            : kLayout_1_10;
    const int rc = getinfo_sized(layout, version, node, service, flags, hints, info);
    if (rc != 0) return rc;
    // The loader names the provider itself (it appends its own name to one already set, as a
    // utility provider's over a core provider's).
    for (fi_info *i = *info; i != nullptr; i = i->next) {
        if (i->fabric_attr != nullptr) {
            std::free(i->fabric_attr->prov_name);
            i->fabric_attr->prov_name = nullptr;
        }
    }
    return 0;
}

}  // namespace ufi::api
