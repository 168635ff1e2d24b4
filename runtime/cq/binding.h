// What endpoints need from a completion queue, implemented by the CQ subsystem (runtime/cq/).
#pragma once

#include "runtime/progress.h"

#include <rdma/fi_eq.h>

namespace ufi::runtime::cq {

class Cq;

// The ufi CQ behind a handle, or nullptr.
Cq *cq_of(fid_cq *cq) noexcept;
Cq *cq_of(fid_t fid) noexcept;

// An endpoint bound to the CQ registers its progress source: reading or waiting on the CQ
// progresses it (FI_PROGRESS_MANUAL). fi_close(cq) returns -FI_EBUSY while any is attached.
// Attaching the same source twice (FI_TRANSMIT and FI_RECV to one CQ) counts once.
int attach_source(Cq *cq, const ProgressSource &source) noexcept;
void detach_source(Cq *cq, const ProgressSource &source) noexcept;

}  // namespace ufi::runtime::cq
