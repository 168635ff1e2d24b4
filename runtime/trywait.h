// fi_trywait for ufi's CQs, EQs and counters: may the application sleep on their FI_GETWAIT
// fds now? It progresses and arms the transports behind each object and clears stale
// signals, so that an fd it returns 0 for becomes readable on the next completion or event.
#pragma once

#include <rdma/fabric.h>

namespace ufi::runtime::wait {

// 0 when every object may be waited on; -FI_EAGAIN when one has something to read (or a
// transport with no event fd, which must be polled); -FI_EINVAL for NULL arguments, objects
// that are not ufi's CQs, EQs or counters, or objects without an fd wait object.
int trywait(fid **fids, int count) noexcept;

}  // namespace ufi::runtime::wait
