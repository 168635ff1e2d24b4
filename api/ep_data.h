// The endpoint's data-transfer tables that have a data path (api/ep_data.cpp): fi_msg and
// fi_tagged. api/ep.cpp installs them on every endpoint; before fi_enable they return
// -FI_EOPBADSTATE.
#pragma once

#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

namespace ufi::api {

extern fi_ops_msg g_ep_msg_ops;
extern fi_ops_tagged g_ep_tagged_ops;

}  // namespace ufi::api
