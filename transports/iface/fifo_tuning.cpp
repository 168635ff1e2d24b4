#include "transports/iface/fifo_tuning.h"

#include "base/config/config.h"
#include "base/log/log.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>

#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

namespace ufi::transports {

namespace {

using log::Subsys;

constexpr int64_t kMinElemSize = 128;
constexpr int64_t kMaxElemSize = 65535;

// The mm transports' settings sit in a table UCX includes under "MM_" (UCX_POSIX_FIFO_SIZE in
// the environment is MM_FIFO_SIZE to uct_config_get/modify).
std::string setting(const char *name) { return std::string("MM_") + name; }

// A numeric setting of `config`: a count, or a size as UCS prints it (a number, possibly
// with a K, M or G suffix).
bool config_number(uct_iface_config_t *config, const char *name, uint32_t &out) {
    char text[64] = {};
    if (uct_config_get(config, setting(name).c_str(), text, sizeof text) != UCS_OK) return false;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (end == text) return false;
    switch (*end) {
        case 'K': case 'k': v <<= 10; break;
        case 'M': case 'm': v <<= 20; break;
        case 'G': case 'g': v <<= 30; break;
        default: break;
    }
    if (v > UINT32_MAX) return false;
    out = static_cast<uint32_t>(v);
    return true;
}

// FNV-1a over the values' bytes, folded to one byte: an address name must stay within
// FI_NAME_MAX (64 bytes) with a posix record and a network one (a RoCE ud record left one
// byte to spare); two different geometries share a fingerprint once in 256.
uint8_t fingerprint(std::initializer_list<uint32_t> values) {
    uint32_t h = 2166136261u;
    for (uint32_t v : values) {
        for (int i = 0; i < 4; ++i) {
            h ^= (v >> (8 * i)) & 0xffu;
            h *= 16777619u;
        }
    }
    return static_cast<uint8_t>(h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24));
}

}  // namespace

std::vector<uint8_t> tune_shm_fifo(uct_iface_config_t *config, const std::string &tl,
                                   FifoShape *shape) {
    if (shape != nullptr) *shape = FifoShape{};
    uint32_t elem = 0;
    if (!config_number(config, "FIFO_ELEM_SIZE", elem)) return {};  // no FIFO
    const int64_t want = config::registry().get_int("UFI_SHM_FIFO_ELEM_SIZE");
    if (want != 0) {
        // (UCT needs room for its 28-byte element header and ufi's headers; an element's
        // length field is 16 bits.)
        ucs_status_t s = UCS_ERR_INVALID_PARAM;
        if (want >= kMinElemSize && want <= kMaxElemSize) {
            const std::string value = std::to_string(want);
            s = uct_config_modify(config, setting("FIFO_ELEM_SIZE").c_str(), value.c_str());
        }
        if (s != UCS_OK) {
            static std::once_flag warned;
            std::call_once(warned, [&] {
                UFI_LOG_WARN(Subsys::Core,
                             "UFI_SHM_FIFO_ELEM_SIZE={}: not an element size the shared-memory "
                             "FIFOs take ({} to {} bytes; {}: {}); UCX's {} bytes are used",
                             want, kMinElemSize, kMaxElemSize, tl, to_string(s), elem);
            });
        }
    }
    uint32_t count = 0, seg = 0;
    if (!config_number(config, "FIFO_ELEM_SIZE", elem) || !config_number(config, "FIFO_SIZE", count) ||
        !config_number(config, "SEG_SIZE", seg)) {
        return {};
    }
    if (shape != nullptr) *shape = FifoShape{elem, count};
    return {fingerprint({elem, count, seg})};
}

void tune_shm_rx_pool(uct_iface_config_t *config, const std::string &tl) {
    uint32_t grow = 0;
    if (!config_number(config, "RX_BUFS_GROW", grow)) return;  // no FIFO
    const int64_t want = config::registry().get_int("UFI_SHM_RX_BUFS_GROW");
    if (want == 0) return;
    ucs_status_t s = UCS_ERR_INVALID_PARAM;
    if (want > 0 && want <= INT32_MAX) {
        s = uct_config_modify(config, setting("RX_BUFS_GROW").c_str(), std::to_string(want).c_str());
    }
    if (s != UCS_OK) {
        static std::once_flag warned;
        std::call_once(warned, [&] {
            UFI_LOG_WARN(Subsys::Core,
                         "UFI_SHM_RX_BUFS_GROW={}: not a descriptor count {} takes ({}); UCX's {} "
                         "are used",
                         want, tl, to_string(s), grow);
        });
    }
}

}  // namespace ufi::transports
