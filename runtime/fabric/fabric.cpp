#include "runtime/fabric/fabric.h"

#include "runtime/info/provider_info.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

namespace ufi::runtime {

static_assert(std::is_standard_layout_v<Fabric> && offsetof(Fabric, fid) == 0,
              "the fid must be the first member so the handle converts back");

int open_fabric(const fi_fabric_attr *attr, fi_ops *ops, fi_ops_fabric *fabric_ops,
                void *context, Fabric **out) noexcept {
    if (attr == nullptr || out == nullptr) {
        UFI_LOG_WARN(log::Subsys::Fabric, "fi_fabric: {} is NULL", attr == nullptr ? "attr" : "fabric");
        return -FI_EINVAL;
    }
    if (attr->prov_name != nullptr && strcasecmp(attr->prov_name, info::kProviderName) != 0) {
        UFI_LOG_WARN(log::Subsys::Fabric, "fi_fabric: provider \"{}\" is not ufi", attr->prov_name);
        return -FI_ENODEV;
    }
    if (attr->name != nullptr && strcmp(attr->name, info::kFabricName) != 0) {
        UFI_LOG_WARN(log::Subsys::Fabric, "fi_fabric: unknown fabric \"{}\" (ufi has \"{}\")",
                     attr->name, info::kFabricName);
        return -FI_ENODATA;
    }
    const uint32_t own = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    if (attr->api_version != 0 && FI_VERSION_LT(own, attr->api_version)) {
        UFI_LOG_WARN(log::Subsys::Fabric, "fi_fabric: API version {}.{} is newer than ufi's {}.{}",
                     FI_MAJOR(attr->api_version), FI_MINOR(attr->api_version), FI_MAJOR_VERSION,
                     FI_MINOR_VERSION);
        return -FI_ENOSYS;
    }
    auto *fabric = new (std::nothrow) Fabric{};
    if (fabric == nullptr) return -FI_ENOMEM;
    fabric->fid.fid.fclass = FI_CLASS_FABRIC;
    fabric->fid.fid.context = context;
    fabric->fid.fid.ops = ops;
    fabric->fid.ops = fabric_ops;
    // A hand-built attr without api_version gets the oldest behaviour we serve that every
    // 1.x program understands: the version of these headers' struct layouts.
    fabric->api_version = attr->api_version != 0 ? attr->api_version : own;
    *out = fabric;
    return 0;
}

int close_fabric(Fabric *fabric) noexcept {
    if (fabric->open_children.load() != 0) {
        UFI_LOG_WARN(log::Subsys::Fabric, "fi_close(fabric): {} objects still open",
                     fabric->open_children.load());
        return -FI_EBUSY;
    }
    delete fabric;
    return 0;
}

}  // namespace ufi::runtime
