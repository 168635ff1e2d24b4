// libfabric's provider-facing declarations that ufi exports at link time (fi_log*,
// fi_param_*): libfabric declares them in rdma/providers/fi_log.h and fi_prov.h, which
// ufi does not install yet (that comes with loading ufi as a provider into a system
// libfabric). Layouts and values as libfabric's.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_ext.h>

#include <cstdint>

extern "C" {

// enum fi_log_subsys and enum fi_log_level come from <rdma/fi_ext.h> (libfabric keeps them
// in rdma/providers/fi_log.h, which ufi does not install yet).

struct fi_provider {
    uint32_t version;
    uint32_t fi_version;
    struct fi_context context;
    const char *name;
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    void (*cleanup)(void);
};

}  // extern "C"
