// A peer's key bundle made usable here: every packed UCT rkey of the bundle unpacked with the
// memory domain of the same name that this domain has open (uct_rkey_unpack), released by
// the destructor (uct_rkey_release; not in a fork() child that inherited them). The `rkey` of
// each entry is what put/get/atomic calls take.
#pragma once

#include "transports/memory/memory_domains.h"
#include "transports/memory/rkey_bundle.h"

#include "transports/ucx_fwd.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ufi::transports {

class UnpackedRkeys {
  public:
    struct Entry {
        uct_component_h component = nullptr;  // nullptr: not usable here (see `why`)
        UctRkeyBundle bundle;
        std::string why;
        bool usable() const { return component != nullptr; }
    };

    UnpackedRkeys() = default;
    ~UnpackedRkeys() { reset(); }
    UnpackedRkeys(UnpackedRkeys &&other) noexcept;
    UnpackedRkeys &operator=(UnpackedRkeys &&other) noexcept;
    UnpackedRkeys(const UnpackedRkeys &) = delete;
    UnpackedRkeys &operator=(const UnpackedRkeys &) = delete;

    // The bundle's checksum is no authentication: a forged bundle, or one packed by another
    // UCX version, may carry rkeys of any length, and uct_rkey_unpack reads as many bytes as
    // the MD packs (or asserts). True when every rkey of an MD that `local` has open (same
    // component and md name) is exactly that MD's rkey_packed_size bytes; false with the
    // first offender in `why` otherwise. Rkeys of MDs `local` lacks are not checked: unpack()
    // never hands them to UCX.
    static bool sizes_match(const RkeyBundle &bundle, const MemoryDomains &local,
                            std::string *why = nullptr);

    // Unpacks every rkey of `bundle` whose MD `local` has open and registers with, and whose
    // length is that MD's rkey_packed_size. The others (an MD this domain lacks, such as a
    // peer's InfiniBand, a size that does not match, a failed unpack) are left unusable with
    // the reason. Returns the number usable. May throw std::bad_alloc.
    std::size_t unpack(const RkeyBundle &bundle, const MemoryDomains &local);

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
