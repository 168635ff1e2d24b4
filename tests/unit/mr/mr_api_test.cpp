// Black-box tests of memory registration through the public C API (libufi.so, as an
// application links it), on the domain fi_getinfo offers first with the mr_mode it
// negotiates: every call, and one test per error the fi_mr page names.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

class MrApi : public ::testing::Test {
  protected:
    void SetUp() override {
        fi_info *hints = fi_allocinfo();
        // What MPICH-like applications offer: ufi keeps VIRT_ADDR, ALLOCATED and PROV_KEY.
        hints->domain_attr->mr_mode = mr_mode_hint_;
        ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, hints, &info_), 0);
        fi_freeinfo(hints);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
        buf_.resize(64 * 1024);
    }
    void TearDown() override {
        if (domain_ != nullptr) {
            EXPECT_EQ(fi_close(&domain_->fid), 0);
        }
        if (fabric_ != nullptr) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        fi_freeinfo(info_);
    }
    int reg(void *buf, size_t len, uint64_t key, fid_mr **mr, uint64_t flags = 0,
            uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE) {
        return fi_mr_reg(domain_, buf, len, access, 0, key, flags, mr, nullptr);
    }
    bool prov_key() const { return (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0; }

    int mr_mode_hint_ = 0;  // scalable: user keys, offset addressing
    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    std::vector<char> buf_;
};

class MrApiBasic : public MrApi {
  protected:
    MrApiBasic() {
        mr_mode_hint_ =
            FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_LOCAL | FI_MR_RAW;
    }
};

TEST_F(MrApi, RegisterDescribesAndCloses) {
    fid_mr *mr = nullptr;
    int ctx = 0;
    ASSERT_EQ(fi_mr_reg(domain_, buf_.data(), buf_.size(), FI_REMOTE_READ, 0, 7, 0, &mr, &ctx), 0);
    EXPECT_EQ(mr->fid.fclass, static_cast<size_t>(FI_CLASS_MR));
    EXPECT_EQ(mr->fid.context, &ctx);
    EXPECT_NE(fi_mr_desc(mr), nullptr);
    EXPECT_EQ(fi_mr_key(mr), 7u) << "without FI_MR_PROV_KEY the requested key is the key";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, NegotiationKeepsWhatUfiHonours) {
    EXPECT_EQ(info_->domain_attr->mr_mode, 0);
    EXPECT_EQ(info_->domain_attr->mr_key_size, 8u);
}

TEST_F(MrApiBasic, ProviderKeysIgnoreTheRequest) {
    EXPECT_TRUE(prov_key());
    EXPECT_FALSE(info_->domain_attr->mr_mode & FI_MR_RAW) << "ufi never requires raw keys";
    EXPECT_FALSE(info_->domain_attr->mr_mode & FI_MR_LOCAL)
        << "ufi never requires local registration";
    fid_mr *a = nullptr, *b = nullptr;
    ASSERT_EQ(reg(buf_.data(), 100, 5, &a), 0);
    ASSERT_EQ(reg(buf_.data() + 100, 100, 5, &b), 0)
        << "requested_key is ignored with FI_MR_PROV_KEY";
    EXPECT_NE(fi_mr_key(a), fi_mr_key(b));
    EXPECT_NE(fi_mr_key(a), FI_KEY_NOTAVAIL);
    const uint64_t bkey = fi_mr_key(b);
    EXPECT_EQ(fi_close(&b->fid), 0);
    ASSERT_EQ(reg(buf_.data() + 100, 100, 5, &b), 0);
    EXPECT_NE(fi_mr_key(b), bkey) << "a reused slot gets a new key";
    EXPECT_EQ(fi_close(&a->fid), 0);
    EXPECT_EQ(fi_close(&b->fid), 0);
}

TEST_F(MrApiBasic, UnmappedMemoryIsRefusedUnderAllocated) {
    ASSERT_TRUE(info_->domain_attr->mr_mode & FI_MR_ALLOCATED);
    const size_t page = static_cast<size_t>(getpagesize());
    void *p = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    ASSERT_EQ(munmap(static_cast<char *>(p) + page, page), 0);  // a hole
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg(p, 4 * page, 0, &mr), -FI_EFAULT);
    EXPECT_EQ(reg(p, page, 0, &mr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    munmap(p, page);
    munmap(static_cast<char *>(p) + 2 * page, 2 * page);
}

TEST_F(MrApiBasic, ACachedRangeUnmappedSinceIsRefused) {
    // A registration the cache keeps lets the next fi_mr_reg of the range skip the mapping
    // check; once the range is unmapped (ucm reports it), the check is made again.
    ASSERT_TRUE(info_->domain_attr->mr_mode & FI_MR_ALLOCATED);
    const size_t page = static_cast<size_t>(getpagesize());
    void *p = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(p, 4 * page, 0, &mr), 0);
    ASSERT_EQ(fi_close(&mr->fid), 0);  // cached
    ASSERT_EQ(reg(p, 4 * page, 0, &mr), 0) << "a cache hit";
    ASSERT_EQ(fi_close(&mr->fid), 0);
    ASSERT_EQ(munmap(p, 4 * page), 0);
    EXPECT_EQ(reg(p, 4 * page, 0, &mr), -FI_EFAULT) << "unmapped since it was cached";
}

// ---- errors named by the page and the issue ------------------------------------------------

TEST_F(MrApi, ZeroLengthIsInvalid) {
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg(buf_.data(), 0, 1, &mr), -FI_EINVAL);
    iovec iov{buf_.data(), 0};
    EXPECT_EQ(fi_mr_regv(domain_, &iov, 1, FI_REMOTE_READ, 0, 1, 0, &mr, nullptr), -FI_EINVAL);
}

TEST_F(MrApi, NonZeroOffsetIsInvalid) {
    fid_mr *mr = nullptr;
    EXPECT_EQ(fi_mr_reg(domain_, buf_.data(), 64, FI_REMOTE_READ, 8, 1, 0, &mr, nullptr),
              -FI_EINVAL);
}

TEST_F(MrApi, NullArgumentsAreInvalid) {
    fid_mr *mr = nullptr;
    // (NULL with a length registers the address space: MrMode.NullRegistersTheAddressSpace...)
    EXPECT_EQ(reg(nullptr, 0, 1, &mr), -FI_EINVAL);
    EXPECT_EQ(reg(buf_.data(), 64, 1, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_mr_regv(domain_, nullptr, 1, FI_REMOTE_READ, 0, 1, 0, &mr, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_mr_regattr(domain_, nullptr, 0, &mr), -FI_EINVAL);
    fid_domain fake{};
    fake.fid.fclass = FI_CLASS_EQ;
    fake.mr = domain_->mr;
    EXPECT_EQ(fi_mr_reg(&fake, buf_.data(), 64, 0, 0, 1, 0, &mr, nullptr), -FI_EINVAL);
}

TEST_F(MrApi, UnknownFlagBitIsBadFlags) {
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg(buf_.data(), 64, 1, &mr, 1ULL << 3), -FI_EBADFLAGS);
    EXPECT_EQ(reg(buf_.data(), 64, 1, &mr, FI_RMA_PMEM), -FI_EBADFLAGS) << "no persistent memory";
    EXPECT_EQ(reg(buf_.data(), 64, 1, &mr, FI_HMEM_DEVICE_ONLY), -FI_EBADFLAGS) << "needs FI_HMEM";
    EXPECT_EQ(reg(buf_.data(), 64, 1, &mr, FI_HMEM_HOST_ALLOC), -FI_EBADFLAGS) << "needs FI_HMEM";
    EXPECT_EQ(reg(buf_.data(), 64, 1, &mr, FI_AUTH_KEY), -FI_EBADFLAGS) << "needs FI_AV_AUTH_KEY";
    fi_mr_dmabuf dmabuf{3, 0, 64, buf_.data()};
    fi_mr_attr attr{};
    attr.dmabuf = &dmabuf;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_READ;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, FI_MR_DMABUF, &mr), -FI_EBADFLAGS) << "needs FI_HMEM";
}

TEST_F(MrApi, UndefinedAccessBitsAreInvalid) {
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg(buf_.data(), 64, 1, &mr, 0, FI_REMOTE_READ | FI_TAGGED), -FI_EINVAL);
    ASSERT_EQ(reg(buf_.data(), 64, 1, &mr, 0,
                  FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
                      FI_COLLECTIVE),
              0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, RequestedKeyInUseIsNoKey) {
    fid_mr *a = nullptr, *b = nullptr;
    ASSERT_EQ(reg(buf_.data(), 64, 99, &a), 0);
    EXPECT_EQ(reg(buf_.data() + 64, 64, 99, &b), -FI_ENOKEY);
    EXPECT_EQ(fi_close(&a->fid), 0);
    ASSERT_EQ(reg(buf_.data() + 64, 64, 99, &b), 0) << "free again once closed";
    EXPECT_EQ(fi_close(&b->fid), 0);
}

TEST_F(MrApi, RequestedKeyOutOfRangeIsRejected) {
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg(buf_.data(), 64, FI_KEY_NOTAVAIL, &mr), -FI_EKEYREJECTED);
    ASSERT_EQ(reg(buf_.data(), 64, FI_KEY_NOTAVAIL - 1, &mr), 0) << "the largest key";
    EXPECT_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL - 1);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    ASSERT_EQ(reg(buf_.data(), 64, 1ULL << 63, &mr), 0) << "MPICH's window keys have the top bit";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, RegvUpToTheDomainLimit) {
    const size_t limit = info_->domain_attr->mr_iov_limit;
    ASSERT_GE(limit, 1u);
    std::vector<iovec> iov(limit + 1);
    for (size_t i = 0; i < iov.size(); ++i) iov[i] = {buf_.data() + i * 1024, 512};
    fid_mr *mr = nullptr;
    EXPECT_EQ(fi_mr_regv(domain_, iov.data(), 0, FI_REMOTE_READ, 0, 1, 0, &mr, nullptr),
              -FI_EINVAL);
    EXPECT_EQ(fi_mr_regv(domain_, iov.data(), limit + 1, FI_REMOTE_READ, 0, 1, 0, &mr, nullptr),
              -FI_EINVAL);
    ASSERT_EQ(fi_mr_regv(domain_, iov.data(), limit, FI_REMOTE_READ, 0, 1, 0, &mr, nullptr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, RegattrFields) {
    iovec iov{buf_.data(), 4096};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_WRITE;
    attr.requested_key = 11;
    int ctx = 0;
    attr.context = &ctx;
    attr.page_size = static_cast<size_t>(getpagesize());
    attr.sub_mr_cnt = 4;  // a hint
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), 0);
    EXPECT_EQ(mr->fid.context, &ctx);
    EXPECT_EQ(fi_mr_key(mr), 11u);
    EXPECT_EQ(fi_close(&mr->fid), 0);

    attr.requested_key = 12;
    attr.page_size = 12345;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL) << "not a page size of this OS";
    attr.page_size = 0;
    int data = 0;
    attr.hmem_data = &data;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL) << "hmem_data is reserved";
    attr.hmem_data = nullptr;
    attr.iface = FI_HMEM_CUDA;  // ignored without FI_HMEM, as the page says
    ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, ClassicAuthKeys) {
    iovec iov{buf_.data(), 4096};
    uint8_t key[16] = {1, 2, 3};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_READ;
    attr.requested_key = 3;
    attr.auth_key = key;
    attr.auth_key_size = sizeof key;
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    attr.auth_key_size = 65;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL);
    attr.auth_key_size = 8;
    attr.auth_key = nullptr;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL);
}

// ---- raw keys --------------------------------------------------------------------------------

TEST_F(MrApi, RawAttrSizeQueryAndRoundTrip) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 8192, 21, &mr), 0);
    uint64_t base = 1;
    size_t size = 0;
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, nullptr, &size, 0), -FI_ETOOSMALL);
    ASSERT_GT(size, 8u);
    std::vector<uint8_t> raw(size - 1);
    size_t small = raw.size();
    EXPECT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &small, 0), -FI_ETOOSMALL);
    EXPECT_EQ(small, size);
    raw.resize(size + 10);
    size_t big = raw.size();
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &big, 0), 0);
    EXPECT_EQ(big, size) << "key_size is set to the key's size";
    EXPECT_EQ(base, 0u) << "offset addressing: peers start at 0";
    EXPECT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &big, 1), -FI_EBADFLAGS);

    uint64_t mapped = 0;
    ASSERT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, &mapped, 0), 0);
    EXPECT_NE(mapped, fi_mr_key(mr));
    uint64_t mapped2 = 0;
    ASSERT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, &mapped2, 0), 0);
    EXPECT_NE(mapped, mapped2);
    EXPECT_EQ(fi_mr_unmap_key(domain_, mapped), 0);
    EXPECT_EQ(fi_mr_unmap_key(domain_, mapped), -FI_EINVAL) << "already unmapped";
    EXPECT_EQ(fi_mr_unmap_key(domain_, mapped2), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, MapRawValidates) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 8192, 22, &mr), 0);
    uint64_t base = 0;
    size_t size = 512;
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    uint64_t key = 0;
    EXPECT_EQ(fi_mr_map_raw(domain_, base + 8, raw.data(), size, &key, 0), -FI_EINVAL)
        << "wrong base_addr";
    EXPECT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size - 1, &key, 0), -FI_EINVAL)
        << "truncated";
    EXPECT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, &key, 2), -FI_EBADFLAGS);
    EXPECT_EQ(fi_mr_map_raw(domain_, base, nullptr, size, &key, 0), -FI_EINVAL);
    EXPECT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, nullptr, 0), -FI_EINVAL);
    for (size_t i = 0; i < size; ++i) {
        std::vector<uint8_t> bad(raw.begin(), raw.begin() + static_cast<long>(size));
        bad[i] ^= 0x40;
        EXPECT_EQ(fi_mr_map_raw(domain_, base, bad.data(), size, &key, 0), -FI_EINVAL)
            << "byte " << i;
    }
    EXPECT_EQ(fi_mr_unmap_key(domain_, 12345), -FI_EINVAL) << "never mapped";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApiBasic, RawAttrUnderVirtAddr) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data() + 16, 4096, 0, &mr), 0);
    uint64_t base = 0;
    size_t size = 1024;
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    EXPECT_EQ(base, reinterpret_cast<uint64_t>(buf_.data() + 16));
    uint64_t key = 0;
    ASSERT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, &key, 0), 0);
    EXPECT_EQ(fi_mr_map_raw(domain_, 0, raw.data(), size, &key, 0), -FI_EINVAL);
    EXPECT_EQ(fi_mr_unmap_key(domain_, key), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, MappedKeysLeftAtDomainCloseAreReleased) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 128, 23, &mr), 0);
    uint64_t base = 0;
    size_t size = 1024;
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    uint64_t key = 0;
    ASSERT_EQ(fi_mr_map_raw(domain_, base, raw.data(), size, &key, 0), 0)
        << "a key outlives its MR";
    // TearDown closes the domain with the key mapped: released, no leak (ASan checks).
}

// ---- sub-MRs, close order ----------------------------------------------------------------------

TEST_F(MrApi, SubMrKeepsBaseOpen) {
    fid_mr *base = nullptr, *sub = nullptr, *subsub = nullptr;
    ASSERT_EQ(reg(buf_.data(), 16384, 30, &base, 0, FI_REMOTE_READ), 0);
    iovec iov{buf_.data() + 4096, 4096};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_WRITE;  // its own rights
    attr.requested_key = 31;
    attr.base_mr = base;
    ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &sub), 0);
    EXPECT_EQ(fi_mr_key(sub), 31u);
    iovec iov2{buf_.data() + 4096, 100};
    attr.mr_iov = &iov2;
    attr.requested_key = 32;
    attr.base_mr = sub;
    ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &subsub), 0) << "a sub-MR of a sub-MR";

    EXPECT_EQ(fi_close(&base->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&sub->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&subsub->fid), 0);
    EXPECT_EQ(fi_close(&base->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&sub->fid), 0);
    EXPECT_EQ(fi_close(&base->fid), 0);
}

TEST_F(MrApi, SubMrMustBeInsideItsBase) {
    fid_mr *base = nullptr, *sub = nullptr;
    ASSERT_EQ(reg(buf_.data() + 4096, 4096, 33, &base), 0);
    iovec iov{buf_.data() + 4000, 200};  // starts before the base
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_READ;
    attr.requested_key = 34;
    attr.base_mr = base;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &sub), -FI_EINVAL);
    iov = {buf_.data() + 8000, 200};  // runs past its end
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &sub), -FI_EINVAL);
    fid_mr fake{};
    fake.fid.fclass = FI_CLASS_CQ;
    attr.base_mr = &fake;
    iov = {buf_.data() + 4096, 16};
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &sub), -FI_EINVAL) << "not an MR";
    EXPECT_EQ(fi_close(&base->fid), 0);
}

TEST_F(MrApi, SubMrOfAnotherDomainIsInvalid) {
    fid_domain *other = nullptr;
    ASSERT_EQ(fi_domain(fabric_, info_, &other, nullptr), 0);
    fid_mr *base = nullptr, *sub = nullptr;
    ASSERT_EQ(fi_mr_reg(other, buf_.data(), 4096, FI_REMOTE_READ, 0, 1, 0, &base, nullptr), 0);
    iovec iov{buf_.data(), 16};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.requested_key = 2;
    attr.base_mr = base;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &sub), -FI_EINVAL);
    EXPECT_EQ(fi_close(&base->fid), 0);
    EXPECT_EQ(fi_close(&other->fid), 0);
}

TEST_F(MrApi, DomainCloseWaitsForMrs) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 64, 40, &mr), 0);
    EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

// ---- bind, enable, refresh, control ---------------------------------------------------------

TEST_F(MrApi, BindRefusals) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 64, 50, &mr), 0);
    EXPECT_EQ(fi_mr_bind(mr, nullptr, 0), -FI_EINVAL);
    fid fake{};
    fake.fclass = FI_CLASS_CQ;
    EXPECT_EQ(fi_mr_bind(mr, &fake, FI_REMOTE_WRITE), -FI_ENOSYS) << "MR events go to counters";
    fake.fclass = FI_CLASS_AV;
    EXPECT_EQ(fi_mr_bind(mr, &fake, 0), -FI_EINVAL);
    fake.fclass = FI_CLASS_EP;
    EXPECT_EQ(fi_mr_bind(mr, &fake, 0), -FI_EINVAL) << "no FI_MR_ENDPOINT: MRs are domain-wide";
    // Something that claims to be a counter but is not ufi's (room enough for the check).
    alignas(64) static unsigned char not_a_counter[4096];
    std::memset(not_a_counter, 0, sizeof not_a_counter);
    reinterpret_cast<fid *>(not_a_counter)->fclass = FI_CLASS_CNTR;
    EXPECT_EQ(fi_mr_bind(mr, reinterpret_cast<fid *>(not_a_counter), FI_REMOTE_WRITE), -FI_EINVAL)
        << "not a ufi counter";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, BindCounter) {
    fid_cntr *cntr = nullptr;
    fi_cntr_attr cattr{};
    cattr.events = FI_CNTR_EVENTS_COMP;
    ASSERT_EQ(fi_cntr_open(domain_, &cattr, &cntr, nullptr), 0);
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 64, 51, &mr), 0);
    EXPECT_EQ(fi_mr_bind(mr, &cntr->fid, 0), -FI_EINVAL) << "no event named";
    EXPECT_EQ(fi_mr_bind(mr, &cntr->fid, FI_SEND), -FI_EBADFLAGS);
    EXPECT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), 0);
    EXPECT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_READ), 0) << "adds to the binding";
    EXPECT_EQ(fi_close(&cntr->fid), -FI_EBUSY) << "bound to an MR";
    EXPECT_EQ(fi_close(&mr->fid), 0);
    EXPECT_EQ(fi_close(&cntr->fid), 0);
}

TEST_F(MrApi, EnableIsANoOpOnEnabledMrs) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 64, 52, &mr), 0);
    EXPECT_EQ(fi_mr_enable(mr), 0);
    EXPECT_EQ(fi_mr_enable(mr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, Refresh) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 8192, 53, &mr), 0);
    EXPECT_EQ(fi_mr_refresh(mr, nullptr, 0, 0), 0) << "the whole region";
    iovec in{buf_.data() + 100, 200};
    EXPECT_EQ(fi_mr_refresh(mr, &in, 1, 0), 0);
    iovec out{buf_.data() + 8000, 400};
    EXPECT_EQ(fi_mr_refresh(mr, &out, 1, 0), -FI_EINVAL) << "not inside the region";
    EXPECT_EQ(fi_mr_refresh(mr, nullptr, 1, 0), -FI_EINVAL);
    EXPECT_EQ(fi_mr_refresh(mr, &in, 1, 1), -FI_EBADFLAGS);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

// fi_mr_refresh names at most mr_iov_limit buffers, as fi_mr_regv/regattr: more is -FI_EINVAL
// before any entry is read (a huge count over a one-entry array stays inside the array).
TEST_F(MrApi, RefreshIovCountIsBounded) {
    const size_t limit = info_->domain_attr->mr_iov_limit;
    ASSERT_GE(limit, 1u);
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 8192, 55, &mr), 0);
    std::vector<iovec> iov(limit + 1, iovec{buf_.data() + 64, 64});
    EXPECT_EQ(fi_mr_refresh(mr, iov.data(), limit, 0), 0) << "mr_iov_limit entries are fine";
    EXPECT_EQ(fi_mr_refresh(mr, iov.data(), limit + 1, 0), -FI_EINVAL);
    iovec one{buf_.data() + 64, 64};
    EXPECT_EQ(fi_mr_refresh(mr, &one, SIZE_MAX, 0), -FI_EINVAL);
    EXPECT_EQ(fi_mr_refresh(mr, &one, size_t{1} << 32, 0), -FI_EINVAL);
    EXPECT_EQ(fi_mr_refresh(mr, nullptr, limit + 1, 0), -FI_EINVAL) << "NULL iov with a count";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, XpuDescWithoutXpuSupport) {
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(buf_.data(), 64, 54, &mr), 0);
    size_t len = 0;
    EXPECT_EQ(fi_mr_get_xpu_desc(mr, nullptr, &len, 0, nullptr), -FI_ETOOSMALL);
    EXPECT_EQ(len, sizeof(void *));
    void *desc = nullptr;
    len = sizeof desc;
    ASSERT_EQ(fi_mr_get_xpu_desc(mr, &desc, &len, 0, nullptr), 0);
    EXPECT_EQ(desc, fi_mr_desc(mr)) << "the host descriptor";
    EXPECT_EQ(fi_mr_get_xpu_desc(mr, &desc, &len, FI_XPU, nullptr), -FI_EINVAL)
        << "no XPU contexts";
    EXPECT_EQ(fi_mr_get_xpu_desc(mr, &desc, &len, 0, reinterpret_cast<fid_xpu_ctx *>(&len)),
              -FI_EINVAL);
    EXPECT_EQ(fi_mr_get_xpu_desc(mr, &desc, &len, 1, nullptr), -FI_EBADFLAGS);
    EXPECT_EQ(fi_mr_get_xpu_desc(mr, &desc, nullptr, 0, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_control(&mr->fid, FI_BACKLOG, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrApi, RegistrationEventOnBoundEq) {
    fid_eq *eq = nullptr;
    fi_eq_attr eattr{};
    eattr.size = 8;
    ASSERT_EQ(fi_eq_open(fabric_, &eattr, &eq, nullptr), 0);
    ASSERT_EQ(fi_domain_bind(domain_, &eq->fid, FI_REG_MR), 0);
    fid_mr *mr = nullptr;
    int ctx = 0;
    ASSERT_EQ(fi_mr_reg(domain_, buf_.data(), 64, FI_REMOTE_READ, 0, 60, 0, &mr, &ctx), 0);
    uint32_t event = 0;
    fi_eq_entry entry{};
    ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(event, static_cast<uint32_t>(FI_MR_COMPLETE));
    EXPECT_EQ(entry.fid, &mr->fid);
    EXPECT_EQ(entry.context, &ctx);
    fid_mr *dup = nullptr;
    EXPECT_EQ(fi_mr_reg(domain_, buf_.data(), 64, FI_REMOTE_READ, 0, 60, 0, &dup, &ctx),
              -FI_ENOKEY);
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), -FI_EAGAIN)
        << "no event for a failed registration";
    EXPECT_EQ(fi_close(&mr->fid), 0);
    EXPECT_EQ(fi_close(&domain_->fid), 0);
    domain_ = nullptr;
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

// An EQ bound without FI_REG_MR (for other domain events) receives no registration events.
TEST_F(MrApi, NoRegistrationEventWithoutFiRegMr) {
    fid_eq *eq = nullptr;
    fi_eq_attr eattr{};
    eattr.size = 2;
    ASSERT_EQ(fi_eq_open(fabric_, &eattr, &eq, nullptr), 0);
    ASSERT_EQ(fi_domain_bind(domain_, &eq->fid, 0), 0);
    fid_mr *mrs[4] = {};
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(fi_mr_reg(domain_, buf_.data() + 64 * i, 64, FI_REMOTE_READ, 0, 70 + i, 0, &mrs[i], nullptr), 0);
    }
    uint32_t event = 0;
    fi_eq_entry entry{};
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), -FI_EAGAIN);
    for (fid_mr *m : mrs) EXPECT_EQ(fi_close(&m->fid), 0);
    EXPECT_EQ(fi_close(&domain_->fid), 0);
    domain_ = nullptr;
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

}  // namespace

namespace {

// fi_mr(3)'s requested-key rules hold for every region, local-only ones (no FI_REMOTE_READ or
// FI_REMOTE_WRITE) too: a key in use is -FI_ENOKEY, FI_KEY_NOTAVAIL is -FI_EKEYREJECTED, so
// fi_mr_key never returns a duplicate or FI_KEY_NOTAVAIL. Keys with the top bit set are keys
// like any other (MPICH's window keys have it). (ufi once left local regions out of the key
// table.)
class MrLocalKeys : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, &info_), 0);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
        ASSERT_FALSE(info_->domain_attr->mr_mode & FI_MR_PROV_KEY) << "requested keys";
    }
    void TearDown() override {
        EXPECT_EQ(fi_close(&domain_->fid), 0);
        EXPECT_EQ(fi_close(&fabric_->fid), 0);
        fi_freeinfo(info_);
    }
    int reg_local(size_t at, uint64_t key, fid_mr **mr) {
        return fi_mr_reg(domain_, buf_ + at, 512, FI_SEND | FI_RECV, 0, key, 0, mr, nullptr);
    }
    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    char buf_[4096] = {};
};

TEST_F(MrLocalKeys, DuplicateKeysAreRefused) {
    fid_mr *a = nullptr, *b = nullptr, *r = nullptr;
    ASSERT_EQ(reg_local(0, 0, &a), 0);
    EXPECT_EQ(fi_mr_key(a), 0u);
    EXPECT_EQ(reg_local(512, 0, &b), -FI_ENOKEY) << "two local regions, one key";
    EXPECT_EQ(fi_mr_reg(domain_, buf_ + 1024, 512, FI_REMOTE_WRITE, 0, 0, 0, &r, nullptr),
              -FI_ENOKEY)
        << "a remote region cannot take a local region's key";
    ASSERT_EQ(fi_mr_reg(domain_, buf_ + 1024, 512, FI_REMOTE_WRITE, 0, 1, 0, &r, nullptr), 0);
    EXPECT_EQ(reg_local(512, 1, &b), -FI_ENOKEY) << "nor a local region a remote region's key";
    EXPECT_EQ(fi_close(&a->fid), 0);
    ASSERT_EQ(reg_local(512, 0, &b), 0) << "free again once its region closed";
    EXPECT_EQ(fi_mr_key(b), 0u);
    EXPECT_EQ(fi_close(&b->fid), 0);
    EXPECT_EQ(fi_close(&r->fid), 0);
}

TEST_F(MrLocalKeys, OutOfRangeKeysAreRejected) {
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg_local(0, FI_KEY_NOTAVAIL, &mr), -FI_EKEYREJECTED);
    const iovec iov{buf_, 512};
    EXPECT_EQ(fi_mr_regv(domain_, &iov, 1, FI_READ, 0, FI_KEY_NOTAVAIL, 0, &mr, nullptr),
              -FI_EKEYREJECTED);
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_WRITE;
    attr.requested_key = FI_KEY_NOTAVAIL;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EKEYREJECTED);
    fid_mr *top = nullptr, *dup = nullptr;
    ASSERT_EQ(reg_local(0, (uint64_t{1} << 63) | 5, &top), 0) << "the top bit is allowed";
    EXPECT_EQ(fi_mr_key(top), (uint64_t{1} << 63) | 5);
    EXPECT_EQ(reg_local(512, (uint64_t{1} << 63) | 5, &dup), -FI_ENOKEY);
    EXPECT_EQ(fi_close(&top->fid), 0);
    EXPECT_EQ(mr, nullptr);
    ASSERT_EQ(reg_local(0, FI_KEY_NOTAVAIL - 1, &mr), 0) << "the largest key";
    EXPECT_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL - 1);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

}  // namespace
