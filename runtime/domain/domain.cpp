#include "runtime/domain/domain.h"

#include "runtime/eq/binding.h"
#include "runtime/fid_cast.h"
#include "runtime/info/capabilities.h"
#include "runtime/info/getinfo.h"
#include "runtime/info/hint_match.h"
#include "runtime/info/info_alloc.h"
#include "runtime/info/provider_info.h"
#include "base/log/log.h"
#include "transports/iface/discovery.h"
#include "transports/resource.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <atomic>
#include <cstring>
#include <new>

namespace ufi::runtime {

namespace {

const info::DomainOffer *find_offer(const char *name) {
    for (const auto &o : info::process_env().offers) {
        if (name != nullptr && o.name == name) return &o;
    }
    return nullptr;
}

}  // namespace

int open_domain(Fabric *fabric, const fi_info *info, uint64_t flags, void *context, fi_ops *ops,
                fi_ops_domain *domain_ops, fi_ops_mr *mr_ops, Domain **out) noexcept {
    if (fabric == nullptr || info == nullptr || out == nullptr || info->domain_attr == nullptr) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain: fabric, info, info->domain_attr or domain is NULL");
        return -FI_EINVAL;
    }
    if (flags != 0) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain2: flags {:#x} are not defined", flags);
        return -FI_EBADFLAGS;
    }
    const info::DomainOffer *offer = find_offer(info->domain_attr->name);
    if (offer == nullptr) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain: ufi offers no domain named \"{}\" (see ufi_info)",
                     info->domain_attr->name ? info->domain_attr->name : "(null)");
        return -FI_ENODATA;
    }
    // Authorization keys are opaque byte strings of 1 to 64 bytes (or FI_AV_AUTH_KEY):
    // other sizes are invalid arguments, not a mismatch.
    const fi_domain_attr &attr = *info->domain_attr;
    const bool av_keys = attr.auth_key_size == FI_AV_AUTH_KEY;
    if (!av_keys && attr.auth_key_size != 0 &&
        (attr.auth_key_size > info::kMaxAuthKeySize || attr.auth_key == nullptr)) {
        UFI_LOG_WARN(log::Subsys::Domain,
                     "fi_domain: domain_attr auth_key_size {} (key {}) is invalid: keys are 1 to {} bytes, or FI_AV_AUTH_KEY",
                     attr.auth_key_size, attr.auth_key ? "set" : "NULL", info::kMaxAuthKeySize);
        return -FI_EINVAL;
    }

    // The application may have edited the fi_info fi_getinfo gave it: negotiate again
    // against the offer, so the domain's attributes are ones ufi honours.
    info::MatchResult m;
    for (fi_ep_type type : info::kEndpointTypes) {
        fi_info *cand = info::make_provider_info(*offer, type, fabric->api_version,
                                                 info::offers_msg_prefix(info));
        if (cand == nullptr) return -FI_ENOMEM;
        m = info::match_hints(*cand, info, fabric->api_version);
        info::free_info(cand);
        if (m.info != nullptr || m.error != 0) break;
    }
    if (m.info == nullptr) {
        if (m.error != 0) return m.error;
        UFI_LOG_WARN(log::Subsys::Domain, "fi_domain: the fi_info does not fit domain {}: {}", offer->name,
                     m.reason);
        return -FI_ENODATA;
    }

    auto *d = new (std::nothrow) Domain{};
    if (d == nullptr) {
        info::free_info(m.info);
        return -FI_ENOMEM;
    }
    d->fid.fclass = FI_CLASS_DOMAIN;
    d->fid.context = context;
    d->fid.ops = ops;
    d->ops = domain_ops;
    d->mr = mr_ops;
    d->fabric = fabric;
    d->api_version = fabric->api_version;
    d->info = m.info;
    d->offer = *offer;
    const auto &resources = transports::discovery().resources;
    for (size_t idx : offer->resources) {
        if (idx < resources.size()) d->resources.push_back(&resources[idx]);
    }
    d->threading = d->info->domain_attr->threading;
    d->auto_progress = d->info->domain_attr->data_progress == FI_PROGRESS_AUTO;
    d->locking = ThreadingPolicy::for_model(d->threading, d->auto_progress);
    d->mr_mode = d->info->domain_attr->mr_mode;
    d->av_type = d->info->domain_attr->av_type;
    d->caps = d->info->caps;
    d->av_auth_keys = av_keys;
    if (!av_keys && attr.auth_key_size != 0) d->auth_key.assign(attr.auth_key, attr.auth_key + attr.auth_key_size);
    d->info->domain_attr->domain = d;
    fabric->open_children.fetch_add(1);
    UFI_LOG_INFO(log::Subsys::Domain, "domain {} opened: {}", offer->name, offer->description);
    *out = d;
    return 0;
}

const transports::MemoryDomains &Domain::memory_domains() {
    std::call_once(mds_once_, [this] {
        std::vector<transports::MdName> names;
        for (const transports::Resource *r : resources) {
            if (r == nullptr || !r->usable) continue;
            transports::MdName n{r->component, r->md};
            bool seen = false;
            for (const auto &m : names) seen = seen || m == n;
            if (!seen) names.push_back(std::move(n));
        }
        std::vector<std::string> problems;
        mds_.open(names, &problems);
        for (const std::string &p : problems) UFI_LOG_WARN(log::Subsys::Domain, "domain {}: {}", offer.name, p);
    });
    return mds_;
}

int close_domain(Domain *d) noexcept {
    size_t children = static_cast<size_t>(d->open_children.load());
    if (void *mrs = std::atomic_ref<void *>(d->mr_state.state).load(std::memory_order_acquire);
        mrs != nullptr && d->mr_state.open_objects != nullptr) {
        children += d->mr_state.open_objects(mrs);
    }
    if (children != 0) {
        UFI_LOG_WARN(log::Subsys::Domain, "fi_close(domain {}): {} objects (AVs, MRs, CQs, counters, endpoints) still open",
                     d->offer.name, children);
        return -FI_EBUSY;
    }
    if (d->bound_eq != nullptr) eq::detach(eq::eq_of(d->bound_eq));
    d->fabric->open_children.fetch_sub(1);
    info::free_info(d->info);
    delete d;
    return 0;
}

}  // namespace ufi::runtime

namespace ufi::runtime::info {

const DomainOffer *offer_of_open_domain(const fid_domain *domain) noexcept {
    // (object_of checks the class and that the fi_ops table is ufi's: a foreign or stray
    // handle is refused, not cast.)
    auto *d = object_of<Domain>(const_cast<fid_t>(&domain->fid), FI_CLASS_DOMAIN);
    return d != nullptr ? &d->offer : nullptr;
}

}  // namespace ufi::runtime::info
