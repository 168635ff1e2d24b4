#include "runtime/cntr/access_tally.h"

#include "runtime/cntr/cntr.h"

namespace ufi::runtime::cntr {

AccessTally::Entry *AccessTally::find(const Cntr *c) noexcept {
    for (size_t i = 0; i < count_; ++i) {
        if (entries_[i].cntr == c) return &entries_[i];
    }
    return nullptr;
}

void AccessTally::remember(Cntr *c, bool whole) noexcept {
    if (count_ < kEntries) entries_[count_++] = {c, whole};
}

void AccessTally::count_whole(Cntr *c, uint64_t bytes) noexcept {
    if (c == nullptr || find(c) != nullptr) return;
    c->on_completion(bytes);
    remember(c, true);
}

void AccessTally::count_segment(Cntr *c, uint64_t bytes) noexcept {
    if (c == nullptr) return;
    if (Entry *e = find(c)) {
        // Counted: an event counter is done; a byte counter that counted other segments (not
        // the whole access) adds this one's bytes.
        if (!e->whole && c->counts_bytes()) c->on_completion(bytes);
        return;
    }
    c->on_completion(bytes);
    remember(c, false);
}

}  // namespace ufi::runtime::cntr
