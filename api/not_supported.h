// A table entry for a call an object does not offer: NoOp<decltype(fi_ops_x::call)>::fn
// returns -FI_ENOSYS with the entry's own signature (libfabric's fi_no_* functions do the
// same), so every slot of a table the application can reach is a function.
#pragma once

#include <rdma/fi_errno.h>

namespace ufi::api {

template <typename F>
struct NoOp;
template <typename R, typename... A>
struct NoOp<R (*)(A...)> {
    static R fn(A...) { return -FI_ENOSYS; }
};

}  // namespace ufi::api
