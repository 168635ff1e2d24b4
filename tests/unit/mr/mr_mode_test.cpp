// Every mr_mode bit's behaviour, on domains given that mode directly (white-box: fi_getinfo
// keeps only VIRT_ADDR, ALLOCATED, PROV_KEY and, with FI_RMA_EVENT, RMA_EVENT).
#include "mr_fixture.h"

#include "runtime/mr/binding.h"
#include "runtime/mr/mr.h"
#include "runtime/c_enum.h"
#include "runtime/mr/mr_mode_policy.h"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <sys/mman.h>
#include <unistd.h>

namespace ufi::test {
namespace {

using runtime::mr::KeyCheck;

class MrMode : public MrFixture {
  protected:
    int reg(fid_domain *d, void *buf, size_t len, uint64_t key, fid_mr **mr, uint64_t flags = 0,
            uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE) {
        return fi_mr_reg(d, buf, len, access, 0, key, flags, mr, nullptr);
    }
    KeyCheck check(fid_domain *d, uint64_t key, uint64_t addr, size_t len,
                   uint64_t access = FI_REMOTE_READ) {
        return runtime::mr::check_remote_access(runtime_domain(d), key, addr, len, access, false,
                                                nullptr);
    }
    std::vector<char> buf_ = std::vector<char>(64 * 1024);
};

TEST(MrModePolicy, ExpandsLegacyValues) {
    using runtime::mr::mr_mode_policy;
    const auto basic = mr_mode_policy(FI_MR_BASIC);
    EXPECT_TRUE(basic.virt_addr);
    EXPECT_TRUE(basic.allocated);
    EXPECT_TRUE(basic.provider_keys);
    EXPECT_FALSE(basic.local_desc_required);
    EXPECT_EQ(basic.bits,
              static_cast<uint64_t>(FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY));
    EXPECT_EQ(mr_mode_policy(FI_MR_SCALABLE).bits, 0u);
    EXPECT_EQ(mr_mode_policy(FI_MR_UNSPEC).bits, 0u);
    const auto all = mr_mode_policy(FI_MR_LOCAL | FI_MR_RAW | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |
                                    FI_MR_ENDPOINT | FI_MR_HMEM | FI_MR_COLLECTIVE);
    EXPECT_TRUE(all.local_desc_required && all.raw_keys && all.mmu_notify && all.rma_event &&
                all.endpoint && all.hmem && all.collective);
    EXPECT_FALSE(all.virt_addr || all.allocated || all.provider_keys);
}

TEST_F(MrMode, BasicMeansProviderKeysAndVirtualAddresses) {
    fid_domain *d = open_domain(FI_MR_BASIC);
    fid_mr *a = nullptr, *b = nullptr;
    ASSERT_EQ(reg(d, buf_.data(), 1024, 9, &a), 0);
    ASSERT_EQ(reg(d, buf_.data() + 1024, 1024, 9, &b), 0);
    EXPECT_NE(fi_mr_key(a), fi_mr_key(b));
    const auto va = reinterpret_cast<uint64_t>(buf_.data());
    EXPECT_EQ(check(d, fi_mr_key(a), va + 10, 100), KeyCheck::Ok);
    EXPECT_EQ(check(d, fi_mr_key(a), 10, 100), KeyCheck::OutOfBounds)
        << "an offset is not an address here";
    EXPECT_EQ(fi_close(&a->fid), 0);
    EXPECT_EQ(fi_close(&b->fid), 0);
}

// Open MRs keep fi_close(domain) at -FI_EBUSY under either kind of key (the domain counts
// them through its key table), and it closes once they are gone (TearDown).
TEST_F(MrMode, DomainCloseWaitsForMrsUnderEitherKind) {
    for (int mode : {FI_MR_BASIC, FI_MR_SCALABLE}) {
        fid_domain *d = open_domain(mode);
        fid_mr *a = nullptr, *b = nullptr;
        ASSERT_EQ(reg(d, buf_.data(), 1024, 5, &a), 0) << mode;
        ASSERT_EQ(reg(d, buf_.data() + 1024, 1024, 6, &b), 0) << mode;
        EXPECT_EQ(fi_close(&d->fid), -FI_EBUSY) << mode;
        EXPECT_EQ(fi_close(&a->fid), 0);
        EXPECT_EQ(fi_close(&d->fid), -FI_EBUSY) << mode << ": one left";
        // A failed registration leaves nothing counted.
        fid_mr *c = nullptr;
        EXPECT_EQ(reg(d, buf_.data(), 0, 7, &c), -FI_EINVAL);
        EXPECT_EQ(fi_close(&b->fid), 0);
    }  // TearDown closes both domains: nothing is counted open any more
}

TEST_F(MrMode, ScalableMeansUserKeysAndOffsets) {
    fid_domain *d = open_domain(FI_MR_SCALABLE);
    fid_mr *a = nullptr;
    ASSERT_EQ(reg(d, buf_.data() + 64, 1024, 1234, &a), 0);
    EXPECT_EQ(fi_mr_key(a), 1234u);
    EXPECT_EQ(check(d, 1234, 0, 1024), KeyCheck::Ok);
    EXPECT_EQ(check(d, 1234, 1000, 25), KeyCheck::OutOfBounds);
    runtime::mr::RemoteTarget t;
    ASSERT_EQ(runtime::mr::check_remote_access(runtime_domain(d), 1234, 100, 8, FI_REMOTE_READ,
                                               false, &t),
              KeyCheck::Ok);
    EXPECT_EQ(t.local_addr, reinterpret_cast<uintptr_t>(buf_.data() + 164));
    EXPECT_EQ(fi_close(&a->fid), 0);
}

TEST_F(MrMode, RawKeysHideTheKey) {
    fid_domain *d = open_domain(FI_MR_RAW | FI_MR_PROV_KEY);
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(d, buf_.data(), 1024, 0, &mr), 0);
    EXPECT_EQ(fi_mr_key(mr), FI_KEY_NOTAVAIL) << "the page: use fi_mr_raw_attr";
    uint64_t base = 0, key = 0;
    size_t size = 1024;
    std::vector<uint8_t> raw(size);
    ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
    ASSERT_EQ(fi_mr_map_raw(d, base, raw.data(), size, &key, 0), 0);
    const auto *mapped = runtime::mr::find_mapped_key(runtime_domain(d), key);
    ASSERT_NE(mapped, nullptr);
    EXPECT_EQ(check(d, mapped->bundle.key, 0, 1024), KeyCheck::Ok)
        << "the bundle carries the table key";
    EXPECT_EQ(fi_mr_unmap_key(d, key), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrMode, AllocatedChecksTheMappingOthersDoNot) {
    const size_t page = static_cast<size_t>(getpagesize());
    char *p =
        static_cast<char *>(mmap(nullptr, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    ASSERT_EQ(munmap(p, 2 * page), 0);  // a range that is certainly not mapped now
    fid_domain *alloc = open_domain(FI_MR_ALLOCATED);
    fid_domain *lazy = open_domain(0);
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg(alloc, p, 2 * page, 1, &mr), -FI_EFAULT);
    ASSERT_EQ(reg(lazy, p, 2 * page, 1, &mr), 0)
        << "without FI_MR_ALLOCATED any address range registers";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

// NULL starts a registration of the address space (docs/memory-keys.md): refused where
// FI_MR_ALLOCATED asks for allocated memory and in shapes that cannot mean it (several
// buffers, a sub-MR); elsewhere it pins nothing, and each access is checked against what the
// process maps at that moment and how (read, write), under both addressings.
TEST_F(MrMode, NullRegistersTheAddressSpaceCheckedPerAccess) {
    const size_t page = static_cast<size_t>(getpagesize());
    fid_mr *mr = nullptr;
    EXPECT_EQ(reg(open_domain(FI_MR_ALLOCATED), nullptr, UINTPTR_MAX, 1, &mr), -FI_EFAULT);
    for (int mode : {0, int(FI_MR_VIRT_ADDR)}) {
        SCOPED_TRACE(mode ? "virtual addresses" : "offsets");
        fid_domain *d = open_domain(mode);
        iovec two[2] = {{nullptr, 64}, {buf_.data(), 64}};
        EXPECT_EQ(fi_mr_regv(d, two, 2, FI_REMOTE_WRITE, 0, 2, 0, &mr, nullptr), -FI_EINVAL);
        ASSERT_EQ(reg(d, nullptr, UINTPTR_MAX, 3, &mr), 0);
        // A read-only page, one without access, a hole (made last: a mapping could land in it).
        auto *ro = static_cast<char *>(
            mmap(nullptr, 3 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        ASSERT_NE(ro, MAP_FAILED);
        char *none = ro + page, *hole = ro + 2 * page;
        ASSERT_EQ(mprotect(none, page, PROT_NONE), 0);
        ASSERT_EQ(munmap(hole, page), 0);
        const auto at = [](const void *p) { return reinterpret_cast<uint64_t>(p); };
        const uint64_t rw = FI_REMOTE_READ | FI_REMOTE_WRITE;
        EXPECT_EQ(check(d, 3, at(buf_.data()), buf_.size(), rw), KeyCheck::Ok);
        EXPECT_EQ(check(d, 3, at(ro), page, FI_REMOTE_READ), KeyCheck::Ok);
        EXPECT_EQ(check(d, 3, at(ro), 8, FI_REMOTE_WRITE), KeyCheck::NotMapped);
        EXPECT_EQ(check(d, 3, at(ro), 8, rw), KeyCheck::NotMapped) << "a fetching atomic";
        EXPECT_EQ(check(d, 3, at(none), 8, FI_REMOTE_READ), KeyCheck::NotMapped);
        EXPECT_EQ(check(d, 3, at(ro) + page - 4, 8, FI_REMOTE_READ), KeyCheck::NotMapped)
            << "across into a page without access";
        ASSERT_NE(msync(hole, page, MS_ASYNC), 0) << "the hole is still a hole";
        EXPECT_EQ(check(d, 3, at(hole), 1, FI_REMOTE_READ), KeyCheck::NotMapped);
        EXPECT_EQ(check(d, 3, 0, 8, FI_REMOTE_READ), KeyCheck::NotMapped) << "page 0";
        EXPECT_EQ(check(d, 3, UINTPTR_MAX - 8, 8, FI_REMOTE_READ), KeyCheck::NotMapped);
        EXPECT_EQ(check(d, 3, UINTPTR_MAX - 8, 9, FI_REMOTE_READ), KeyCheck::OutOfBounds);
        EXPECT_EQ(check(d, 3, at(buf_.data()), 0, FI_REMOTE_WRITE), KeyCheck::Ok);
        // A sub-MR starts at an address, never at NULL; inside the base it is checked the same.
        fid_mr *sub = nullptr;
        iovec sub_iov{nullptr, 64};
        fi_mr_attr attr{};
        attr.mr_iov = &sub_iov;
        attr.iov_count = 1;
        attr.access = FI_REMOTE_READ;
        attr.requested_key = 4;
        attr.base_mr = mr;
        EXPECT_EQ(fi_mr_regattr(d, &attr, 0, &sub), -FI_EINVAL);
        sub_iov = {ro, 2 * page};
        ASSERT_EQ(fi_mr_regattr(d, &attr, 0, &sub), 0);
        const uint64_t sub_at = mode ? at(ro) : 0;
        EXPECT_EQ(check(d, 4, sub_at, page, FI_REMOTE_READ), KeyCheck::Ok);
        EXPECT_EQ(check(d, 4, sub_at + page, 8, FI_REMOTE_READ), KeyCheck::NotMapped);
        EXPECT_EQ(fi_close(&sub->fid), 0);
        EXPECT_EQ(munmap(ro, 2 * page), 0);
        EXPECT_EQ(fi_mr_refresh(mr, nullptr, 0, 0), 0) << "nothing pinned, nothing to renew";
        EXPECT_EQ(check(d, 3, at(buf_.data()), 64, rw), KeyCheck::Ok);
        EXPECT_EQ(fi_close(&mr->fid), 0);
        ASSERT_EQ(reg(d, nullptr, page, 5, &mr), 0) << "any length from NULL";
        EXPECT_EQ(check(d, 5, at(buf_.data()), 8, FI_REMOTE_READ), KeyCheck::OutOfBounds);
        EXPECT_EQ(fi_close(&mr->fid), 0);
    }
}

TEST_F(MrMode, RmaEventMrsStartDisabled) {
    fid_domain *d = open_domain(FI_MR_RMA_EVENT);
    fid_mr *ev = nullptr, *plain = nullptr;
    ASSERT_EQ(reg(d, buf_.data(), 1024, 1, &ev, FI_RMA_EVENT), 0);
    ASSERT_EQ(reg(d, buf_.data() + 1024, 1024, 2, &plain), 0);
    EXPECT_EQ(check(d, 1, 0, 8), KeyCheck::Disabled);
    EXPECT_EQ(check(d, 2, 0, 8), KeyCheck::Ok)
        << "only FI_RMA_EVENT registrations wait for fi_mr_enable";
    std::vector<uint8_t> reply;
    EXPECT_EQ(runtime::mr::build_key_reply(runtime_domain(d), 1, reply), -FI_EACCES);

    fid_cntr *cntr = nullptr;
    fi_cntr_attr cattr{};
    cattr.events = FI_CNTR_EVENTS_COMP;
    const bool have_cntr = fi_cntr_open(d, &cattr, &cntr, nullptr) == 0;
    if (have_cntr) {
        EXPECT_EQ(fi_mr_bind(plain, &cntr->fid, FI_REMOTE_WRITE), -FI_EINVAL)
            << "registered without FI_RMA_EVENT";
        EXPECT_EQ(fi_mr_bind(ev, &cntr->fid, FI_REMOTE_WRITE), 0);
    }
    EXPECT_EQ(fi_mr_enable(ev), 0);
    EXPECT_EQ(check(d, 1, 0, 8), KeyCheck::Ok);
    EXPECT_EQ(runtime::mr::build_key_reply(runtime_domain(d), 1, reply), 0);
    if (have_cntr) {
        EXPECT_EQ(fi_mr_bind(ev, &cntr->fid, FI_REMOTE_READ), -FI_EINVAL)
            << "no bindings after fi_mr_enable";
        uint64_t before = fi_cntr_read(cntr);
        runtime::cntr::AccessTally write, read;
        runtime::mr::count_remote_access(runtime_domain(d), 1, FI_REMOTE_WRITE, 64, write);
        runtime::mr::count_remote_access(runtime_domain(d), 1, FI_REMOTE_READ, 64,
                                         read);  // not bound for reads
        EXPECT_EQ(fi_cntr_read(cntr), before + 1);
        // The same access reaching the counter again (a second segment on this MR) counts
        // nothing more.
        runtime::mr::count_remote_access(runtime_domain(d), 1, FI_REMOTE_WRITE, 64, write);
        EXPECT_EQ(fi_cntr_read(cntr), before + 1);
    }
    EXPECT_EQ(fi_close(&ev->fid), 0);
    EXPECT_EQ(fi_close(&plain->fid), 0);
    if (have_cntr) {
        EXPECT_EQ(fi_close(&cntr->fid), 0);
    }
}

TEST_F(MrMode, EndpointMrsNeedAnEndpointThenEnable) {
    fid_domain *d = open_domain(FI_MR_ENDPOINT);
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(d, buf_.data(), 1024, 1, &mr), 0);
    EXPECT_EQ(check(d, 1, 0, 8), KeyCheck::Disabled);
    EXPECT_EQ(fi_mr_enable(mr), -FI_EINVAL) << "not bound to an endpoint yet";
    fid fake{};
    fake.fclass = FI_CLASS_EP;
    EXPECT_EQ(fi_mr_bind(mr, &fake, 1), -FI_EBADFLAGS) << "an endpoint binding takes flags 0";

    fid_ep *ep = nullptr;
    ASSERT_EQ(fi_endpoint(d, info_, &ep, nullptr), 0);
    ASSERT_EQ(fi_mr_bind(mr, &ep->fid, 0), 0);
    EXPECT_EQ(fi_mr_bind(mr, &ep->fid, 0), -FI_EINVAL) << "one endpoint per MR";
    EXPECT_EQ(fi_close(&ep->fid), -FI_EBUSY) << "the MR must be closed before its endpoint";
    EXPECT_EQ(fi_mr_enable(mr), 0);
    EXPECT_EQ(check(d, 1, 0, 8), KeyCheck::Ok);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    EXPECT_EQ(fi_close(&ep->fid), 0);
}

TEST_F(MrMode, LocalRequiresDescriptorsWithAccess) {
    fid_domain *d = open_domain(FI_MR_LOCAL);
    runtime::Domain *rd = runtime_domain(d);
    EXPECT_TRUE(runtime::mr::local_desc_required(rd));
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(d, buf_.data(), 1024, 1, &mr, 0, FI_SEND), 0);
    runtime::mr::Mr *m = runtime::mr::mr_of_desc(fi_mr_desc(mr));
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(runtime::mr::check_local(rd, m, buf_.data() + 10, 100, FI_SEND), 0);
    EXPECT_EQ(runtime::mr::check_local(rd, m, buf_.data() + 10, 100, FI_RECV), -FI_EACCES);
    EXPECT_EQ(runtime::mr::check_local(rd, m, buf_.data() + 1000, 100, FI_SEND), -FI_EINVAL);
    runtime::mr::MrDesc forged;
    forged.magic = 1;
    EXPECT_EQ(runtime::mr::mr_of_desc(&forged), nullptr);
    EXPECT_EQ(runtime::mr::mr_of_desc(nullptr), nullptr);
    EXPECT_EQ(fi_close(&mr->fid), 0);

    fid_domain *relaxed = open_domain(0);
    EXPECT_FALSE(runtime::mr::local_desc_required(runtime_domain(relaxed)));
    ASSERT_EQ(reg(relaxed, buf_.data(), 1024, 1, &mr, 0, FI_SEND), 0);
    m = runtime::mr::mr_of_desc(fi_mr_desc(mr));
    EXPECT_EQ(runtime::mr::check_local(runtime_domain(relaxed), m, buf_.data(), 10, FI_RECV), 0)
        << "without FI_MR_LOCAL a desc's access bits are not enforced";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrMode, MmuNotifyRefreshKeepsTheRegionUsable) {
    fid_domain *d = open_domain(FI_MR_MMU_NOTIFY);
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(d, buf_.data(), 8192, 1, &mr), 0);
    iovec iov{buf_.data() + 4096, 100};
    EXPECT_EQ(fi_mr_refresh(mr, &iov, 1, 0), 0);
    EXPECT_EQ(check(d, 1, 0, 8192), KeyCheck::Ok) << "enabled again after the refresh";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrMode, HmemInterfaces) {
    fid_domain *d = open_domain(FI_MR_HMEM, FI_HMEM);
    iovec iov{buf_.data(), 4096};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_READ;
    attr.requested_key = 1;
    fid_mr *mr = nullptr;
    attr.iface = FI_HMEM_CUDA;
    EXPECT_EQ(fi_mr_regattr(d, &attr, 0, &mr), -FI_ENOSYS)
        << "device memory arrives with the FI_HMEM issue";
    runtime::set_raw_enum(attr.iface, 99);
    EXPECT_EQ(fi_mr_regattr(d, &attr, 0, &mr), -FI_EINVAL);
    attr.iface = FI_HMEM_SYSTEM;
    EXPECT_EQ(fi_mr_regattr(d, &attr, FI_HMEM_DEVICE_ONLY, &mr), -FI_EINVAL)
        << "system memory is not device memory";
    attr.device.reserved = 77;  // ignored for system memory
    ASSERT_EQ(fi_mr_regattr(d, &attr, 0, &mr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);

    // DMA-buf: system memory is registered through its mapping.
    fi_mr_dmabuf dmabuf{5, 128, 1024, buf_.data()};
    attr.dmabuf = &dmabuf;
    attr.requested_key = 2;
    ASSERT_EQ(fi_mr_regattr(d, &attr, FI_MR_DMABUF, &mr), 0);
    EXPECT_EQ(check(d, 2, 0, 1024), KeyCheck::Ok);
    runtime::mr::RemoteTarget t;
    ASSERT_EQ(
        runtime::mr::check_remote_access(runtime_domain(d), 2, 0, 8, FI_REMOTE_READ, false, &t),
        KeyCheck::Ok);
    EXPECT_EQ(t.local_addr, reinterpret_cast<uintptr_t>(buf_.data() + 128)) << "base_addr + offset";
    dmabuf.base_addr = nullptr;
    fid_mr *unmapped = nullptr;
    attr.requested_key = 3;
    EXPECT_EQ(fi_mr_regattr(d, &attr, FI_MR_DMABUF, &unmapped), -FI_ENOSYS);
    dmabuf.base_addr = buf_.data();
    dmabuf.fd = -1;
    EXPECT_EQ(fi_mr_regattr(d, &attr, FI_MR_DMABUF, &unmapped), -FI_EINVAL);
    dmabuf.fd = 5;
    attr.base_mr = mr;
    EXPECT_EQ(fi_mr_regattr(d, &attr, FI_MR_DMABUF, &unmapped), -FI_EINVAL)
        << "no sub-MRs of DMA-bufs";
    EXPECT_EQ(fi_mr_reg(d, buf_.data(), 64, FI_REMOTE_READ, 0, 4, FI_MR_DMABUF, &unmapped, nullptr),
              -FI_EINVAL)
        << "DMA-bufs come through fi_mr_regattr";
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrMode, CollectiveAccessIsAccepted) {
    fid_domain *d = open_domain(FI_MR_COLLECTIVE);
    fid_mr *mr = nullptr;
    ASSERT_EQ(reg(d, buf_.data(), 1024, 1, &mr, 0, FI_COLLECTIVE | FI_SEND | FI_RECV), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(MrMode, RegvUpToUfisLimitUnderBothAddressings) {
    for (int mode : {0, FI_MR_VIRT_ADDR}) {
        fid_domain *d = open_domain(mode);
        std::vector<iovec> iov(runtime::mr::kMrIovLimit);
        for (size_t i = 0; i < iov.size(); ++i) iov[i] = {buf_.data() + i * 4096, 1000};
        fid_mr *mr = nullptr;
        ASSERT_EQ(fi_mr_regv(d, iov.data(), iov.size(), FI_REMOTE_WRITE, 0, 5, 0, &mr, nullptr), 0);
        const auto va = reinterpret_cast<uint64_t>(buf_.data());
        runtime::mr::RemoteTarget t;
        if (mode == 0) {
            // Offsets run over the segments as one region of 8000 bytes.
            ASSERT_EQ(runtime::mr::check_remote_access(runtime_domain(d), 5, 1500, 1000,
                                                       FI_REMOTE_WRITE, false, &t),
                      KeyCheck::Ok);
            EXPECT_EQ(t.segment, 1u);
            EXPECT_EQ(t.local_addr, va + 4096 + 500);
            EXPECT_EQ(t.contiguous, 500u) << "the rest is in the next segment";
            EXPECT_EQ(check(d, 5, 7999, 1, FI_REMOTE_WRITE), KeyCheck::Ok);
            EXPECT_EQ(check(d, 5, 7999, 2, FI_REMOTE_WRITE), KeyCheck::OutOfBounds);
        } else {
            EXPECT_EQ(check(d, 5, va + 4096 + 10, 900, FI_REMOTE_WRITE), KeyCheck::Ok);
            EXPECT_EQ(check(d, 5, va + 1000, 8, FI_REMOTE_WRITE), KeyCheck::OutOfBounds)
                << "a gap between buffers";
        }
        uint64_t base = 0, key = 0;
        size_t size = 4096;
        std::vector<uint8_t> raw(size);
        ASSERT_EQ(fi_mr_raw_attr(mr, &base, raw.data(), &size, 0), 0);
        ASSERT_EQ(fi_mr_map_raw(d, base, raw.data(), size, &key, 0), 0);
        const auto *mapped = runtime::mr::find_mapped_key(runtime_domain(d), key);
        ASSERT_NE(mapped, nullptr);
        EXPECT_EQ(mapped->bundle.segments.size(), iov.size());
        EXPECT_EQ(mapped->bundle.length, 8000u);
        EXPECT_EQ(fi_mr_unmap_key(d, key), 0);
        EXPECT_EQ(fi_close(&mr->fid), 0);
    }
}

// A caller built against libfabric 1.x passes a shorter fi_mr_attr: ufi reads no field its
// version lacks (the 2.x tail from 2.0, auth keys from 1.5).
TEST_F(MrMode, OlderCallersFieldsAreNotRead) {
    fid_domain *d = open_domain(0);
    runtime_domain(d)->api_version = FI_VERSION(1, 17);
    iovec iov{buf_.data(), 4096};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_READ;
    attr.requested_key = 1;
    int junk = 0;
    attr.hmem_data = &junk;  // beyond a 1.17 struct: never read
    attr.page_size = 3;
    fid_mr *mr = nullptr;
    ASSERT_EQ(fi_mr_regattr(d, &attr, 0, &mr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    runtime_domain(d)->api_version = FI_VERSION(1, 4);
    attr.auth_key_size = 1000;  // before 1.5: ignored
    ASSERT_EQ(fi_mr_regattr(d, &attr, 0, &mr), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
    runtime_domain(d)->api_version = FI_VERSION(2, 0);
    EXPECT_EQ(fi_mr_regattr(d, &attr, 0, &mr), -FI_EINVAL);
}

}  // namespace
}  // namespace ufi::test
