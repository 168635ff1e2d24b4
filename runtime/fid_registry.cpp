#include "runtime/fid_cast.h"

#include <atomic>

namespace ufi::runtime {

namespace {

constexpr int kMaxTables = 64;
constexpr size_t kClasses = 64;       // FI_CLASS_* values below this are indexed directly
constexpr int kTablesPerClass = 4;

struct Registry {
    std::atomic<const fi_ops *> tables[kMaxTables] = {};
    std::atomic<int> count{0};
    // The same tables by class (a class's slots fill from the front).
    std::atomic<const fi_ops *> by_class[kClasses][kTablesPerClass] = {};
};

Registry &registry() {
    static Registry r;  // constant-initialised: usable during static initialisation
    return r;
}

}  // namespace

void register_fi_ops(const fi_ops *ops, size_t fclass) noexcept {
    if (ops == nullptr) return;
    Registry &r = registry();
    if (fclass < kClasses) {
        for (auto &slot : r.by_class[fclass]) {
            const fi_ops *none = nullptr;
            if (slot.compare_exchange_strong(none, ops, std::memory_order_acq_rel) || none == ops) break;
        }
    }
    if (is_ufi_fi_ops(ops)) return;
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

bool is_ufi_fi_ops(const fi_ops *ops, size_t fclass) noexcept {
    if (ops == nullptr) return false;
    if (fclass >= kClasses) return false;  // no ufi object has such a class
    for (const auto &slot : registry().by_class[fclass]) {
        const fi_ops *t = slot.load(std::memory_order_acquire);
        if (t == ops) return true;
        if (t == nullptr) break;
    }
    return false;  // (a table of another class is ufi's, but not this class's)
}

}  // namespace ufi::runtime
