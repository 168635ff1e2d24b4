// A fabric and domain to open AVs on (FI_ADDR_UCX or FI_ADDR_STR, any threading, with or
// without FI_AV_AUTH_KEY), synthetic ufi addresses, and WARN-line counting.
#pragma once

#include "runtime/domain/domain.h"
#include "base/log/testing.h"
#include "transports/address.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

namespace ufi::av_test {

namespace address = ufi::transports::address;

struct DomainOptions {
    bool str_format = false;
    int threading = FI_THREAD_SAFE;
    bool auth_keys = false;
    int av_type = FI_AV_UNSPEC;
};

// The open domain's fixed address length (the stride of fi_av_insert's array), set by
// AvTest::open_domain; 0 outside a domain (then blobs are left unpadded).
inline size_t g_addr_len = 0;

// A blob padded to g_addr_len, as fi_getname hands addresses out.
inline std::vector<uint8_t> padded(std::vector<uint8_t> b) {
    if (b.size() < g_addr_len) b.resize(g_addr_len, 0);
    return b;
}

// The address's records without their padding (what its fi_ufi:// string encodes).
inline std::vector<uint8_t> trimmed(std::vector<uint8_t> b) {
    b.resize(address::content_size(b.data(), b.size()));
    return b;
}

// A realistic name: posix (8+8), tcp (6+2), self (0+2) records, distinct per `n`, padded
// to the domain's address length (55 bytes at most: names fit the smallest domain here).
inline std::vector<uint8_t> make_blob(uint64_t n, int records = 3) {
    address::EndpointAddress a;
    a.uuid = 0x1000000000000000ULL + n;
    a.endpoint_id = static_cast<uint32_t>(n);
    std::vector<uint8_t> b8(8), b6(6), b2(2);
    for (int i = 0; i < 8; ++i) b8[i] = static_cast<uint8_t>(n >> (8 * i));
    b6 = {0,
          2,
          10,
          static_cast<uint8_t>(n >> 16),
          static_cast<uint8_t>(n >> 8),
          static_cast<uint8_t>(n)};
    b2 = {static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
    if (records >= 1) a.records.push_back({"posix", b8, b8});
    if (records >= 2) a.records.push_back({"tcp", b6, b2});
    if (records >= 3) a.records.push_back({"self", {}, b2});
    for (int r = 3; r < records; ++r)
        a.records.push_back({"rc_mlx5", std::vector<uint8_t>(r, 1), b8});
    return padded(address::pack(a));
}

// Addresses first..first+count-1, each padded to the domain's address length, laid end to end
// (as fi_av_insert takes them). Their record counts vary, so their contents differ in length;
// *sizes gets each one's content length.
inline std::vector<uint8_t> make_blobs(uint64_t first, size_t count,
                                       std::vector<size_t> *sizes = nullptr) {
    std::vector<uint8_t> all;
    for (size_t i = 0; i < count; ++i) {
        const auto b = make_blob(first + i, 1 + static_cast<int>((first + i) % 3));
        if (sizes) sizes->push_back(address::content_size(b.data(), b.size()));
        all.insert(all.end(), b.begin(), b.end());
    }
    return all;
}

// fi_av_bind is deprecated (as the page says) but still tested.
inline int av_bind(fid_av *av, fid_t eq, uint64_t flags) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return fi_av_bind(av, eq, flags);
#pragma GCC diagnostic pop
}

inline std::string unique_name(const char *what) {
    static std::atomic<int> n{0};
    return std::string("test-") + what + "-" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

// Lines at WARN level captured while it lives.
class WarnCapture {
  public:
    size_t count() const {
        size_t n = 0;
        for (const auto &l : capture_.lines()) n += l.find("<warn>") != std::string::npos;
        return n;
    }
    std::string text() const {
        std::string s;
        for (const auto &l : capture_.lines()) s += l + "\n";
        return s;
    }
    bool contains(const std::string &what) const { return text().find(what) != std::string::npos; }
    void clear() { capture_.clear(); }

  private:
    log::ScopedCapture capture_;
};

class AvTest : public ::testing::Test {
  protected:
    void TearDown() override {
        for (auto it = avs_.rbegin(); it != avs_.rend(); ++it) EXPECT_EQ(fi_close(&(*it)->fid), 0);
        avs_.clear();
        if (domain_) {
            EXPECT_EQ(fi_close(&domain_->fid), 0);
        }
        if (fabric_) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        if (info_) fi_freeinfo(info_);
        domain_ = nullptr;
        fabric_ = nullptr;
        info_ = nullptr;
        g_addr_len = 0;
    }

    void open_domain(const DomainOptions &o = {}) {
        fi_info *hints = fi_allocinfo();
        hints->addr_format = o.str_format ? FI_ADDR_STR : FI_ADDR_UCX;
        hints->domain_attr->threading = static_cast<fi_threading>(o.threading);
        hints->domain_attr->av_type = static_cast<fi_av_type>(o.av_type);
        ASSERT_EQ(fi_getinfo(fi_version(), nullptr, nullptr, 0, hints, &info_), 0);
        fi_freeinfo(hints);
        if (o.auth_keys) info_->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0) << "auth keys: " << o.auth_keys;
        g_addr_len = static_cast<runtime::Domain *>(domain_)->offer.addr_len;
        ASSERT_GE(g_addr_len, address::kHeaderSize);
    }
    size_t addr_len() const { return g_addr_len; }

    // Opens an AV that TearDown closes.
    fid_av *open_av(fi_av_attr attr = {}, void *context = nullptr) {
        return open_av_ref(attr, context);
    }
    // The same, writing back what fi_av_open reports (type, map_addr) into attr.
    fid_av *open_av_ref(fi_av_attr &attr, void *context = nullptr) {
        fid_av *av = nullptr;
        EXPECT_EQ(fi_av_open(domain_, &attr, &av, context), 0);
        if (av) avs_.push_back(av);
        return av;
    }
    fid_av *open_av_type(fi_av_type type) {
        fi_av_attr attr{};
        attr.type = type;
        return open_av(attr);
    }
    // Closes an AV TearDown would close.
    void close_av(fid_av *av) {
        for (auto it = avs_.begin(); it != avs_.end(); ++it) {
            if (*it == av) {
                avs_.erase(it);
                break;
            }
        }
        EXPECT_EQ(fi_close(&av->fid), 0);
    }

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    std::vector<fid_av *> avs_;
};

}  // namespace ufi::av_test
