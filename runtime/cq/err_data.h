// libfabric's err_data rules for fi_cq_readerr and fi_eq_readerr, by the caller's API version:
// from 1.5 on, a caller that passes err_data_size > 0 gets the bytes copied into its err_data
// buffer (truncated to its size); a caller below 1.5, or passing err_data_size == 0, gets
// err_data pointing at a buffer the queue owns, valid until the queue's next read.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ufi::runtime::errdata {

// Oldest API version whose error entries have err_data_size.
inline constexpr uint32_t kSizedVersion = FI_VERSION(1, 5);

struct Delivered {
    void *ptr = nullptr;  // what err_data becomes
    size_t size = 0;      // what err_data_size becomes (from 1.5 on)
};

// `data` is the error's bytes; when they go to the queue-owned buffer, `hold` takes them
// (moved when `consume`, copied for a peek). `user_ptr`/`user_size` are the caller's input.
Delivered deliver(uint32_t api_version, void *user_ptr, size_t user_size,
                  std::vector<uint8_t> &data, std::vector<uint8_t> &hold, bool consume) noexcept;

}  // namespace ufi::runtime::errdata
