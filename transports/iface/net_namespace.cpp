#include "transports/iface/net_namespace.h"

#include <sys/stat.h>

#include <algorithm>

namespace ufi::transports {

uint64_t network_namespace_mark() noexcept {
    struct stat st {};
    // The thread's own: setns() moves only the calling thread.
    if (stat("/proc/thread-self/ns/net", &st) != 0 && stat("/proc/self/ns/net", &st) != 0) {
        return 0;
    }
    // FNV-1a over the device and inode numbers (what names a namespace), then a final mix so
    // that nearby inode numbers differ in every byte.
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t v : {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h != 0 ? h : 1;
}

void apply_namespace_mark(std::span<uint8_t> addr, uint64_t mark) noexcept {
    const size_t n = std::min<size_t>(addr.size(), 8);
    for (size_t i = 0; i < n; ++i) addr[i] ^= static_cast<uint8_t>(mark >> (8 * i));
}

}  // namespace ufi::transports
