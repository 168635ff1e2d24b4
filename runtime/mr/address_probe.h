// Whether a peer's access may touch a range of this process's memory that no registration
// pinned: the target side of an address-space registration (fi_mr_reg(NULL, len): MPICH's
// dynamic windows), where the range is whatever the process maps at the time of the access.
// The kernel answers without a copy and without changing a byte: madvise(MADV_POPULATE_READ /
// MADV_POPULATE_WRITE) faults the pages in as a read or a write would and fails on a hole
// (ENOMEM) or on a page the access may not touch (EFAULT: PROT_NONE guard pages, read-only
// pages for a write). Linux 5.14 and later.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::mr {

// Whether this kernel answers the probe (checked once: older kernels refuse the advice).
bool address_probe_supported() noexcept;

// Whether [addr, addr + len) is mapped and may be read (and written, with `write`) now.
// len 0 is always accessible.
bool range_accessible(std::uintptr_t addr, std::size_t len, bool write) noexcept;

}  // namespace ufi::runtime::mr
