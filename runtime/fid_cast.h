// From a libfabric handle to ufi's object: every runtime object derives from the C struct
// the application holds (Domain : fid_domain, ...), so the conversion is a static_cast, never
// a lookup. `struct fid` is the first member of every fid_* struct (standard layout), so a
// fid_t converts to its fid_* struct with a reinterpret_cast.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>

namespace ufi::runtime {

// The object behind `fid` when it has class `fclass`, else nullptr.
template <typename Object, typename CStruct = typename Object::CStruct>
Object *object_of(fid_t fid, size_t fclass) noexcept {
    if (fid == nullptr || fid->fclass != fclass) return nullptr;
    return static_cast<Object *>(reinterpret_cast<CStruct *>(fid));
}

template <typename Object, typename CStruct = typename Object::CStruct>
Object *object_of(CStruct *c) noexcept {
    return static_cast<Object *>(c);
}

}  // namespace ufi::runtime
