#include "transports/transport_code.h"

#include <array>

namespace ufi::transports {

namespace {

// Index + 1 is the code. Append only: a peer of the same protocol version reads the same.
constexpr std::array<std::string_view, 22> kTransports = {
    "self",     "posix",    "sysv",      "cma",      "knem",     "xpmem",
    "tcp",      "rc_verbs", "rc_mlx5",   "dc_mlx5",  "ud_verbs", "ud_mlx5",
    "cuda_copy", "cuda_ipc", "gdr_copy", "rocm_copy", "rocm_ipc", "rocm_gdr",
    "ze_copy",  "ze_ipc",   "srd",       "gga_mlx5",
};

}  // namespace

TransportCode transport_code(std::string_view tl) noexcept {
    for (size_t i = 0; i < kTransports.size(); ++i) {
        if (kTransports[i] == tl) return static_cast<TransportCode>(i + 1);
    }
    return kNoTransport;
}

std::string_view transport_name(TransportCode code) noexcept {
    return code == kNoTransport || code > kTransports.size() ? std::string_view{}
                                                             : kTransports[code - 1];
}

bool is_transport(const address::TransportRecord &rec, TransportCode code) noexcept {
    return code != kNoTransport && transport_code(rec.tl) == code;
}

}  // namespace ufi::transports
