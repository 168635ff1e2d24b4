// A peer's key bundle made usable here: every packed UCT rkey of the bundle unpacked with the
// local component of the same name (uct_rkey_unpack), released by the destructor
// (uct_rkey_release; not in a fork() child that inherited them). The `rkey` of each entry is
// what put/get/atomic calls take.
#pragma once

#include "transports/memory/rkey_bundle.h"

#include <uct/api/uct.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ufi::transports {

class UnpackedRkeys {
  public:
    struct Entry {
        uct_component_h component = nullptr;  // nullptr: not usable here (see `why`)
        uct_rkey_bundle_t bundle{};
        std::string why;
        bool usable() const { return component != nullptr; }
    };

    UnpackedRkeys() = default;
    ~UnpackedRkeys() { reset(); }
    UnpackedRkeys(UnpackedRkeys &&other) noexcept;
    UnpackedRkeys &operator=(UnpackedRkeys &&other) noexcept;
    UnpackedRkeys(const UnpackedRkeys &) = delete;
    UnpackedRkeys &operator=(const UnpackedRkeys &) = delete;

    // Unpacks every rkey of `bundle`. An MD whose component this process lacks (the peer has
    // InfiniBand, say) or whose unpack fails is left unusable with the reason; the others are
    // still unpacked. Returns the number usable. May throw std::bad_alloc.
    std::size_t unpack(const RkeyBundle &bundle);

    // Entry for (segment, md) of the bundle, segment-major like RkeyBundle::rkeys.
    const Entry &at(std::size_t segment, std::size_t md) const {
        return entries_[segment * mds_ + md];
    }
    std::size_t size() const { return entries_.size(); }

    void reset() noexcept;

  private:
    std::vector<Entry> entries_;
    std::size_t mds_ = 0;
    unsigned generation_ = 0;  // fork::generation() at unpack
};

}  // namespace ufi::transports
