// The data path behind an enabled endpoint, for tests that look at peers, lanes and counters
// the public API does not show.
#pragma once

#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/proto/data_path.h"

#include <rdma/fi_endpoint.h>

namespace ufi::msg_test {

inline runtime::proto::DataPath *data_path(fid_ep *ep) {
    return runtime::ep::endpoint_of(&ep->fid)->data_path();
}

}  // namespace ufi::msg_test
