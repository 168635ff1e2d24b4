// A fabric and domain (the first fi_getinfo offers, or one asked for with hints) and helpers
// that open the objects endpoints bind to. Objects are closed in reverse order at the end.
#pragma once

#include "runtime/ep/endpoint.h"
#include "runtime/fid_cast.h"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <vector>

namespace ufi::test {

inline runtime::ep::Endpoint *ep_object(fid_ep *ep) {
    return runtime::object_of<runtime::ep::Endpoint>(ep);
}

class EpFixture : public ::testing::Test {
  protected:
    // Override to ask for something else (FI_ADDR_STR, AV auth keys, a domain name...).
    virtual void adjust_hints(fi_info *) {}

    void SetUp() override {
        fi_info *hints = fi_allocinfo();
        ASSERT_NE(hints, nullptr);
        hints->ep_attr->type = FI_EP_RDM;
        adjust_hints(hints);
        const int rc = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info_);
        fi_freeinfo(hints);
        ASSERT_EQ(rc, 0);
        ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
    }

    void TearDown() override {
        // Endpoints first (they hold their AV, CQs and counters), then the rest in reverse.
        std::vector<fid_t> eps, rest;
        for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
            ((*it)->fclass == FI_CLASS_EP ? eps : rest).push_back(*it);
        }
        for (fid_t f : eps) EXPECT_EQ(fi_close(f), 0);
        for (fid_t f : rest) EXPECT_EQ(fi_close(f), 0);
        open_.clear();
        if (domain_ != nullptr) {
            EXPECT_EQ(fi_close(&domain_->fid), 0);
        }
        if (fabric_ != nullptr) {
            EXPECT_EQ(fi_close(&fabric_->fid), 0);
        }
        fi_freeinfo(info_);
    }

    // Closed at TearDown (endpoints first, then in reverse order) unless the test closes it
    // and calls forget().
    template <typename T>
    T *keep(T *obj) {
        if (obj != nullptr) open_.push_back(&obj->fid);
        return obj;
    }
    void forget(fid_t fid) { std::erase(open_, fid); }

    fid_ep *open_ep(fid_domain *d = nullptr, fi_info *info = nullptr) {
        fid_ep *ep = nullptr;
        const int rc = fi_endpoint(d ? d : domain_, info ? info : info_, &ep, this);
        EXPECT_EQ(rc, 0);
        return rc == 0 ? keep(ep) : nullptr;
    }

    // The AV, CQ, counter and EQ: nullptr (and the test skipped) while their families return
    // -FI_ENOSYS.
    fid_av *open_av(fid_domain *d = nullptr) {
        fi_av_attr attr{};
        attr.type = FI_AV_TABLE;
        fid_av *av = nullptr;
        const int rc = fi_av_open(d ? d : domain_, &attr, &av, nullptr);
        if (rc == -FI_ENOSYS) return nullptr;
        EXPECT_EQ(rc, 0);
        return rc == 0 ? keep(av) : nullptr;
    }
    fid_cq *open_cq(fid_domain *d = nullptr) {
        fi_cq_attr attr{};
        attr.format = FI_CQ_FORMAT_CONTEXT;
        attr.size = 64;
        fid_cq *cq = nullptr;
        const int rc = fi_cq_open(d ? d : domain_, &attr, &cq, nullptr);
        if (rc == -FI_ENOSYS) return nullptr;
        EXPECT_EQ(rc, 0);
        return rc == 0 ? keep(cq) : nullptr;
    }
    fid_cntr *open_cntr(fid_domain *d = nullptr) {
        fi_cntr_attr attr{};
        attr.events = FI_CNTR_EVENTS_COMP;
        fid_cntr *c = nullptr;
        const int rc = fi_cntr_open(d ? d : domain_, &attr, &c, nullptr);
        if (rc == -FI_ENOSYS) return nullptr;
        EXPECT_EQ(rc, 0);
        return rc == 0 ? keep(c) : nullptr;
    }
    fid_eq *open_eq() {
        fi_eq_attr attr{};
        attr.size = 16;
        fid_eq *eq = nullptr;
        const int rc = fi_eq_open(fabric_, &attr, &eq, nullptr);
        if (rc == -FI_ENOSYS) return nullptr;
        EXPECT_EQ(rc, 0);
        return rc == 0 ? keep(eq) : nullptr;
    }

    // Binds a fresh CQ for FI_TRANSMIT | FI_RECV (the messaging capabilities need one).
    void bind_cq(fid_ep *ep) {
        fid_cq *cq = open_cq();
        ASSERT_NE(cq, nullptr);
        ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
    }

    // An endpoint bound to a fresh AV and CQ (FI_TRANSMIT | FI_RECV) and enabled.
    fid_ep *enabled_ep() {
        fid_av *av = open_av();
        if (av == nullptr) return nullptr;
        fid_cq *cq = open_cq();
        if (cq == nullptr) return nullptr;
        fid_ep *ep = open_ep();
        if (ep == nullptr) return nullptr;
        EXPECT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
        EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
        EXPECT_EQ(fi_enable(ep), 0);
        return ep;
    }

    std::vector<uint8_t> name_of(fid_ep *ep) {
        size_t len = 0;
        EXPECT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_ETOOSMALL);
        std::vector<uint8_t> buf(len);
        EXPECT_EQ(fi_getname(&ep->fid, buf.data(), &len), 0);
        EXPECT_EQ(len, buf.size());
        return buf;
    }

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    std::vector<fid_t> open_;
};

#define UFI_NEED(obj, what)                                                   \
    do {                                                                      \
        ASSERT_NE((obj), nullptr) << what << " failed";                       \
    } while (0)

}  // namespace ufi::test
