// A table entry for a call an object does not offer: NoOp<decltype(fi_ops_x::call)>::fn
// returns -FI_ENOSYS with the entry's own signature (libfabric's fi_no_* functions do the
// same), so every slot of a table the application can reach is a function.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

namespace ufi::api {

template <typename F>
struct NoOp;
template <typename R, typename... A>
struct NoOp<R (*)(A...)> {
    static R fn(A...) { return -FI_ENOSYS; }
};

// Whole tables of such entries, for objects that offer none of a family's calls (a scalable
// endpoint, a shared context): api/not_supported.cpp.
extern fi_ops_msg g_no_msg_ops;
extern fi_ops_tagged g_no_tagged_ops;
extern fi_ops_rma g_no_rma_ops;
extern fi_ops_atomic g_no_atomic_ops;
extern fi_ops_cm g_no_cm_ops;

}  // namespace ufi::api
