#include "runtime/mr/mr_pool.h"

#include "runtime/mr/mr.h"

#include <new>
#include <utility>
#include <vector>

namespace ufi::runtime::mr {

// One MR's storage and, while it is spare, the emptied segment list of the MR that lived in
// it (its capacity is what the next MR reuses).
struct MrPool::Block {
    alignas(Mr) unsigned char storage[sizeof(Mr)];
    std::vector<Segment> segments;
};

namespace {

// This thread's spare block (any pool's MRs fit it).
struct ThreadSpare {
    MrPool::Block *block = nullptr;
    ~ThreadSpare();
};
thread_local ThreadSpare t_spare;

}  // namespace

ThreadSpare::~ThreadSpare() { delete block; }

MrPool::~MrPool() {
    delete spare_.exchange(nullptr, std::memory_order_acquire);
}

Mr *MrPool::make() {
    Block *b = std::exchange(t_spare.block, nullptr);
    if (b == nullptr) b = spare_.exchange(nullptr, std::memory_order_acquire);
    if (b == nullptr) b = new Block;
    Mr *mr;
    try {
        // Default-initialized, not value-initialized: every ufi member has its initializer,
        // and zeroing the whole record first (Mr(), some 370 bytes) was a tenth of a cached
        // registration's time. Only the C base has none: zeroed here.
        mr = new (b->storage) Mr;
        static_cast<fid_mr &>(*mr) = fid_mr{};
    } catch (...) {
        delete b;
        throw;
    }
    mr->segments = std::move(b->segments);
    mr->pool_block = b;
    return mr;
}

void MrPool::recycle(Mr *mr) noexcept {
    auto *b = static_cast<Block *>(mr->pool_block);
    std::vector<Segment> segments = std::move(mr->segments);
    segments.clear();  // the registrations' references go now, as they did with the MR
    mr->~Mr();
    b->segments = std::move(segments);
    if (t_spare.block == nullptr) {
        t_spare.block = b;
        return;
    }
    delete spare_.exchange(b, std::memory_order_acq_rel);
}

}  // namespace ufi::runtime::mr
