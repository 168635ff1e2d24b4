#include "runtime/fid_cast.h"

#include <atomic>

namespace ufi::runtime {

namespace {

constexpr int kMaxTables = 64;

struct Registry {
    std::atomic<const fi_ops *> tables[kMaxTables] = {};
    std::atomic<int> count{0};
};

Registry &registry() {
    static Registry r;  // constant-initialised: usable during static initialisation
    return r;
}

}  // namespace

void register_fi_ops(const fi_ops *ops) noexcept {
    if (ops == nullptr || is_ufi_fi_ops(ops)) return;
    Registry &r = registry();
    const int slot = r.count.fetch_add(1);
    if (slot < kMaxTables) r.tables[slot].store(ops, std::memory_order_release);
}

bool is_ufi_fi_ops(const fi_ops *ops) noexcept {
    if (ops == nullptr) return false;
    Registry &r = registry();
    const int n = r.count.load(std::memory_order_acquire);
    for (int i = 0; i < n && i < kMaxTables; ++i) {
        if (r.tables[i].load(std::memory_order_acquire) == ops) return true;
    }
    return false;
}

}  // namespace ufi::runtime
