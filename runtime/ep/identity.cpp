#include "runtime/ep/identity.h"

#include <sys/random.h>

#include <chrono>
#include <mutex>
#include <unordered_map>

namespace ufi::runtime::ep {

uint64_t random_uuid() noexcept {
    for (int attempt = 0; attempt < 8; ++attempt) {
        uint64_t v = 0;
        if (getrandom(&v, sizeof v, 0) == static_cast<ssize_t>(sizeof v) && v != 0) return v;
    }
    // splitmix64 over the clock and a stack address: unique enough when getrandom fails.
    uint64_t z = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    int local = 0;
    z ^= reinterpret_cast<uintptr_t>(&local);
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z != 0 ? z : 1;
}

namespace ids {

namespace {

struct Registry {
    std::mutex mutex;
    std::unordered_map<uint32_t, uint64_t> used;  // id -> the uuid it goes with (0: none yet)
    uint32_t next = 1;
};

Registry &registry() {
    static Registry *r = new Registry();  // never destroyed: endpoints may close at exit
    return *r;
}

}  // namespace

uint32_t acquire() noexcept {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    try {
        for (;;) {
            const uint32_t id = r.next++;
            if (id == 0 || r.used.count(id) != 0) continue;
            r.used.emplace(id, 0);
            return id;
        }
    } catch (...) {
        return 0;  // out of memory: 0 is never a live id
    }
}

bool claim(uint32_t id) noexcept {
    if (id == 0) return false;
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    try {
        return r.used.emplace(id, 0).second;
    } catch (...) {
        return false;
    }
}

void release(uint32_t id) noexcept {
    if (id == 0) return;
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.used.erase(id);
}

bool in_use(uint32_t id) noexcept {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.used.count(id) != 0;
}

void set_uuid(uint32_t id, uint64_t uuid) noexcept {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.used.find(id);
    if (it != r.used.end()) it->second = uuid;
}

bool lives_here(uint32_t id, uint64_t uuid) noexcept {
    if (uuid == 0) return false;
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.used.find(id);
    return it != r.used.end() && it->second == uuid;
}

}  // namespace ids

}  // namespace ufi::runtime::ep
