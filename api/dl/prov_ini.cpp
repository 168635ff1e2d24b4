// ufi as a provider of a system libfabric: the DL provider entry point fi_prov_ini, which a
// libfabric (Debian 12's 1.17, say) calls when it finds libufi-fi.so on FI_PROVIDER_PATH, so
// that applications of that libfabric choose ufi as any provider (FI_PROVIDER=ufi, fi_info
// -p ufi). Everything else of ufi in this module is local (fi_prov_ini.map): ufi's own
// fi_getinfo, fi_fabric and friends never stand in for the loader's.
//
// The loader's struct fi_provider and the structs it passes are of its own version: ufi
// reports the API version the loader knows (a loader refuses a provider of a newer one), reads
// and writes fi_info in that version's layout (api/loader.h), and refuses loaders older than
// 1.5 (no fi_fabric_attr::api_version, no FI_MR_* modes as ufi negotiates them) with a line on
// stderr, since its own log is not ufi's.
#include "api/loader.h"
#include "api/provider_abi.h"
#include "base/log/log.h"

#include <rdma/fabric.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

// The libfabric API version of ufi's headers.
constexpr uint32_t kUfiApi = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
constexpr uint32_t kOldestLoader = FI_VERSION(1, 5);

uint32_t g_loader_version = 0;

int prov_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                 const struct fi_info *hints, struct fi_info **info) {
    return ufi::api::loader_getinfo(g_loader_version, version, node, service, flags, hints, info);
}

int prov_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context) {
    return ufi::api::loader_fabric(attr, fabric, context);
}

void prov_cleanup() {}

struct fi_provider g_provider = {
    .version = FI_VERSION(0, 1),
    .fi_version = kUfiApi,
    .context = {},
    .name = "ufi",
    .getinfo = prov_getinfo,
    .fabric = prov_fabric,
    .cleanup = prov_cleanup,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) struct fi_provider *fi_prov_ini(void) {
    // The loader: the libfabric whose fi_version the process sees first (this module's own is
    // local, so it is never the one found).
    using VersionFn = uint32_t (*)();
    auto *loader_version = reinterpret_cast<VersionFn>(dlsym(RTLD_DEFAULT, "fi_version"));
    const uint32_t v = loader_version != nullptr ? loader_version() : 0;
    if (v < kOldestLoader) {
        std::fprintf(stderr,
                     "ufi: not loaded as a provider: the loading libfabric's API is %u.%u; ufi "
                     "needs %u.%u or newer\n",
                     FI_MAJOR(v), FI_MINOR(v), FI_MAJOR(kOldestLoader), FI_MINOR(kOldestLoader));
        return nullptr;
    }
    g_loader_version = v;
    g_provider.fi_version = std::min(v, kUfiApi);
    UFI_LOG_INFO(ufi::log::Subsys::Core,
                 "loaded as a provider by libfabric API {}.{}; ufi offers it API {}.{}", FI_MAJOR(v),
                 FI_MINOR(v), FI_MAJOR(g_provider.fi_version), FI_MINOR(g_provider.fi_version));
    return &g_provider;
}
