// The fabric object: the root of every domain a process opens. It remembers the API
// version the application was built for, which decides version-dependent behaviour of its
// children (fi_cq_readerr's entry size, mr_mode vocabulary).
#pragma once

#include <rdma/fabric.h>

#include <atomic>
#include <cstdint>

namespace ufi::runtime {

struct Fabric {
    fid_fabric fid;  // first member: the handle the application holds
    uint32_t api_version;
    std::atomic<int> open_children{0};  // domains, passive endpoints, EQs, wait sets

    static Fabric *from(fid_fabric *f) noexcept { return reinterpret_cast<Fabric *>(f); }
    static Fabric *from(fid_t f) noexcept { return reinterpret_cast<Fabric *>(f); }
};

// Opens a fabric for a fabric_attr that fi_getinfo returned. -FI_EINVAL for NULL arguments,
// -FI_ENODEV when the attributes name another provider, -FI_ENODATA for an unknown fabric.
// `ops`/`fabric_ops` are the api layer's tables.
int open_fabric(const fi_fabric_attr *attr, fi_ops *ops, fi_ops_fabric *fabric_ops,
                void *context, Fabric **out) noexcept;

// -FI_EBUSY while children are open.
int close_fabric(Fabric *fabric) noexcept;

}  // namespace ufi::runtime
