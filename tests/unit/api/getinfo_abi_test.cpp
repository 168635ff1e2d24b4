// fi_getinfo/fi_dupinfo/fi_freeinfo through the exported ABI of libufi.so: every symbol
// version exists, and the older ones read caller structs only up to their version's size.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace {

using getinfo_fn = int (*)(uint32_t, const char *, const char *, uint64_t, const fi_info *, fi_info **);
using dupinfo_fn = fi_info *(*)(const fi_info *);
using freeinfo_fn = void (*)(fi_info *);

template <typename Fn>
Fn versioned(const char *name, const char *version) {
    // RTLD_DEFAULT: libufi.so is linked into this test.
    return reinterpret_cast<Fn>(dlvsym(RTLD_DEFAULT, name, version));
}

// A struct of `size` bytes ending right before an inaccessible page: reading one byte past
// it faults.
class GuardedBlock {
public:
    explicit GuardedBlock(size_t size) : page_(sysconf(_SC_PAGESIZE)) {
        mem_ = static_cast<char *>(mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (mem_ == MAP_FAILED) return;
        mprotect(mem_ + page_, page_, PROT_NONE);
        ptr_ = mem_ + page_ - size;
        memset(ptr_, 0, size);
    }
    ~GuardedBlock() {
        if (mem_ != MAP_FAILED) munmap(mem_, 2 * page_);
    }
    template <typename T>
    T *as() { return reinterpret_cast<T *>(ptr_); }

private:
    long page_;
    char *mem_ = static_cast<char *>(MAP_FAILED);
    char *ptr_ = nullptr;
};

struct Version {
    const char *node;
    size_t domain_size;
    size_t ep_size;
};

const Version kVersions[] = {
    {"FABRIC_1.3", offsetof(fi_domain_attr, max_ep_auth_key), offsetof(fi_ep_attr, xpu_ctx)},
    {"FABRIC_1.7", offsetof(fi_domain_attr, max_group_id), offsetof(fi_ep_attr, xpu_ctx)},
    {"FABRIC_1.8", offsetof(fi_domain_attr, max_cntr_value), offsetof(fi_ep_attr, xpu_ctx)},
    {"FABRIC_1.9", offsetof(fi_domain_attr, max_xpu_ctx_cnt), offsetof(fi_ep_attr, xpu_ctx)},
    {"FABRIC_1.10", sizeof(fi_domain_attr), sizeof(fi_ep_attr)},
};

TEST(GetinfoAbi, EveryVersionReadsOnlyItsLayout) {
    for (const Version &v : kVersions) {
        SCOPED_TRACE(v.node);
        auto getinfo = versioned<getinfo_fn>("fi_getinfo", v.node);
        auto dupinfo = versioned<dupinfo_fn>("fi_dupinfo", v.node);
        auto freeinfo = versioned<freeinfo_fn>("fi_freeinfo", v.node);
        ASSERT_NE(getinfo, nullptr);
        ASSERT_NE(dupinfo, nullptr);
        ASSERT_NE(freeinfo, nullptr);

        GuardedBlock dom_block(v.domain_size), ep_block(v.ep_size);
        fi_info hints{};
        fi_tx_attr tx{};
        fi_rx_attr rx{};
        fi_fabric_attr fab{};
        char prov[] = "ufi";
        fab.prov_name = prov;
        hints.tx_attr = &tx;
        hints.rx_attr = &rx;
        hints.fabric_attr = &fab;
        hints.domain_attr = dom_block.as<fi_domain_attr>();
        hints.ep_attr = ep_block.as<fi_ep_attr>();
        hints.ep_attr->type = FI_EP_RDM;
        hints.domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR;

        fi_info *info = nullptr;
        const int rc = getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, &hints, &info);
        ASSERT_EQ(rc, 0) << fi_strerror(-rc);
        ASSERT_NE(info, nullptr);
        EXPECT_STREQ(info->fabric_attr->prov_name, "ufi");
        EXPECT_EQ(info->ep_attr->type, FI_EP_RDM);
        EXPECT_EQ(info->domain_attr->mr_mode, FI_MR_VIRT_ADDR);

        fi_info *copy = dupinfo(&hints);  // the caller's short structs, duplicated
        ASSERT_NE(copy, nullptr);
        EXPECT_EQ(copy->ep_attr->type, FI_EP_RDM);
        EXPECT_STREQ(copy->fabric_attr->prov_name, "ufi");
        freeinfo(copy);
        freeinfo(info);
    }
}

TEST(GetinfoAbi, DefaultVersionIsTheNewest) {
    EXPECT_EQ(reinterpret_cast<void *>(&fi_getinfo),
              reinterpret_cast<void *>(versioned<getinfo_fn>("fi_getinfo", "FABRIC_1.10")));
    EXPECT_EQ(versioned<getinfo_fn>("fi_getinfo", "FABRIC_1.2"), nullptr)
        << "layouts older than 1.3 are not served";
}

TEST(GetinfoAbi, AllocinfoDupinfoFreeinfo) {
    fi_info *hints = fi_allocinfo();
    ASSERT_NE(hints, nullptr);
    hints->domain_attr->name = strdup("eth0");
    fi_info *copy = fi_dupinfo(hints);
    ASSERT_NE(copy, nullptr);
    EXPECT_STREQ(copy->domain_attr->name, "eth0");
    EXPECT_NE(copy->domain_attr->name, hints->domain_attr->name);
    fi_freeinfo(hints);
    fi_freeinfo(copy);
    fi_freeinfo(nullptr);
}

TEST(GetinfoAbi, ApiVersionBounds) {
    fi_info *info = nullptr;
    EXPECT_EQ(fi_getinfo(FI_VERSION(2, 8), nullptr, nullptr, 0, nullptr, &info), -FI_ENOSYS);
    EXPECT_EQ(info, nullptr);
    EXPECT_EQ(fi_getinfo(FI_VERSION(1, 0), nullptr, nullptr, 0, nullptr, &info), 0);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->fabric_attr->api_version, FI_VERSION(1, 0));
    fi_freeinfo(info);
    EXPECT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, nullptr), -FI_EINVAL);
}

TEST(GetinfoAbi, FirstEntryReachesSameHostAndRemotePeers) {
    fi_info *info = nullptr;
    ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, nullptr, &info), 0);
    ASSERT_NE(info, nullptr);
    // Here: shared memory plus tcp on the NIC. On a host without a NIC, skip the remote part.
    EXPECT_TRUE(info->caps & FI_LOCAL_COMM);
    bool any_remote = false;
    for (fi_info *i = info; i; i = i->next) any_remote |= (i->caps & FI_REMOTE_COMM) != 0;
    if (any_remote) {
        EXPECT_TRUE(info->caps & FI_REMOTE_COMM) << info->domain_attr->name;
    }
    EXPECT_GT(info->tx_attr->inject_size, 0u);
    EXPECT_EQ(info->domain_attr->mr_key_size, 8u);
    EXPECT_EQ(info->domain_attr->cq_data_size, 8u);
    fi_freeinfo(info);
}

TEST(GetinfoAbi, SourceLoopbackPicksLo) {
    fi_info *info = nullptr;
    const int rc = fi_getinfo(fi_version(), "127.0.0.1", nullptr, FI_SOURCE, nullptr, &info);
    if (rc == -FI_ENODATA) GTEST_SKIP() << "no tcp/lo transport here";
    ASSERT_EQ(rc, 0);
    // lo alone, once per endpoint type (RDM, DGRAM, MSG).
    std::vector<int> types;
    for (fi_info *i = info; i != nullptr; i = i->next) {
        EXPECT_STREQ(i->domain_attr->name, "lo");
        types.push_back(i->ep_attr->type);
    }
    EXPECT_EQ(types, (std::vector<int>{FI_EP_RDM, FI_EP_DGRAM, FI_EP_MSG}));
    fi_freeinfo(info);
}

}  // namespace
