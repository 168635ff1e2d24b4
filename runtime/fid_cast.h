// From a libfabric handle to ufi's object: every runtime object derives from the C struct
// the application holds (Domain : fid_domain, ...), so the conversion is a static_cast, never
// a lookup. `struct fid` is the first member of every fid_* struct (standard layout), so a
// fid_t converts to its fid_* struct with a reinterpret_cast.
//
// Before converting, a handle is checked to be ufi's: its class, and its fi_ops table is one
// of ufi's (each api/ adapter registers its table). Reading fid->ops is valid for any fid, so
// a handle from another library or a stray pointer of the right class is refused, not cast.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>

namespace ufi::runtime {

// Records `ops` as one of ufi's fi_ops tables, the one of objects of class `fclass` (below
// 64, up to 4 tables a class). Idempotent, thread-safe; up to 64 tables.
void register_fi_ops(const fi_ops *ops, size_t fclass) noexcept;
// Whether `ops` is one of ufi's tables.
bool is_ufi_fi_ops(const fi_ops *ops) noexcept;
// Whether `ops` is one of ufi's tables for class `fclass` (the checks every call makes: a
// class has one or two tables, so this is a load and a compare, not a scan of them all).
bool is_ufi_fi_ops(const fi_ops *ops, size_t fclass) noexcept;

// Registers a table at static-initialisation time:
// `UFI_REGISTER_FI_OPS(g_cq_fi_ops, FI_CLASS_CQ);`.
struct FiOpsRegistration {
    FiOpsRegistration(const fi_ops *ops, size_t fclass) noexcept { register_fi_ops(ops, fclass); }
};
#define UFI_REGISTER_FI_OPS(table, fclass) \
    const ::ufi::runtime::FiOpsRegistration ufi_fi_ops_registration_##table{&(table), (fclass)}

// The object behind `fid` when it is ufi's and has class `fclass`, else nullptr.
template <typename Object, typename CStruct = typename Object::CStruct>
Object *object_of(fid_t fid, size_t fclass) noexcept {
    if (fid == nullptr || fid->fclass != fclass || !is_ufi_fi_ops(fid->ops, fclass)) return nullptr;
    return static_cast<Object *>(reinterpret_cast<CStruct *>(fid));
}

template <typename Object, typename CStruct = typename Object::CStruct>
Object *object_of(CStruct *c) noexcept {
    return static_cast<Object *>(c);
}

}  // namespace ufi::runtime
