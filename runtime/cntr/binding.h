// What endpoints and MRs need from a counter, implemented by the counter subsystem
// (runtime/cntr/).
#pragma once

#include "runtime/progress.h"

#include <rdma/fi_domain.h>

#include <cstdint>

namespace ufi::runtime::cntr {

class Cntr;

Cntr *cntr_of(fid_cntr *cntr) noexcept;
Cntr *cntr_of(fid_t fid) noexcept;

// As cq::attach_source; fi_close(cntr) returns -FI_EBUSY while endpoints or MRs are bound.
int attach_source(Cntr *cntr, const ProgressSource &source) noexcept;
void detach_source(Cntr *cntr, const ProgressSource &source) noexcept;
// An MR bound with FI_REMOTE_WRITE/FI_REMOTE_READ (no progress source).
void attach_mr(Cntr *cntr) noexcept;
void detach_mr(Cntr *cntr) noexcept;

// Completion accounting, for the data path: adds one completion (FI_CNTR_EVENTS_COMP) or
// `bytes` (FI_CNTR_EVENTS_BYTES), or one error.
void on_completion(Cntr *cntr, uint64_t bytes) noexcept;
void on_error(Cntr *cntr) noexcept;

}  // namespace ufi::runtime::cntr
