// Allocation, deep copy and release of libfabric's fi_info lists.
// Everything is malloc-based because applications free hints they built with strdup()
// through fi_freeinfo(), and free() what we hand them field by field.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>

namespace ufi::runtime::info {

// Sizes of the nested attribute structs as the caller's fi_getinfo/fi_dupinfo version knew
// them (shared/abi-notes.md): older symbol versions must not read beyond these.
struct AttrLayout {
    size_t domain_attr_size;
    size_t ep_attr_size;
};
AttrLayout layout_current();

// A new fi_info with every attribute struct allocated and zeroed (fi_allocinfo()).
fi_info *alloc_info();

// Deep copy of one entry (not the list): strings, addresses, auth keys, nic.
// Reads the caller's nested structs only up to `layout`. NULL on allocation failure.
fi_info *dup_info(const fi_info *src, const AttrLayout &layout);
inline fi_info *dup_info(const fi_info *src) { return dup_info(src, layout_current()); }

// Releases a whole list (fi_freeinfo()). Reads nothing beyond the 1.3 layout.
void free_info(fi_info *list);

// Whether `attr` was allocated by ufi (alloc_info/dup_info) and so has the full current
// layout. fi_tostr has one symbol version for every caller; it prints the fields libfabric
// 2.x appended to fi_domain_attr only for structs that are known to have them, because a
// 1.x program's own fi_domain_attr ends at tclass.
bool has_current_layout(const fi_domain_attr *attr);

// malloc-based string duplicate that tolerates NULL.
char *dup_cstr(const char *s);

}  // namespace ufi::runtime::info
