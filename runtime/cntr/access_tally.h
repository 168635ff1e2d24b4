// The counters one remote access (an RMA write or read, an atomic) has counted so far, so that
// each counts it once however many bindings lead to it: the endpoint's FI_REMOTE_WRITE counter
// and an MR's fi_mr_bind counter may be one counter, and so may the counters of several MRs
// one access spans (fi_cntr(3): a counter counts completed operations). A byte counter
// (FI_CNTR_EVENTS_BYTES) still counts each byte once: a segment it did not count yet adds
// its length.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::cntr {

class Cntr;

class AccessTally {
  public:
    // The whole access (`bytes` long) on `c` (the endpoint's binding), unless `c` counted it.
    void count_whole(Cntr *c, uint64_t bytes) noexcept;
    // One segment of the access (`bytes` long) on `c` (an MR's binding).
    void count_segment(Cntr *c, uint64_t bytes) noexcept;

  private:
    struct Entry {
        Cntr *cntr;
        bool whole;  // counted for the whole access: later segments add nothing
    };
    // Distinct counters one access reaches: the endpoint's two and a few per MR. Past that
    // (no real program binds so many) a counter is counted again rather than looked up.
    static constexpr size_t kEntries = 8;
    Entry *find(const Cntr *c) noexcept;
    void remember(Cntr *c, bool whole) noexcept;

    Entry entries_[kEntries];
    size_t count_ = 0;
};

}  // namespace ufi::runtime::cntr
