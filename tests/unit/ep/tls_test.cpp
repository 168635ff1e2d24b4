// Endpoints under a UFI_TLS subset (set by meson per test process): every domain fi_getinfo
// offers opens an endpoint whose address holds exactly the domain's transports, all from
// EP_TEST_ALLOWED_TLS. Without an AV implementation the worker-level check still runs.
#include "runtime/domain/domain.h"
#include "runtime/ep/binding.h"
#include "runtime/ep/endpoint.h"
#include "runtime/fid_cast.h"
#include "transports/address.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace address = ufi::transports::address;

std::set<std::string> allowed_tls() {
    std::set<std::string> out;
    const char *env = std::getenv("EP_TEST_ALLOWED_TLS");  // the test's own variable
    std::stringstream ss(env != nullptr ? env : "");
    for (std::string item; std::getline(ss, item, ',');) out.insert(item);
    return out;
}

TEST(EpTls, EveryDomainsEndpointUsesOnlyItsTransports) {
    const std::set<std::string> allowed = allowed_tls();
    ASSERT_FALSE(allowed.empty()) << "EP_TEST_ALLOWED_TLS is not set (run through meson test)";
    fi_info *info = nullptr;
    ASSERT_EQ(fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, nullptr, &info), 0);
    fid_fabric *fabric = nullptr;
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
    int domains = 0;
    bool av_missing = false;
    for (fi_info *cur = info; cur != nullptr; cur = cur->next) {
        // (Connected entries bind no AV and are named by socket address; their domains are the
        // RDM entries' too, which this checks. msg_ep_test covers them.)
        if (cur->ep_attr->type == FI_EP_MSG) continue;
        SCOPED_TRACE(cur->domain_attr->name);
        fid_domain *domain = nullptr;
        ASSERT_EQ(fi_domain(fabric, cur, &domain, nullptr), 0);
        auto *d = ufi::runtime::object_of<ufi::runtime::Domain>(domain);
        ++domains;
        std::vector<std::string> expected;
        for (const auto *r : d->resources) {
            EXPECT_TRUE(allowed.count(r->tl)) << r->label() << " is outside UFI_TLS";
            expected.push_back(r->tl);
        }

        // The worker the endpoint would open.
        std::unique_ptr<ufi::transports::EndpointWorker> w;
        std::vector<ufi::transports::SkippedResource> skipped;
        ASSERT_EQ(ufi::transports::EndpointWorker::open(d->memory_domains(), d->resources, {}, w, skipped),
                  UCS_OK);
        EXPECT_TRUE(skipped.empty());
        std::vector<std::string> opened;
        for (const auto &rec : w->records()) opened.push_back(rec.tl);
        EXPECT_EQ(opened, expected);
        w.reset();

        // The endpoint itself, when the AV exists.
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        fid_av *av = nullptr;
        const int rc = fi_av_open(domain, &av_attr, &av, nullptr);
        if (rc == -FI_ENOSYS) {
            av_missing = true;
        } else {
            ASSERT_EQ(rc, 0);
            fi_cq_attr cq_attr{};
            fid_cq *cq = nullptr;
            ASSERT_EQ(fi_cq_open(domain, &cq_attr, &cq, nullptr), 0);
            fid_ep *ep = nullptr;
            ASSERT_EQ(fi_endpoint(domain, cur, &ep, nullptr), 0);
            ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
            ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
            ASSERT_EQ(fi_enable(ep), 0);
            size_t len = 0;
            ASSERT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_ETOOSMALL);
            std::vector<uint8_t> blob(len);
            ASSERT_EQ(fi_getname(&ep->fid, blob.data(), &len), 0);
            address::EndpointAddress a;
            ASSERT_TRUE(address::unpack(blob.data(), blob.size(), a));
            // The full address holds every transport; the name those it carries.
            std::vector<std::string> in_address, in_name, named;
            for (const auto &rec : ufi::runtime::ep::endpoint_of(&ep->fid)->address().records) {
                in_address.push_back(rec.tl);
            }
            for (const auto &rec : a.records) in_name.push_back(rec.tl);
            for (const auto &tl : expected) {
                if (std::count(d->offer.name_tls.begin(), d->offer.name_tls.end(), tl)) named.push_back(tl);
            }
            EXPECT_EQ(in_address, expected);
            EXPECT_EQ(in_name, named);
            EXPECT_LE(blob.size(), size_t{FI_NAME_MAX});
            EXPECT_EQ(fi_close(&ep->fid), 0);

            // Without shared memory: the other transports, or -FI_ENODEV when none is left.
            std::vector<std::string> non_shm;
            for (const auto *r : d->resources) {
                if (r->type != ufi::transports::DeviceType::SharedMemory) non_shm.push_back(r->tl);
            }
            ASSERT_EQ(fi_endpoint(domain, cur, &ep, nullptr), 0);
            ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
            ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
            bool no = false;
            ASSERT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SHARED_MEMORY_PERMITTED, &no,
                                sizeof no),
                      0);
            if (non_shm.empty()) {
                EXPECT_EQ(fi_enable(ep), -FI_ENODEV);
                EXPECT_EQ(fi_enable(ep), -FI_ENODEV)
                    << "a failed enable leaves the endpoint disabled";
            } else {
                ASSERT_EQ(fi_enable(ep), 0);
                std::vector<std::string> got;
                for (const auto &rec :
                     ufi::runtime::object_of<ufi::runtime::ep::Endpoint>(ep)->address().records) {
                    got.push_back(rec.tl);
                }
                EXPECT_EQ(got, non_shm);
            }
            EXPECT_EQ(fi_close(&ep->fid), 0);
            EXPECT_EQ(fi_close(&cq->fid), 0);
            EXPECT_EQ(fi_close(&av->fid), 0);
        }
        EXPECT_EQ(fi_close(&domain->fid), 0);
    }
    EXPECT_GT(domains, 0);
    EXPECT_EQ(fi_close(&fabric->fid), 0);
    fi_freeinfo(info);
    EXPECT_FALSE(av_missing) << "fi_av_open failed: only the worker was checked";
}

}  // namespace
