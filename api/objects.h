// The entry points of each object family, as the domain's and fabric's ops tables route to
// them. One adapter file per family implements its part (av.cpp, mr.cpp, cq.cpp, cntr.cpp,
// eq.cpp, ep.cpp, pep.cpp, shared_ctx.cpp); domain.cpp and fabric.cpp only fill the tables.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

namespace ufi::runtime::ep {
struct EndpointOps;
}

namespace ufi::api {

// fi_ops_domain
int av_open(fid_domain *domain, fi_av_attr *attr, fid_av **av, void *context);
int cq_open(fid_domain *domain, fi_cq_attr *attr, fid_cq **cq, void *context);
int cntr_open(fid_domain *domain, fi_cntr_attr *attr, fid_cntr **cntr, void *context);
int endpoint(fid_domain *domain, fi_info *info, fid_ep **ep, void *context);
int endpoint2(fid_domain *domain, fi_info *info, fid_ep **ep, uint64_t flags, void *context);
int stx_context(fid_domain *domain, fi_tx_attr *attr, fid_stx **stx, void *context);
int scalable_ep(fid_domain *domain, fi_info *info, fid_ep **sep, void *context);
int srx_context(fid_domain *domain, fi_rx_attr *attr, fid_ep **rx_ep, void *context);

// What a scalable endpoint's contexts (api/sep.cpp) share with endpoints (api/ep.cpp): the
// endpoint's tables, and its fi_control.
const runtime::ep::EndpointOps &endpoint_tables();
int endpoint_control(fid_t fid, int command, void *arg);

// fi_ops_mr (the domain's registration table)
extern fi_ops_mr g_mr_ops;
// The domain's fi_control commands FI_MAP_RAW_MR and FI_UNMAP_KEY (fi_mr_map_raw,
// fi_mr_unmap_key); -FI_ENOSYS for any other command.
int mr_domain_control(fid_t domain, int command, void *arg);

// fi_ops_fabric
int open_domain(fid_fabric *fabric, fi_info *info, fid_domain **domain, uint64_t flags, void *context);
int eq_open(fid_fabric *fabric, fi_eq_attr *attr, fid_eq **eq, void *context);
int passive_ep(fid_fabric *fabric, fi_info *info, fid_pep **pep, void *context);

}  // namespace ufi::api
