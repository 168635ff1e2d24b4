// fi_allocinfo/fi_dupinfo/fi_freeinfo semantics: deep copies, NULL tolerance, auth-key
// sizes, and older layouts read only up to their size.
#include "runtime/info/info_alloc.h"
#include "tests/unit/info/info_fixture.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <gtest/gtest.h>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace ufi::runtime::info {
namespace {

using testing::InfoPtr;

TEST(InfoAlloc, AllocGivesZeroedAttributes) {
    InfoPtr info(alloc_info());
    ASSERT_TRUE(info);
    ASSERT_TRUE(info->tx_attr && info->rx_attr && info->ep_attr && info->domain_attr && info->fabric_attr);
    EXPECT_EQ(info->caps, 0u);
    EXPECT_EQ(info->domain_attr->name, nullptr);
    EXPECT_EQ(info->nic, nullptr);
    InfoPtr dup_of_null(dup_info(nullptr));
    ASSERT_TRUE(dup_of_null) << "fi_dupinfo(NULL) is fi_allocinfo()";
    EXPECT_NE(dup_of_null->domain_attr, nullptr);
}

TEST(InfoAlloc, DupIsDeep) {
    InfoPtr src(alloc_info());
    src->caps = FI_MSG;
    src->domain_attr->name = strdup("eth0");
    src->fabric_attr->name = strdup("ufi");
    src->fabric_attr->prov_name = strdup("ufi");
    const char addr[] = "fi_ufi://abcdef";
    src->src_addrlen = sizeof(addr);
    src->src_addr = malloc(sizeof(addr));
    memcpy(src->src_addr, addr, sizeof(addr));
    src->dest_addrlen = 3;
    src->dest_addr = malloc(3);
    memcpy(src->dest_addr, "xyz", 3);
    const uint8_t key[] = {1, 2, 3, 4};
    src->ep_attr->auth_key_size = sizeof(key);
    src->ep_attr->auth_key = static_cast<uint8_t *>(malloc(sizeof(key)));
    memcpy(src->ep_attr->auth_key, key, sizeof(key));
    src->domain_attr->auth_key_size = sizeof(key);
    src->domain_attr->auth_key = static_cast<uint8_t *>(malloc(sizeof(key)));
    memcpy(src->domain_attr->auth_key, key, sizeof(key));
    src->domain_attr->max_ep_auth_key = 4;
    src->tx_attr->inject_size = 99;

    InfoPtr dup(dup_info(src.get()));
    ASSERT_TRUE(dup);
    EXPECT_EQ(dup->next, nullptr);
    EXPECT_EQ(dup->caps, FI_MSG);
    EXPECT_NE(dup->domain_attr, src->domain_attr);
    EXPECT_NE(dup->domain_attr->name, src->domain_attr->name);
    EXPECT_STREQ(dup->domain_attr->name, "eth0");
    EXPECT_STREQ(dup->fabric_attr->prov_name, "ufi");
    EXPECT_NE(dup->src_addr, src->src_addr);
    EXPECT_EQ(memcmp(dup->src_addr, addr, sizeof(addr)), 0);
    EXPECT_EQ(memcmp(dup->dest_addr, "xyz", 3), 0);
    EXPECT_NE(dup->ep_attr->auth_key, src->ep_attr->auth_key);
    EXPECT_EQ(memcmp(dup->ep_attr->auth_key, key, sizeof(key)), 0);
    EXPECT_EQ(memcmp(dup->domain_attr->auth_key, key, sizeof(key)), 0);
    EXPECT_EQ(dup->domain_attr->max_ep_auth_key, 4u);
    EXPECT_EQ(dup->tx_attr->inject_size, 99u);

    // Freeing the source leaves the copy intact (ASan would catch a shared pointer).
    src.reset();
    EXPECT_STREQ(dup->domain_attr->name, "eth0");
}

TEST(InfoAlloc, AvAuthKeySizeCarriesNoBytes) {
    InfoPtr src(alloc_info());
    src->domain_attr->auth_key_size = FI_AV_AUTH_KEY;  // SIZE_MAX: "keys live in the AV"
    src->domain_attr->auth_key = nullptr;
    InfoPtr dup(dup_info(src.get()));
    ASSERT_TRUE(dup);
    EXPECT_EQ(dup->domain_attr->auth_key_size, FI_AV_AUTH_KEY);
    EXPECT_EQ(dup->domain_attr->auth_key, nullptr);
}

// glibc's malloc keeps a count of the bytes in use (mallinfo2); ASan's allocator does not.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMallocCounts = false;
#else
constexpr bool kMallocCounts = true;
#endif

TEST(InfoAlloc, FreeListAndNull) {
    free_info(nullptr);
    // Every byte the list took is given back: glibc's count of bytes in use returns to where
    // it was (nothing else allocates meanwhile; under ASan, whose allocator does not keep
    // this count, LeakSanitizer checks the same at exit).
    const size_t in_use_before = mallinfo2().uordblks;
    fi_info *a = alloc_info();
    fi_info *b = alloc_info();
    ASSERT_TRUE(a && b);
    a->next = b;
    b->domain_attr->name = strdup("x");
    ASSERT_NE(b->domain_attr->name, nullptr);
    if (kMallocCounts) {
        EXPECT_GT(mallinfo2().uordblks, in_use_before) << "the list is counted while it lives";
    }
    free_info(a);  // frees both, and what the second one's attributes point to
    if (kMallocCounts) {
        EXPECT_EQ(mallinfo2().uordblks, in_use_before) << "free_info leaked part of the list";
    }
}

// A caller built against the 1.3 layout owns a shorter fi_domain_attr: copying it must not
// read past its end. The struct is placed against a PROT_NONE page, so an over-read faults.
TEST(InfoAlloc, OldLayoutIsReadOnlyUpToItsSize) {
    const long page = sysconf(_SC_PAGESIZE);
    auto *mem = static_cast<char *>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(mem, MAP_FAILED);
    ASSERT_EQ(mprotect(mem + page, page, PROT_NONE), 0);
    const AttrLayout v1_3{offsetof(fi_domain_attr, max_ep_auth_key), offsetof(fi_ep_attr, xpu_ctx)};
    auto *dom = reinterpret_cast<fi_domain_attr *>(mem + page - v1_3.domain_attr_size);
    auto *ep_mem = static_cast<char *>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(ep_mem, MAP_FAILED);
    ASSERT_EQ(mprotect(ep_mem + page, page, PROT_NONE), 0);
    auto *ep = reinterpret_cast<fi_ep_attr *>(ep_mem + page - v1_3.ep_attr_size);
    memset(static_cast<void *>(dom), 0, v1_3.domain_attr_size);
    memset(static_cast<void *>(ep), 0, v1_3.ep_attr_size);
    dom->mr_key_size = 8;
    ep->type = FI_EP_RDM;

    fi_info caller{};
    fi_tx_attr tx{};
    fi_rx_attr rx{};
    fi_fabric_attr fab{};
    caller.domain_attr = dom;
    caller.ep_attr = ep;
    caller.tx_attr = &tx;
    caller.rx_attr = &rx;
    caller.fabric_attr = &fab;
    InfoPtr dup(dup_info(&caller, v1_3));
    ASSERT_TRUE(dup);
    EXPECT_EQ(dup->domain_attr->mr_key_size, 8u);
    EXPECT_EQ(dup->domain_attr->max_ep_auth_key, 0u) << "fields the caller never had are zero";
    EXPECT_EQ(dup->domain_attr->max_xpu_ctx_cnt, 0u);
    EXPECT_EQ(dup->ep_attr->type, FI_EP_RDM);
    EXPECT_EQ(dup->ep_attr->xpu_ctx, nullptr);
    munmap(mem, 2 * page);
    munmap(ep_mem, 2 * page);
}

}  // namespace
}  // namespace ufi::runtime::info
