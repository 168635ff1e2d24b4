#include "transports/memory/unpacked_rkeys.h"

#include "transports/fork_safety.h"
#include "transports/lanes/uct_views.h"
#include "transports/ucs_status.h"
#include "transports/ucx_handles.h"

#include <uct/api/uct.h>

#include <cstddef>
#include <utility>

namespace ufi::transports {

namespace {

// The MD of `local` that the bundle's MD entry names (component and md name), or nullptr.
const MemoryDomain *local_md(const RkeyBundle::MdEntry &entry, const MemoryDomains &local) {
    for (const MemoryDomain &d : local.all()) {
        if (d.md_name == entry.md && d.component_name == entry.component) return &d;
    }
    return nullptr;
}


}  // namespace

UnpackedRkeys::UnpackedRkeys(UnpackedRkeys &&other) noexcept
    : entries_(std::move(other.entries_)),
      mds_(std::exchange(other.mds_, 0)),
      generation_(other.generation_) {
    other.entries_.clear();
}

UnpackedRkeys &UnpackedRkeys::operator=(UnpackedRkeys &&other) noexcept {
    if (this != &other) {
        reset();
        entries_ = std::move(other.entries_);
        other.entries_.clear();
        mds_ = std::exchange(other.mds_, 0);
        generation_ = other.generation_;
    }
    return *this;
}

bool UnpackedRkeys::sizes_match(const RkeyBundle &bundle, const MemoryDomains &local,
                                std::string *why) {
    for (std::size_t m = 0; m < bundle.mds.size(); ++m) {
        const MemoryDomain *d = local_md(bundle.mds[m], local);
        if (d == nullptr) continue;
        for (std::size_t s = 0; s < bundle.segments.size(); ++s) {
            const std::size_t n = bundle.rkey(s, m).size();
            if (n == d->rkey_packed_size) continue;
            if (why != nullptr) {
                *why = "the remote key of md " + d->md_name + " (segment " + std::to_string(s) +
                       ") is " + std::to_string(n) + " bytes; this UCX packs " +
                       std::to_string(d->rkey_packed_size);
            }
            return false;
        }
    }
    return true;
}

std::size_t UnpackedRkeys::unpack(const RkeyBundle &bundle, const MemoryDomains &local) {
    reset();
    generation_ = fork::generation();
    mds_ = bundle.mds.size();
    entries_.resize(bundle.rkeys.size());
    std::size_t usable = 0;
    for (std::size_t m = 0; m < mds_; ++m) {
        const MemoryDomain *d = local_md(bundle.mds[m], local);
        for (std::size_t s = 0; s < bundle.segments.size(); ++s) {
            Entry &e = entries_[s * mds_ + m];
            if (d == nullptr) {
                e.why = "this domain has no memory domain " + bundle.mds[m].md + " (component " +
                        bundle.mds[m].component + ")";
                continue;
            }
            if (!d->can_register()) {
                e.why = "memory domain " + d->md_name + " registers no memory here";
                continue;
            }
            const auto &packed = bundle.rkey(s, m);
            if (packed.size() != d->rkey_packed_size) {
                e.why = "the remote key of md " + d->md_name + " has the wrong size";
                continue;
            }
            // UCT reads exactly rkey_packed_size bytes: none for an MD that packs nothing.
            static const std::uint8_t nothing = 0;
            const void *buf = packed.empty() ? static_cast<const void *>(&nothing) : packed.data();
            const ucs_status_t status = uct_rkey_unpack(d->component, buf, as_uct(e.bundle));
            if (status != UCS_OK) {
                e.why = "uct_rkey_unpack(" + d->md_name + "): " + to_string(status);
                e.bundle = {};
                continue;
            }
            e.component = d->component;
            ++usable;
        }
    }
    return usable;
}

void UnpackedRkeys::reset() noexcept {
    const bool own = !fork::inherited(generation_);  // a fork() child leaves the parent's alone
    for (Entry &e : entries_) {
        if (own && e.component != nullptr) uct_rkey_release(e.component, as_uct(e.bundle));
    }
    entries_.clear();
    mds_ = 0;
}

}  // namespace ufi::transports
