#include "runtime/mr/address_probe.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace ufi::runtime::mr {

namespace {

std::uintptr_t page_size() noexcept {
    static const std::uintptr_t size = [] {
        const long p = sysconf(_SC_PAGESIZE);
        return p > 0 ? static_cast<std::uintptr_t>(p) : std::uintptr_t{4096};
    }();
    return size;
}

// 0 or the errno of madvise(advice) over the pages holding [addr, addr + len).
int populate(std::uintptr_t addr, std::size_t len, int advice) noexcept {
    const std::uintptr_t page = page_size();
    const std::uintptr_t start = addr & ~(page - 1);
    std::uintptr_t end = addr + len;
    if (end < addr) return ENOMEM;  // past the end of the address space
    end = end > UINTPTR_MAX - (page - 1) ? UINTPTR_MAX & ~(page - 1) : (end + page - 1) & ~(page - 1);
    if (end <= start) return ENOMEM;
    int rc;
    do {
        rc = madvise(reinterpret_cast<void *>(start), end - start, advice) == 0 ? 0 : errno;
    } while (rc == EINTR);
    return rc;
}

}  // namespace

bool address_probe_supported() noexcept {
    static const bool supported = [] {
        static int here = 0;  // a page this process certainly maps, readable
        return populate(reinterpret_cast<std::uintptr_t>(&here), sizeof here,
                        MADV_POPULATE_READ) == 0;
    }();
    return supported;
}

bool range_accessible(std::uintptr_t addr, std::size_t len, bool write) noexcept {
    if (len == 0) return true;
    if (populate(addr, len, MADV_POPULATE_READ) != 0) return false;
    return !write || populate(addr, len, MADV_POPULATE_WRITE) == 0;
}

}  // namespace ufi::runtime::mr
