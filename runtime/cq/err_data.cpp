#include "runtime/cq/err_data.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace ufi::runtime::errdata {

Delivered deliver(uint32_t api_version, void *user_ptr, size_t user_size,
                  std::vector<uint8_t> &data, std::vector<uint8_t> &hold, bool consume) noexcept {
    Delivered out;
    if (api_version >= kSizedVersion && user_size > 0 && user_ptr != nullptr) {
        out.size = std::min(user_size, data.size());
        if (out.size > 0) memcpy(user_ptr, data.data(), out.size);
        out.ptr = user_ptr;
        return out;
    }
    if (consume) {
        hold.swap(data);
        data.clear();
    } else {
        try {
            hold = data;
        } catch (const std::bad_alloc &) {
            hold.clear();
        }
    }
    out.ptr = hold.empty() ? nullptr : hold.data();
    out.size = hold.size();
    return out;
}

}  // namespace ufi::runtime::errdata
