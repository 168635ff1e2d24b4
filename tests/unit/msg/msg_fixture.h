// Two (or three) RDM endpoints of one domain in one process, each with its own AV and CQ,
// that know each other: the ground for messaging tests over whatever transports UFI_TLS leaves
// (meson runs the suite over shared memory, tcp on loopback, and the default set). Every wait
// is bounded; both endpoints are progressed while waiting (manual progress).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "base/config/config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

namespace ufi::msg_test {

inline constexpr int kWaitMs = 20000;

struct Side {
    fid_av *av = nullptr;
    fid_cq *cq = nullptr;
    fid_ep *ep = nullptr;
    std::vector<uint8_t> name;
};

class MsgTest : public ::testing::Test {
  protected:
    virtual void adjust_hints(fi_info *) {}
    // Called for each endpoint after its bindings, before fi_enable (options, for one).
    virtual void before_enable(fid_ep *) {}
    virtual int cq_format() const { return FI_CQ_FORMAT_TAGGED; }
    virtual uint32_t api_version() const { return FI_VERSION(2, 0); }

    // Tests of socket-address names need a tcp domain on loopback (UFI_NET_DEVICES=lo: no
    // traffic to this machine's other addresses); elsewhere they are skipped.
    virtual bool needs_loopback_tcp() const { return false; }

    void SetUp() override {
        if (needs_loopback_tcp()) {
            const auto &devs = config::registry().get_list("UFI_NET_DEVICES");
            const auto &tls = config::registry().get_list("UFI_TLS");
            const bool tcp = tls.empty() || std::find(tls.begin(), tls.end(), "tcp") != tls.end() ||
                             std::find(tls.begin(), tls.end(), "all") != tls.end();
            if (!tcp || devs.size() != 1 || devs[0] != "lo") {
                GTEST_SKIP() << "socket addresses need tcp on loopback only (UFI_NET_DEVICES=lo)";
            }
        }
        fi_info *hints = fi_allocinfo();
        hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_DIRECTED_RECV;
        hints->ep_attr->type = FI_EP_RDM;
        adjust_hints(hints);
        const int rc = fi_getinfo(api_version(), nullptr, nullptr, 0, hints, &info_);
        fi_freeinfo(hints);
        ASSERT_EQ(rc, 0) << fi_strerror(-rc);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
        for (Side *s : {&a_, &b_}) open_side(*s);
        // Each knows the other: a_.to_b is B in A's AV, b_.to_a is A in B's AV.
        a_to_b_ = insert(a_, b_.name);
        b_to_a_ = insert(b_, a_.name);
    }

    void TearDown() override {
        for (Side *s : {&a_, &b_, &c_}) close_side(*s);
        if (domain_) {
            EXPECT_EQ(fi_close(&domain_->fid), 0);
        }
        if (fabric_) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        if (info_) fi_freeinfo(info_);
    }

    void open_side(Side &s) {
        fi_av_attr av_attr{};
        ASSERT_EQ(fi_av_open(domain_, &av_attr, &s.av, nullptr), 0);
        fi_cq_attr cq_attr{};
        cq_attr.format = static_cast<fi_cq_format>(cq_format());
        cq_attr.size = 4096;
        ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &s.cq, nullptr), 0);
        ASSERT_EQ(fi_endpoint(domain_, info_, &s.ep, nullptr), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.av->fid, 0), 0);
        ASSERT_EQ(fi_ep_bind(s.ep, &s.cq->fid, FI_TRANSMIT | FI_RECV), 0);
        before_enable(s.ep);
        ASSERT_EQ(fi_enable(s.ep), 0);
        size_t len = 0;
        ASSERT_EQ(fi_getname(&s.ep->fid, nullptr, &len), -FI_ETOOSMALL);
        s.name.resize(len);
        ASSERT_EQ(fi_getname(&s.ep->fid, s.name.data(), &len), 0);
    }

    void close_side(Side &s) {
        for (fid_t f : {s.ep ? &s.ep->fid : nullptr, s.cq ? &s.cq->fid : nullptr,
                        s.av ? &s.av->fid : nullptr}) {
            if (f != nullptr) {
                EXPECT_EQ(fi_close(f), 0);
            }
        }
        s = Side{};
    }

    fi_addr_t insert(Side &s, const std::vector<uint8_t> &name) {
        fi_addr_t a = FI_ADDR_NOTAVAIL;
        EXPECT_EQ(fi_av_insert(s.av, name.data(), 1, &a, 0, nullptr), 1);
        return a;
    }

    // Progresses every side until `cq` has a completion (or an error); the read's result.
    ssize_t wait(fid_cq *cq, fi_cq_tagged_entry &entry, fi_addr_t *src = nullptr) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_cq_readfrom(cq, &entry, 1, src);
            if (rc != -FI_EAGAIN) return rc;
            progress_all();
        }
        return -FI_ETIMEDOUT;
    }
    // The error entry at the head of `cq` (after wait() returned -FI_EAVAIL).
    fi_cq_err_entry error(fid_cq *cq) {
        fi_cq_err_entry e{};
        EXPECT_EQ(fi_cq_readerr(cq, &e, 0), 1);
        return e;
    }
    // Reads nothing: progresses every side once.
    void progress_all() {
        fi_cq_tagged_entry none;
        for (Side *s : {&a_, &b_, &c_}) {
            if (s->cq != nullptr) (void)fi_cq_read(s->cq, &none, 0);
        }
    }
    // Calls `post` until it stops returning -FI_EAGAIN (progressing meanwhile).
    template <typename Post>
    ssize_t retry(Post &&post) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
        for (;;) {
            const ssize_t rc = post();
            if (rc != -FI_EAGAIN || std::chrono::steady_clock::now() > deadline) return rc;
            progress_all();
        }
    }
    // Progresses every side for at most `ms` until `cq` has a completion; the read's result
    // (-FI_EAGAIN when nothing came).
    ssize_t poll_for(fid_cq *cq, fi_cq_tagged_entry &entry, int ms) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        ssize_t rc = -FI_EAGAIN;
        while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
            progress_all();
            rc = fi_cq_read(cq, &entry, 1);
        }
        return rc;
    }
    // Polls `cq` for a while and says whether anything arrived.
    bool quiet(fid_cq *cq, int ms = 50) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        fi_cq_tagged_entry e;
        while (std::chrono::steady_clock::now() < deadline) {
            const ssize_t rc = fi_cq_read(cq, &e, 1);
            if (rc != -FI_EAGAIN) return false;
            progress_all();
        }
        return true;
    }

    static std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
        std::vector<uint8_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 9));
        return v;
    }

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    Side a_, b_, c_;
    fi_addr_t a_to_b_ = FI_ADDR_NOTAVAIL;
    fi_addr_t b_to_a_ = FI_ADDR_NOTAVAIL;
};

}  // namespace ufi::msg_test
