// What the provider entry point (api/dl/prov_ini.cpp: ufi loaded by a system libfabric from
// FI_PROVIDER_PATH) calls: fi_getinfo and fi_fabric as the loading libfabric asks for them.
#pragma once

#include <rdma/fabric.h>

#include <cstdint>

namespace ufi::api {

// fi_getinfo for a loading libfabric of version `loader_version` (its fi_version()): its
// structs are read and written in that version's layout, and the answers carry no provider
// name (the loader sets it).
int loader_getinfo(uint32_t loader_version, uint32_t version, const char *node,
                   const char *service, uint64_t flags, const fi_info *hints, fi_info **info);

// fi_fabric for the loader (the attr is one of ufi's answers, named by the loader).
int loader_fabric(fi_fabric_attr *attr, fid_fabric **fabric, void *context);

}  // namespace ufi::api
