// The endpoint's data-transfer tables that have a data path: fi_msg and fi_tagged
// (api/ep_data.cpp), fi_rma (api/ep_rma.cpp), fi_atomic (api/ep_atomic.cpp). api/ep.cpp
// installs them on every endpoint; before fi_enable they return -FI_EOPBADSTATE. The helpers
// below are what their calls share.
#pragma once

#include "runtime/ep/endpoint.h"
#include "runtime/lock.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <mutex>

namespace ufi::api {

// The data-transfer tables, each in two instances: locked (the endpoint's worker lock taken
// for every call) and lock-free, for threading models that serialize an endpoint's calls
// (runtime/threading.h). api/ep.cpp installs the locked ones at fi_endpoint; fi_enable puts
// the ones the domain's policy chose in their place.
fi_ops_msg *msg_ops(bool locked);
fi_ops_tagged *tagged_ops(bool locked);
fi_ops_rma *rma_ops(bool locked);
fi_ops_atomic *atomic_ops(bool locked);

// fi_query_atomic (api/ep_atomic.cpp; the domain's ops table calls it).
int query_atomic(fid_domain *domain, fi_datatype datatype, fi_op op, fi_atomic_attr *attr,
                 uint64_t flags);

// An iovec list within the endpoint's iov_limit (and kMaxIov): 0, or -FI_EINVAL (too many
// entries, a NULL buffer, lengths whose sum or end address overflows).
int iov_list(const runtime::ep::Endpoint &ep, const iovec *iov, size_t count,
             runtime::proto::IovList &out);
// The same within `limit` entries (a shared receive context's iov_limit).
int iov_list(size_t limit, const iovec *iov, size_t count, runtime::proto::IovList &out);

// The target's MR key behind an RMA or atomic call's `key`: the key of the raw key
// fi_mr_map_raw mapped under that handle (api/ep_rma.cpp), else the key itself.
uint64_t target_key(const runtime::ep::Endpoint &ep, uint64_t key);

// The handle a call came through (the ops table is its own: trusted): the endpoint itself or
// an alias of it (fi_ep_alias), with the default operation flags the call uses.
inline runtime::ep::EndpointFace *handle_of(fid_ep *ep) {
    return static_cast<runtime::ep::EndpointFace *>(ep);
}
// The endpoint behind that handle.
inline runtime::ep::Endpoint *ep_of(fid_ep *ep) {
    return handle_of(ep)->endpoint;
}

// The data path, locked for the call in the locked tables (kLocked); -FI_EOPBADSTATE before
// fi_enable. Always inline: as a call, every argument the lambda captures would go through
// memory.
template <bool kLocked, typename Fn>
[[gnu::always_inline]] inline ssize_t with_data_path(fid_ep *fep, Fn &&fn) {
    runtime::ep::Endpoint *ep = ep_of(fep);
    runtime::proto::DataPath *dp = ep->data_path();
    if (dp == nullptr) return -FI_EOPBADSTATE;
    runtime::ScopedLockIf<kLocked> lock(ep->worker_lock());
    return fn(*ep, *dp);
}

}  // namespace ufi::api
