#include "transports/memory/unpacked_rkeys.h"

#include "transports/fork_safety.h"
#include "transports/memory/memory_domains.h"
#include "transports/ucx_handles.h"

#include <utility>

namespace ufi::transports {

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

std::size_t UnpackedRkeys::unpack(const RkeyBundle &bundle) {
    reset();
    generation_ = fork::generation();
    mds_ = bundle.mds.size();
    entries_.resize(bundle.rkeys.size());
    std::size_t usable = 0;
    for (std::size_t s = 0; s < bundle.segments.size(); ++s) {
        for (std::size_t m = 0; m < mds_; ++m) {
            Entry &e = entries_[s * mds_ + m];
            uct_component_h comp = component_by_name(bundle.mds[m].component);
            if (comp == nullptr) {
                e.why = "this process has no UCT component " + bundle.mds[m].component;
                continue;
            }
            const auto &packed = bundle.rkey(s, m);
            static const std::uint8_t empty[8] = {};
            const void *buf = packed.empty() ? static_cast<const void *>(empty) : packed.data();
            const ucs_status_t status = uct_rkey_unpack(comp, buf, &e.bundle);
            if (status != UCS_OK) {
                e.why = "uct_rkey_unpack(" + bundle.mds[m].md + "): " + to_string(status);
                e.bundle = {};
                continue;
            }
            e.component = comp;
            ++usable;
        }
    }
    return usable;
}

void UnpackedRkeys::reset() noexcept {
    const bool own = !fork::inherited(generation_);  // a fork() child leaves the parent's alone
    for (Entry &e : entries_) {
        if (own && e.component != nullptr) uct_rkey_release(e.component, &e.bundle);
    }
    entries_.clear();
    mds_ = 0;
}

}  // namespace ufi::transports
