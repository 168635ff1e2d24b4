#include "runtime/info/info_alloc.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

namespace ufi::runtime::info {

AttrLayout layout_current() { return {sizeof(fi_domain_attr), sizeof(fi_ep_attr)}; }

char *dup_cstr(const char *s) {
    if (s == nullptr) return nullptr;
    return strdup(s);
}

namespace {

// The fi_domain_attr structs ufi allocated (setup-time only: a lock is fine).
struct OwnedDomainAttrs {
    std::mutex mutex;
    std::unordered_set<const fi_domain_attr *> set;
};

OwnedDomainAttrs &owned() {
    static OwnedDomainAttrs *o = new OwnedDomainAttrs;  // never destroyed: used at exit
    return *o;
}

fi_domain_attr *track(fi_domain_attr *attr) {
    if (attr == nullptr) return nullptr;
    try {
        std::lock_guard<std::mutex> lock(owned().mutex);
        owned().set.insert(attr);
    } catch (...) {
        // Untracked only means fi_tostr prints the 1.x field set for it.
    }
    return attr;
}

void untrack(const fi_domain_attr *attr) {
    if (attr == nullptr) return;
    std::lock_guard<std::mutex> lock(owned().mutex);
    owned().set.erase(attr);
}

template <typename T>
T *calloc_one() {
    return static_cast<T *>(calloc(1, sizeof(T)));
}

void *dup_bytes(const void *src, size_t len) {
    if (src == nullptr || len == 0) return nullptr;
    void *dst = malloc(len);
    if (dst != nullptr) memcpy(dst, src, len);
    return dst;
}

// Copies `size` bytes of the caller's struct into a zeroed full-size one.
template <typename T>
T *dup_prefix(const T *src, size_t size) {
    T *dst = calloc_one<T>();
    if (dst != nullptr && src != nullptr) memcpy(static_cast<void *>(dst), src, size < sizeof(T) ? size : sizeof(T));
    return dst;
}

void free_domain_attr(fi_domain_attr *attr) {
    if (attr == nullptr) return;
    untrack(attr);
    free(attr->name);
    free(attr->auth_key);
    free(attr);
}

void free_ep_attr(fi_ep_attr *attr) {
    if (attr == nullptr) return;
    free(attr->auth_key);
    free(attr);
}

void free_fabric_attr(fi_fabric_attr *attr) {
    if (attr == nullptr) return;
    free(attr->name);
    free(attr->prov_name);
    free(attr);
}

void free_one(fi_info *info) {
    free(info->src_addr);
    free(info->dest_addr);
    free(info->tx_attr);
    free(info->rx_attr);
    free_ep_attr(info->ep_attr);
    free_domain_attr(info->domain_attr);
    free_fabric_attr(info->fabric_attr);
    if (info->nic != nullptr) fi_close(&info->nic->fid);
    free(info);
}

// Auth keys: a domain auth_key_size of FI_AV_AUTH_KEY (SIZE_MAX) means "AV-level keys" and
// carries no bytes.
bool key_has_bytes(const uint8_t *key, size_t size) {
    return key != nullptr && size != 0 && size != FI_AV_AUTH_KEY;
}

}  // namespace

fi_info *alloc_info() {
    auto *info = calloc_one<fi_info>();
    if (info == nullptr) return nullptr;
    info->tx_attr = calloc_one<fi_tx_attr>();
    info->rx_attr = calloc_one<fi_rx_attr>();
    info->ep_attr = calloc_one<fi_ep_attr>();
    info->domain_attr = track(calloc_one<fi_domain_attr>());
    info->fabric_attr = calloc_one<fi_fabric_attr>();
    if (!info->tx_attr || !info->rx_attr || !info->ep_attr || !info->domain_attr ||
        !info->fabric_attr) {
        free_one(info);
        return nullptr;
    }
    return info;
}

fi_info *dup_info(const fi_info *src, const AttrLayout &layout) {
    if (src == nullptr) return alloc_info();
    auto *dst = calloc_one<fi_info>();
    if (dst == nullptr) return nullptr;
    *dst = *src;
    dst->next = nullptr;
    dst->src_addr = nullptr;
    dst->dest_addr = nullptr;
    dst->tx_attr = nullptr;
    dst->rx_attr = nullptr;
    dst->ep_attr = nullptr;
    dst->domain_attr = nullptr;
    dst->fabric_attr = nullptr;
    dst->nic = nullptr;

    bool ok = true;
    if (src->src_addr != nullptr && src->src_addrlen != 0) {
        dst->src_addr = dup_bytes(src->src_addr, src->src_addrlen);
        ok &= dst->src_addr != nullptr;
    }
    if (src->dest_addr != nullptr && src->dest_addrlen != 0) {
        dst->dest_addr = dup_bytes(src->dest_addr, src->dest_addrlen);
        ok &= dst->dest_addr != nullptr;
    }
    dst->tx_attr = src->tx_attr ? dup_prefix(src->tx_attr, sizeof(fi_tx_attr)) : calloc_one<fi_tx_attr>();
    dst->rx_attr = src->rx_attr ? dup_prefix(src->rx_attr, sizeof(fi_rx_attr)) : calloc_one<fi_rx_attr>();
    ok &= dst->tx_attr != nullptr && dst->rx_attr != nullptr;

    if (src->ep_attr != nullptr) {
        dst->ep_attr = dup_prefix(src->ep_attr, layout.ep_attr_size);
        if (dst->ep_attr != nullptr) {
            dst->ep_attr->auth_key = nullptr;
            if (key_has_bytes(src->ep_attr->auth_key, src->ep_attr->auth_key_size)) {
                dst->ep_attr->auth_key = static_cast<uint8_t *>(
                    dup_bytes(src->ep_attr->auth_key, src->ep_attr->auth_key_size));
                ok &= dst->ep_attr->auth_key != nullptr;
            }
        }
    } else {
        dst->ep_attr = calloc_one<fi_ep_attr>();
    }
    ok &= dst->ep_attr != nullptr;

    if (src->domain_attr != nullptr) {
        dst->domain_attr = track(dup_prefix(src->domain_attr, layout.domain_attr_size));
        if (dst->domain_attr != nullptr) {
            dst->domain_attr->name = nullptr;
            dst->domain_attr->auth_key = nullptr;
            if (src->domain_attr->name != nullptr) {
                dst->domain_attr->name = dup_cstr(src->domain_attr->name);
                ok &= dst->domain_attr->name != nullptr;
            }
            if (key_has_bytes(src->domain_attr->auth_key, src->domain_attr->auth_key_size)) {
                dst->domain_attr->auth_key = static_cast<uint8_t *>(
                    dup_bytes(src->domain_attr->auth_key, src->domain_attr->auth_key_size));
                ok &= dst->domain_attr->auth_key != nullptr;
            }
        }
    } else {
        dst->domain_attr = track(calloc_one<fi_domain_attr>());
    }
    ok &= dst->domain_attr != nullptr;

    if (src->fabric_attr != nullptr) {
        dst->fabric_attr = dup_prefix(src->fabric_attr, sizeof(fi_fabric_attr));
        if (dst->fabric_attr != nullptr) {
            dst->fabric_attr->name = nullptr;
            dst->fabric_attr->prov_name = nullptr;
            if (src->fabric_attr->name != nullptr) {
                dst->fabric_attr->name = dup_cstr(src->fabric_attr->name);
                ok &= dst->fabric_attr->name != nullptr;
            }
            if (src->fabric_attr->prov_name != nullptr) {
                dst->fabric_attr->prov_name = dup_cstr(src->fabric_attr->prov_name);
                ok &= dst->fabric_attr->prov_name != nullptr;
            }
        }
    } else {
        dst->fabric_attr = calloc_one<fi_fabric_attr>();
    }
    ok &= dst->fabric_attr != nullptr;

    // A NIC is an object: it copies itself (libfabric's FI_DUP control).
    if (ok && src->nic != nullptr) {
        fid_nic *copy = nullptr;
        if (src->nic->fid.ops != nullptr && src->nic->fid.ops->control != nullptr &&
            src->nic->fid.ops->control(&src->nic->fid, FI_DUP, &copy) == 0) {
            dst->nic = copy;
        } else {
            ok = false;
        }
    }

    if (!ok) {
        free_one(dst);
        return nullptr;
    }
    return dst;
}

bool has_current_layout(const fi_domain_attr *attr) {
    std::lock_guard<std::mutex> lock(owned().mutex);
    return owned().set.count(attr) != 0;
}

void free_info(fi_info *list) {
    while (list != nullptr) {
        fi_info *next = list->next;
        free_one(list);
        list = next;
    }
}

}  // namespace ufi::runtime::info
