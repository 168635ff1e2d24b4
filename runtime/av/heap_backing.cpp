// A private address table: header and chunks on anonymous mappings.
#include "runtime/av/backing.h"

#include <rdma/fi_errno.h>

#include <sys/mman.h>

#include <new>

namespace ufi::runtime::av {

namespace {

void *map_anonymous(size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

class HeapBacking final : public Backing {
  public:
    HeapBacking(layout::TableHeader *h, size_t bytes) : bytes_(bytes) { header_ = h; }
    ~HeapBacking() override {
        pthread_mutex_destroy(&header_->mutex);
        munmap(header_, bytes_);
    }
    int create_chunk(ChunkKind, uint32_t, size_t bytes, void *&out) noexcept override {
        out = map_anonymous(bytes);
        if (out == nullptr) return -FI_ENOMEM;
        // Lookups of a large AV touch entries at random: huge pages spare them a TLB miss
        // each (where the kernel's THP policy is "madvise"; a no-op hint elsewhere).
        constexpr size_t kHugePage = size_t{2} << 20;
        if (bytes >= kHugePage) (void)madvise(out, bytes, MADV_HUGEPAGE);
        return 0;
    }
    int map_chunk(ChunkKind, uint32_t, size_t, void *&) noexcept override { return -FI_EINVAL; }
    void unmap_chunk(void *p, size_t bytes) noexcept override { munmap(p, bytes); }

  private:
    size_t bytes_;
};

}  // namespace

int make_heap_backing(const layout::Geometry &g, std::unique_ptr<Backing> &out) noexcept {
    const size_t bytes = layout::header_bytes(g.key_capacity);
    void *mem = map_anonymous(bytes);
    if (mem == nullptr) return -FI_ENOMEM;
    auto *h = static_cast<layout::TableHeader *>(mem);
    if (layout::init_header(h, g) != 0) {
        munmap(mem, bytes);
        return -FI_EOTHER;
    }
    auto *b = new (std::nothrow) HeapBacking(h, bytes);
    if (b == nullptr) {
        pthread_mutex_destroy(&h->mutex);
        munmap(mem, bytes);
        return -FI_ENOMEM;
    }
    out.reset(b);
    return 0;
}

}  // namespace ufi::runtime::av
