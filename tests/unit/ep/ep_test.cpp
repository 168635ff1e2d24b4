// fi_endpoint / fi_endpoint2 / fi_ep_bind / fi_enable / fi_getname / fi_setname / options /
// fi_control / fi_close through the C API, with white-box checks of the address an enabled
// endpoint builds. Every error code fi_endpoint(3) names for these calls has a test here.
#include "ep_fixture.h"

#include "runtime/domain/domain.h"
#include "runtime/ep/binding.h"
#include "runtime/ep/identity.h"
#include "transports/address.h"
#include "transports/iface/discovery.h"
#include "transports/iface/endpoint_worker.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace ufi::test {
namespace {

namespace address = transports::address;
using runtime::ep::Endpoint;

address::EndpointAddress parse(const std::vector<uint8_t> &blob) {
    address::EndpointAddress a;
    std::string why;
    EXPECT_TRUE(address::unpack(blob.data(), blob.size(), a, &why)) << why;
    return a;
}

using EpTest = EpFixture;

// ---- fi_endpoint ---------------------------------------------------------------------------

TEST_F(EpTest, OpenAndClose) {
    fid_ep *ep = nullptr;
    int ctx = 0;
    ASSERT_EQ(fi_endpoint(domain_, info_, &ep, &ctx), 0);
    EXPECT_EQ(ep->fid.fclass, static_cast<size_t>(FI_CLASS_EP));
    EXPECT_EQ(ep->fid.context, &ctx);
    ASSERT_NE(ep->ops, nullptr);
    EXPECT_EQ(ep->ops->size, sizeof(fi_ops_ep));
    EXPECT_EQ(ep->cm->size, sizeof(fi_ops_cm));
    EXPECT_EQ(ep->msg->size, sizeof(fi_ops_msg));
    EXPECT_EQ(ep->tagged->size, sizeof(fi_ops_tagged));
    EXPECT_EQ(ep->rma->size, sizeof(fi_ops_rma));
    EXPECT_EQ(ep->atomic->size, sizeof(fi_ops_atomic));
    EXPECT_EQ(ep->collective->size, sizeof(fi_ops_collective));
    EXPECT_FALSE(runtime::ep::is_enabled(runtime::ep::endpoint_of(&ep->fid)));
    EXPECT_EQ(runtime::ep::endpoint_of(&domain_->fid), nullptr);
    // The domain has a child now.
    EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&ep->fid), 0);
}

TEST_F(EpTest, OpenRejectsBadArguments) {
    fid_ep *ep = nullptr;
    EXPECT_EQ(fi_endpoint(domain_, nullptr, &ep, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_endpoint(domain_, info_, nullptr, nullptr), -FI_EINVAL);
    EXPECT_EQ(domain_->ops->endpoint(nullptr, info_, &ep, nullptr), -FI_EINVAL);

    fi_info *copy = fi_dupinfo(info_);
    // An RDM info relabelled MSG keeps ufi's address format: connected endpoints take socket
    // addresses.
    copy->ep_attr->type = FI_EP_MSG;
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    // An RDM info (RMA, atomics) relabelled DGRAM asks for what datagrams do not offer.
    copy->ep_attr->type = FI_EP_DGRAM;
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    copy->ep_attr->type = FI_EP_UNSPEC;
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    int bogus = 77;
    std::memcpy(&copy->ep_attr->type, &bogus, sizeof bogus);
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    copy->ep_attr->type = FI_EP_RDM;

    fi_ep_attr *saved = copy->ep_attr;
    copy->ep_attr = nullptr;
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    copy->ep_attr = saved;

    free(copy->domain_attr->name);
    copy->domain_attr->name = strdup("no-such-domain");
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    free(copy->domain_attr->name);
    copy->domain_attr->name = strdup(info_->domain_attr->name);

    copy->caps |= FI_XPU;  // never offered
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    copy->caps = info_->caps;

    copy->addr_format = info_->addr_format == FI_ADDR_STR ? FI_ADDR_UCX : FI_ADDR_STR;
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL)
        << "the domain's address format";
    copy->addr_format = info_->addr_format;

    copy->ep_attr->max_msg_size = SIZE_MAX;  // more than ufi offers (SSIZE_MAX)
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);
    copy->ep_attr->max_msg_size = info_->ep_attr->max_msg_size;

    // Garbage as a source address.
    free(copy->src_addr);  // the default source fi_getinfo filled in
    copy->src_addr = malloc(8);
    std::memset(copy->src_addr, 0xab, 8);
    copy->src_addrlen = 8;
    EXPECT_EQ(fi_endpoint(domain_, copy, &ep, nullptr), -FI_EINVAL);

    fi_freeinfo(copy);
}

TEST_F(EpTest, Endpoint2Flags) {
    fid_ep *ep = nullptr;
    ASSERT_EQ(fi_endpoint2(domain_, info_, &ep, 0, nullptr), 0);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    ASSERT_EQ(domain_->ops->endpoint2(domain_, info_, &ep, 0, nullptr), 0);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    EXPECT_EQ(fi_endpoint2(domain_, info_, &ep, FI_PEER, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_endpoint2(domain_, info_, &ep, FI_SEND, nullptr), -FI_EBADFLAGS);
    EXPECT_EQ(fi_endpoint2(domain_, info_, &ep, 1ULL << 63, nullptr), -FI_EBADFLAGS);
}

// Scalable endpoints (tests/unit/msg/scalable_ep_test.cpp has their traffic): one opens and
// closes; an ordinary endpoint hands out no contexts.
TEST_F(EpTest, ScalableEndpointsOpenAndOrdinaryEndpointsHaveNoContexts) {
    fid_ep *sep = nullptr;
    ASSERT_EQ(fi_scalable_ep(domain_, info_, &sep, nullptr), 0);
    EXPECT_EQ(sep->fid.fclass, size_t{FI_CLASS_SEP});
    EXPECT_EQ(fi_close(&sep->fid), 0);
    fid_ep *ep = open_ep();
    ASSERT_NE(ep, nullptr);
    fid_ep *ctx = nullptr;
    EXPECT_EQ(fi_tx_context(ep, 0, nullptr, &ctx, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_rx_context(ep, 0, nullptr, &ctx, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_ep_export_xpu(ep, 0, nullptr), -FI_ENOSYS);
}

TEST_F(EpTest, DataTransfersBeforeEnableAndNotYetImplemented) {
    fid_ep *ep = open_ep();
    ASSERT_NE(ep, nullptr);
    char buf[8] = {};
    // Messages need an enabled endpoint.
    EXPECT_EQ(fi_send(ep, buf, sizeof buf, nullptr, 0, nullptr), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_recv(ep, buf, sizeof buf, nullptr, 0, nullptr), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_inject(ep, buf, sizeof buf, 0), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_tsend(ep, buf, sizeof buf, nullptr, 0, 1, nullptr), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_trecv(ep, buf, sizeof buf, nullptr, 0, 1, 0, nullptr), -FI_EOPBADSTATE);
    // So does RMA.
    EXPECT_EQ(fi_read(ep, buf, sizeof buf, nullptr, 0, 0, 0, nullptr), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_write(ep, buf, sizeof buf, nullptr, 0, 0, 0, nullptr), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_inject_write(ep, buf, sizeof buf, 0, 0, 0), -FI_EOPBADSTATE);
    EXPECT_EQ(fi_atomic(ep, buf, 1, nullptr, 0, 0, 0, FI_UINT64, FI_SUM, nullptr), -FI_EOPBADSTATE);
    // Which atomics exist needs no enabled endpoint.
    size_t count = 0;
    EXPECT_EQ(fi_atomicvalid(ep, FI_UINT64, FI_SUM, &count), 0);
    EXPECT_GE(count, 1u);
    EXPECT_EQ(fi_atomicvalid(ep, FI_DOUBLE_COMPLEX, FI_MIN, &count), -FI_EOPNOTSUPP);
    // Collectives are not implemented yet; an RDM endpoint has no connection.
    EXPECT_EQ(fi_barrier(ep, 0, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_connect(ep, buf, nullptr, 0), -FI_EOPNOTSUPP);
    EXPECT_EQ(fi_shutdown(ep, 0), -FI_EOPNOTSUPP);
    EXPECT_EQ(fi_getpeer(ep, buf, &count), -FI_EOPNOTSUPP) << "RDM endpoints have no peer";
    EXPECT_EQ(fi_cancel(&ep->fid, buf), 0) << "nothing pending: nothing to cancel";
}

// ---- fi_ep_bind ----------------------------------------------------------------------------

TEST_F(EpTest, BindRejectsNonObjects) {
    fid_ep *ep = open_ep();
    ASSERT_NE(ep, nullptr);
    EXPECT_EQ(fi_ep_bind(ep, nullptr, 0), -FI_EINVAL);
    EXPECT_EQ(fi_ep_bind(ep, &domain_->fid, 0), -FI_EINVAL)
        << "a domain is not bound to an endpoint";
    EXPECT_EQ(fi_ep_bind(ep, &fabric_->fid, 0), -FI_EINVAL);
    fid_ep *other = open_ep();
    EXPECT_EQ(fi_ep_bind(ep, &other->fid, 0), -FI_EINVAL);
    fid fake{};
    fake.fclass = FI_CLASS_SRX_CTX;
    EXPECT_EQ(fi_ep_bind(ep, &fake, 0), -FI_EINVAL)
        << "a fid that claims to be a shared receive context but is not ufi's";
}

TEST_F(EpTest, BindAv) {
    fid_av *av = open_av();
    UFI_NEED(av, "fi_av_open");
    fid_av *av2 = open_av();
    fid_ep *ep = open_ep();
    EXPECT_EQ(fi_ep_bind(ep, &av->fid, FI_RECV), -FI_EBADFLAGS);
    EXPECT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
    EXPECT_EQ(fi_ep_bind(ep, &av->fid, 0), -FI_EINVAL) << "one AV per endpoint";
    EXPECT_EQ(fi_ep_bind(ep, &av2->fid, 0), -FI_EINVAL) << "one AV per endpoint";
    // The binding holds a reference.
    EXPECT_EQ(fi_close(&av->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
    EXPECT_EQ(fi_close(&av->fid), 0);
    forget(&av->fid);
}

TEST_F(EpTest, BindObjectsOfAnotherDomain) {
    fid_domain *d2 = nullptr;
    ASSERT_EQ(fi_domain(fabric_, info_, &d2, nullptr), 0);
    fid_av *av = open_av(d2);
    fid_cq *cq = open_cq(d2);
    fid_ep *ep = open_ep();
    if (av != nullptr) {
        EXPECT_EQ(fi_ep_bind(ep, &av->fid, 0), -FI_EDOMAIN);
    }
    if (cq != nullptr) {
        EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT), -FI_EDOMAIN);
    }
    for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
        EXPECT_EQ(fi_close(*it), 0);
    }
    open_.clear();
    EXPECT_EQ(fi_close(&d2->fid), 0);
    EXPECT_NE(av, nullptr);
    EXPECT_NE(cq, nullptr);
}

TEST_F(EpTest, BindCq) {
    fid_cq *tx = open_cq();
    UFI_NEED(tx, "fi_cq_open");
    fid_cq *rx = open_cq();
    fid_ep *ep = open_ep();
    EXPECT_EQ(fi_ep_bind(ep, &tx->fid, 0), -FI_EBADFLAGS) << "a direction is needed";
    EXPECT_EQ(fi_ep_bind(ep, &tx->fid, FI_SELECTIVE_COMPLETION), -FI_EBADFLAGS);
    EXPECT_EQ(fi_ep_bind(ep, &tx->fid, FI_TRANSMIT | FI_READ), -FI_EBADFLAGS);
    EXPECT_EQ(fi_ep_bind(ep, &tx->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION), 0);
    EXPECT_EQ(fi_ep_bind(ep, &tx->fid, FI_TRANSMIT), -FI_EINVAL) << "same CQ, same direction";
    EXPECT_EQ(fi_ep_bind(ep, &rx->fid, FI_TRANSMIT), -FI_EINVAL) << "one CQ per direction";
    EXPECT_EQ(fi_ep_bind(ep, &rx->fid, FI_RECV), 0);
    EXPECT_EQ(fi_ep_bind(ep, &tx->fid, FI_RECV), -FI_EINVAL);
    EXPECT_EQ(fi_close(&tx->fid), -FI_EBUSY) << "bound CQs stay open";
    EXPECT_EQ(fi_close(&rx->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
    EXPECT_EQ(fi_close(&rx->fid), 0);
    forget(&rx->fid);
}

TEST_F(EpTest, BindOneCqForBothDirections) {
    fid_cq *cq = open_cq();
    UFI_NEED(cq, "fi_cq_open");
    fid_ep *ep = open_ep();
    EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT), 0);
    EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_RECV), 0);
    EXPECT_EQ(fi_close(&cq->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&ep->fid), 0) << "detaches once per CQ";
    forget(&ep->fid);
    EXPECT_EQ(fi_close(&cq->fid), 0);
    forget(&cq->fid);
    // Both at once.
    cq = open_cq();
    ep = open_ep();
    EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
    EXPECT_EQ(fi_cq_read(cq, nullptr, 0), -FI_EAGAIN)
        << "reading progresses the (disabled) endpoint";
}

TEST_F(EpTest, BindCounters) {
    fid_cntr *a = open_cntr();
    UFI_NEED(a, "fi_cntr_open");
    fid_cntr *b = open_cntr();
    fid_ep *ep = open_ep();
    EXPECT_EQ(fi_ep_bind(ep, &a->fid, 0), -FI_EBADFLAGS);
    EXPECT_EQ(fi_ep_bind(ep, &a->fid, FI_SEND | FI_SELECTIVE_COMPLETION), -FI_EBADFLAGS);
    {
        // Counting peers' accesses needs FI_RMA_EVENT in the endpoint's capabilities: an
        // application that names its caps without it does not get it.
        fi_info *plain = fi_dupinfo(info_);
        ASSERT_NE(plain, nullptr);
        plain->caps = (plain->caps & ~uint64_t{FI_RMA_EVENT}) | FI_MSG;
        plain->rx_attr->caps &= ~uint64_t{FI_RMA_EVENT};
        fid_ep *no_events = open_ep(nullptr, plain);
        fi_freeinfo(plain);
        ASSERT_NE(no_events, nullptr);
        EXPECT_EQ(fi_ep_bind(no_events, &a->fid, FI_REMOTE_WRITE), -FI_EINVAL) << "needs FI_RMA_EVENT";
        EXPECT_EQ(fi_ep_bind(no_events, &a->fid, FI_REMOTE_READ), -FI_EINVAL) << "needs FI_RMA_EVENT";
        EXPECT_EQ(fi_close(&no_events->fid), 0);
        forget(&no_events->fid);
        // One that has it (as fi_getinfo gives it without hints, or when asked) counts them.
        fi_info *events = fi_dupinfo(info_);
        ASSERT_NE(events, nullptr);
        events->caps |= FI_RMA_EVENT;
        fid_ep *counting = open_ep(nullptr, events);
        fi_freeinfo(events);
        ASSERT_NE(counting, nullptr);
        EXPECT_EQ(fi_ep_bind(counting, &b->fid, FI_REMOTE_WRITE | FI_REMOTE_READ), 0);
        EXPECT_EQ(fi_close(&counting->fid), 0);
        forget(&counting->fid);
    }
    EXPECT_EQ(fi_ep_bind(ep, &a->fid, FI_SEND | FI_WRITE), 0);
    EXPECT_EQ(fi_ep_bind(ep, &b->fid, FI_WRITE), -FI_EINVAL) << "one counter per event";
    EXPECT_EQ(fi_ep_bind(ep, &a->fid, FI_SEND), -FI_EINVAL);
    EXPECT_EQ(fi_ep_bind(ep, &a->fid, FI_RECV), 0) << "the same counter for another event";
    EXPECT_EQ(fi_ep_bind(ep, &b->fid, FI_READ), 0);
    EXPECT_EQ(fi_cntr_read(a), 0U) << "reading progresses the endpoint";
    EXPECT_EQ(fi_close(&a->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
    EXPECT_EQ(fi_close(&a->fid), 0);
    forget(&a->fid);
}

TEST_F(EpTest, BindEq) {
    fid_eq *eq = open_eq();
    UFI_NEED(eq, "fi_eq_open");
    fid_eq *eq2 = open_eq();
    fid_ep *ep = open_ep();
    EXPECT_EQ(fi_ep_bind(ep, &eq->fid, FI_SEND), -FI_EBADFLAGS);
    EXPECT_EQ(fi_ep_bind(ep, &eq->fid, 0), 0);
    EXPECT_EQ(fi_ep_bind(ep, &eq2->fid, 0), -FI_EINVAL) << "one EQ per endpoint";
    EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
}

TEST_F(EpTest, BindAfterEnable) {
    fid_ep *ep = enabled_ep();
    UFI_NEED(ep, "fi_av_open");
    fid_av *av = open_av();
    EXPECT_EQ(fi_ep_bind(ep, &av->fid, 0), -FI_EOPBADSTATE);
    if (fid_cq *cq = open_cq()) {
        EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT), -FI_EOPBADSTATE);
    }
    if (fid_cntr *c = open_cntr()) {
        EXPECT_EQ(fi_ep_bind(ep, &c->fid, FI_SEND), -FI_EOPBADSTATE);
    }
    if (fid_eq *eq = open_eq()) {
        EXPECT_EQ(fi_ep_bind(ep, &eq->fid, 0), -FI_EOPBADSTATE);
    }
}

// ---- fi_enable -----------------------------------------------------------------------------

TEST_F(EpTest, EnableNeedsAnAv) {
    fid_ep *ep = open_ep();
    ASSERT_NE(ep, nullptr);
    EXPECT_EQ(fi_enable(ep), -FI_ENOAV);
    size_t len = 0;
    EXPECT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_EOPBADSTATE)
        << "no address before fi_enable";
    EXPECT_EQ(ep->ops->tx_size_left(ep), -FI_EOPBADSTATE);
    EXPECT_EQ(ep->ops->rx_size_left(ep), -FI_EOPBADSTATE);
}

TEST_F(EpTest, EnableNeedsCqsForItsCapabilities) {
    fid_av *av = open_av();
    UFI_NEED(av, "fi_av_open");
    fid_cq *cq = open_cq();
    UFI_NEED(cq, "fi_cq_open");
    fid_ep *ep = open_ep();
    ASSERT_NE(ep_object(ep)->info().caps & FI_MSG, 0u) << "messaging is offered";
    ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
    EXPECT_EQ(fi_enable(ep), -FI_ENOCQ);
    ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT), 0);
    EXPECT_EQ(fi_enable(ep), -FI_ENOCQ) << "receives need an FI_RECV CQ";
    ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_RECV), 0);
    EXPECT_EQ(fi_enable(ep), 0);

    // An RMA target needs no receive CQ (white-box: RMA is not offered yet).
    fid_ep *target = open_ep();
    ep_object(target)->mutable_info().caps = FI_RMA | FI_REMOTE_READ | FI_REMOTE_WRITE;
    ASSERT_EQ(fi_ep_bind(target, &av->fid, 0), 0);
    EXPECT_EQ(fi_enable(target), 0);
}

TEST_F(EpTest, EnableBuildsTheAddress) {
    fid_ep *ep = enabled_ep();
    UFI_NEED(ep, "fi_av_open");
    EXPECT_TRUE(runtime::ep::is_enabled(runtime::ep::endpoint_of(&ep->fid)));
    EXPECT_EQ(fi_enable(ep), -FI_EOPBADSTATE) << "enable twice";

    const std::vector<uint8_t> blob = name_of(ep);
    const address::EndpointAddress name = parse(blob);
    const address::EndpointAddress &a = ep_object(ep)->address();
    EXPECT_NE(a.uuid, 0U);
    EXPECT_NE(a.endpoint_id, 0U);
    // The full address (sent in the handshake): one record per transport of the domain, in
    // order, with discovery's address lengths.
    const auto &resources = runtime::object_of<runtime::Domain>(domain_)->resources;
    ASSERT_EQ(a.records.size(), resources.size());
    for (size_t i = 0; i < resources.size(); ++i) {
        const transports::Resource &r = *resources[i];
        SCOPED_TRACE(r.label());
        EXPECT_EQ(a.records[i].tl, r.tl);
        EXPECT_EQ(a.records[i].device_addr.size(), r.device_addr_len);
        EXPECT_EQ(a.records[i].iface_addr.size(),
                  r.has(UCT_IFACE_FLAG_CONNECT_TO_IFACE) ? r.iface_addr_len : 0);
    }
    // The name (fi_getname): the same identity, the records of the transports names carry,
    // within FI_NAME_MAX, and marked partial when it leaves any but self out.
    const auto &offer = runtime::object_of<runtime::Domain>(domain_)->offer;
    EXPECT_LE(blob.size(), size_t{FI_NAME_MAX}) << offer.description;
    EXPECT_EQ(name.uuid, a.uuid);
    EXPECT_EQ(name.endpoint_id, a.endpoint_id);
    bool left_out = false;
    size_t next = 0;
    for (const auto &rec : a.records) {
        const bool named = std::find(offer.name_tls.begin(), offer.name_tls.end(), rec.tl) != offer.name_tls.end();
        if (named) {
            ASSERT_LT(next, name.records.size()) << rec.tl;
            EXPECT_EQ(name.records[next++], rec);
        } else {
            left_out |= rec.tl != "self";
        }
    }
    EXPECT_EQ(next, name.records.size());
    EXPECT_EQ(name.partial, left_out);
    EXPECT_FALSE(a.partial);
    EXPECT_EQ(ep->ops->tx_size_left(ep), static_cast<ssize_t>(info_->tx_attr->size));
    EXPECT_EQ(ep->ops->rx_size_left(ep), static_cast<ssize_t>(info_->rx_attr->size));
}

TEST_F(EpTest, GetnameTruncates) {
    fid_ep *ep = enabled_ep();
    UFI_NEED(ep, "fi_av_open");
    const std::vector<uint8_t> full = name_of(ep);
    ASSERT_GT(full.size(), 16U);
    std::vector<uint8_t> buf(full.size() - 1, 0);
    size_t len = buf.size();
    EXPECT_EQ(fi_getname(&ep->fid, buf.data(), &len), -FI_ETOOSMALL);
    EXPECT_EQ(len, full.size()) << "the size needed";
    EXPECT_TRUE(std::equal(buf.begin(), buf.end(), full.begin())) << "a truncated copy";
    std::vector<uint8_t> big(full.size() + 10, 0xee);
    len = big.size();
    EXPECT_EQ(fi_getname(&ep->fid, big.data(), &len), 0);
    EXPECT_EQ(len, full.size());
    EXPECT_EQ(big[full.size()], 0xee) << "nothing written past the address";
    EXPECT_EQ(fi_getname(&ep->fid, nullptr, nullptr), -FI_EINVAL);
    len = 4;
    EXPECT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_EINVAL);
}

// fi_getname gives every endpoint of a domain the same, fixed length (its records padded with
// zeros), so names packed back to back with that stride go into fi_av_insert as they are.
TEST_F(EpTest, NamesHaveTheDomainsFixedLengthAndPackBackToBack) {
    fid_ep *a = enabled_ep();
    UFI_NEED(a, "fi_av_open");
    fid_ep *b = enabled_ep();
    const auto na = name_of(a);
    const auto nb = name_of(b);
    const size_t fixed = static_cast<runtime::Domain *>(domain_)->offer.addr_len;
    ASSERT_EQ(na.size(), fixed);
    ASSERT_EQ(nb.size(), fixed);
    EXPECT_EQ(fixed % 8, 0u);
    const size_t content = address::content_size(na.data(), na.size());
    ASSERT_GT(content, 0u);
    for (size_t i = content; i < na.size(); ++i) ASSERT_EQ(na[i], 0) << "zero padding at " << i;

    std::vector<uint8_t> packed(na);
    packed.insert(packed.end(), nb.begin(), nb.end());
    fid_av *av = open_av();
    fi_addr_t out[2] = {};
    ASSERT_EQ(fi_av_insert(av, packed.data(), 2, out, 0, nullptr), 2);
    std::vector<uint8_t> back(fixed);
    size_t len = back.size();
    ASSERT_EQ(fi_av_lookup(av, out[1], back.data(), &len), 0);
    EXPECT_EQ(len, fixed);
    EXPECT_EQ(back, nb);
    char text[512];
    len = sizeof text;
    ASSERT_NE(fi_av_straddr(av, na.data(), text, &len), nullptr);
    EXPECT_EQ(std::string(text), address::to_string(na.data(), content));
}

TEST_F(EpTest, TwoEndpointsHaveDifferentIdentities) {
    fid_ep *a = enabled_ep();
    UFI_NEED(a, "fi_av_open");
    fid_ep *b = enabled_ep();
    const auto na = parse(name_of(a));
    const auto nb = parse(name_of(b));
    EXPECT_NE(na.uuid, nb.uuid);
    EXPECT_NE(na.endpoint_id, nb.endpoint_id);
    // Same transports, different iface addresses (each endpoint has its own ifaces; cma's
    // iface address is the process id).
    ASSERT_EQ(na.records.size(), nb.records.size());
    for (size_t i = 0; i < na.records.size(); ++i) {
        EXPECT_EQ(na.records[i].tl, nb.records[i].tl);
        if (!na.records[i].iface_addr.empty() && na.records[i].tl != "cma") {
            EXPECT_NE(na.records[i].iface_addr, nb.records[i].iface_addr) << na.records[i].tl;
        }
    }
    // Each reaches the other over every transport but self.
    for (const auto &rec : nb.records) {
        EXPECT_EQ(ep_object(a)->peer_reachable(rec), rec.tl != "self") << rec.tl;
    }
}

TEST_F(EpTest, SharedMemoryNotPermitted) {
    fid_av *av = open_av();
    UFI_NEED(av, "fi_av_open");
    fid_ep *ep = open_ep();
    bool no = false;
    ASSERT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_SHARED_MEMORY_PERMITTED, &no, sizeof no),
              0);
    ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
    bind_cq(ep);
    const auto &resources = runtime::object_of<runtime::Domain>(domain_)->resources;
    size_t non_shm = 0;
    for (const auto *r : resources) non_shm += r->type != transports::DeviceType::SharedMemory;
    if (non_shm == 0) {
        EXPECT_EQ(fi_enable(ep), -FI_ENODEV) << "nothing left to open";
        return;
    }
    ASSERT_EQ(fi_enable(ep), 0);
    const auto &a = ep_object(ep)->address();
    EXPECT_EQ(a.records.size(), non_shm);
    for (const auto &rec : parse(name_of(ep)).records) {
        EXPECT_NE(rec.tl, "posix");
        EXPECT_NE(rec.tl, "sysv");
        EXPECT_NE(rec.tl, "cma");
    }
    for (const auto &rec : a.records) {
        EXPECT_NE(rec.tl, "posix");
        EXPECT_NE(rec.tl, "sysv");
        EXPECT_NE(rec.tl, "cma");
    }
}

TEST_F(EpTest, ProgressSourceAfterEnable) {
    fid_ep *ep = enabled_ep();
    UFI_NEED(ep, "fi_av_open");
    const runtime::ProgressSource &src = ep_object(ep)->progress_source();
    for (int i = 0; i < 10; ++i) src.progress(src.arg);
    EXPECT_EQ(src.arm(src.arg), 0) << "an idle endpoint may sleep";
    int fds[16];
    const int n = src.wait_fds(src.arg, fds, 16);
    size_t with_fd = 0;
    for (const auto &i : ep_object(ep)->worker()->ifaces()) {
        if (i->event_fd < 0) continue;
        ++with_fd;
        EXPECT_NE(std::find(fds, fds + n, i->event_fd), fds + n) << "every iface's event fd";
    }
    // And the timer that wakes sleepers for peer checks (UFI_PEER_CHECK_INTERVAL).
    EXPECT_EQ(static_cast<size_t>(n), with_fd + 1);
    EXPECT_EQ(src.wait_fds(src.arg, fds, 0), 0);
}

TEST_F(EpTest, CloseWithBoundMrIsBusy) {
    fid_ep *ep = open_ep();
    Endpoint *e = runtime::ep::endpoint_of(&ep->fid);
    ASSERT_NE(e, nullptr);
    runtime::ep::attach_mr(e);
    EXPECT_EQ(fi_close(&ep->fid), -FI_EBUSY);
    runtime::ep::detach_mr(e);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
}

TEST_F(EpTest, CloseOrder) {
    fid_av *av = open_av();
    UFI_NEED(av, "fi_av_open");
    fid_cq *cq = open_cq();
    fid_cntr *cntr = open_cntr();
    fid_eq *eq = open_eq();
    fid_ep *ep = open_ep();
    ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
    if (cq) {
        ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
    }
    if (cntr) {
        ASSERT_EQ(fi_ep_bind(ep, &cntr->fid, FI_SEND | FI_RECV), 0);
    }
    if (eq) {
        ASSERT_EQ(fi_ep_bind(ep, &eq->fid, 0), 0);
    }
    ASSERT_EQ(fi_enable(ep), 0);
    if (cq) {
        EXPECT_EQ(fi_cq_read(cq, nullptr, 0), -FI_EAGAIN);
    }
    if (cntr) {
        EXPECT_EQ(fi_cntr_read(cntr), 0U);
    }
    // Nothing the endpoint is bound to closes first; the domain neither.
    EXPECT_EQ(fi_close(&av->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
    // Then everything does (TearDown closes them, in reverse order).
}

// ---- fi_setname / fi_getname ---------------------------------------------------------------

TEST_F(EpTest, SetnameAdoptsAnIdentity) {
    fid_ep *first = enabled_ep();
    UFI_NEED(first, "fi_av_open");
    const std::vector<uint8_t> old_name = name_of(first);
    const auto old_addr = parse(old_name);

    fid_ep *other = open_ep();
    EXPECT_EQ(fi_setname(&other->fid, const_cast<uint8_t *>(old_name.data()), old_name.size()),
              -FI_EADDRINUSE)
        << "a live endpoint has that id";
    std::vector<uint8_t> junk(old_name.size(), 0x55);
    EXPECT_EQ(fi_setname(&other->fid, junk.data(), junk.size()), -FI_EINVAL);
    // Cut into its last record (cutting only padding leaves the same, valid address).
    const size_t content = address::content_size(old_name.data(), old_name.size());
    ASSERT_GT(content, 0u);
    std::vector<uint8_t> truncated(old_name.begin(), old_name.begin() + static_cast<long>(content) - 1);
    EXPECT_EQ(fi_setname(&other->fid, truncated.data(), truncated.size()), -FI_EINVAL);
    EXPECT_EQ(fi_setname(&other->fid, nullptr, 4), -FI_EINVAL);
    EXPECT_EQ(fi_setname(&first->fid, const_cast<uint8_t *>(old_name.data()), old_name.size()),
              -FI_EOPBADSTATE)
        << "after fi_enable the address is fixed";

    // The first endpoint goes away; a new one takes its identity (a restarted process).
    EXPECT_EQ(fi_close(&first->fid), 0);
    forget(&first->fid);
    fid_av *av = open_av();
    fid_ep *again = open_ep();
    ASSERT_EQ(fi_setname(&again->fid, const_cast<uint8_t *>(old_name.data()), old_name.size()), 0);
    EXPECT_TRUE(runtime::ep::ids::in_use(old_addr.endpoint_id));
    ASSERT_EQ(fi_ep_bind(again, &av->fid, 0), 0);
    bind_cq(again);
    ASSERT_EQ(fi_enable(again), 0);
    const auto new_addr = parse(name_of(again));
    EXPECT_EQ(new_addr.uuid, old_addr.uuid);
    EXPECT_EQ(new_addr.endpoint_id, old_addr.endpoint_id);
    EXPECT_EQ(new_addr.records.size(), old_addr.records.size())
        << "the transports are the new ones";
    EXPECT_TRUE(ep_object(again)->has_given_identity());

    // The same identity through fi_info::src_addr.
    EXPECT_EQ(fi_close(&again->fid), 0);
    forget(&again->fid);
    EXPECT_FALSE(runtime::ep::ids::in_use(old_addr.endpoint_id)) << "released at close";
    fi_info *copy = fi_dupinfo(info_);
    free(copy->src_addr);  // the default source fi_getinfo filled in
    copy->src_addr = malloc(old_name.size());
    std::memcpy(copy->src_addr, old_name.data(), old_name.size());
    copy->src_addrlen = old_name.size();
    fid_ep *from_info = open_ep(nullptr, copy);
    fi_freeinfo(copy);
    ASSERT_NE(from_info, nullptr);
    EXPECT_TRUE(ep_object(from_info)->has_given_identity());
    EXPECT_TRUE(runtime::ep::ids::in_use(old_addr.endpoint_id));
}

TEST_F(EpTest, SetnameTwiceBeforeEnable) {
    fid_ep *a = enabled_ep();
    UFI_NEED(a, "fi_av_open");
    fid_ep *b = enabled_ep();
    std::vector<uint8_t> na = name_of(a), nb = name_of(b);
    const uint32_t ida = parse(na).endpoint_id, idb = parse(nb).endpoint_id;
    EXPECT_EQ(fi_close(&a->fid), 0);
    forget(&a->fid);
    EXPECT_EQ(fi_close(&b->fid), 0);
    forget(&b->fid);
    fid_ep *ep = open_ep();
    ASSERT_EQ(fi_setname(&ep->fid, na.data(), na.size()), 0);
    ASSERT_EQ(fi_setname(&ep->fid, na.data(), na.size()), 0) << "the same identity again";
    ASSERT_EQ(fi_setname(&ep->fid, nb.data(), nb.size()), 0);
    EXPECT_FALSE(runtime::ep::ids::in_use(ida)) << "the first identity is given back";
    EXPECT_TRUE(runtime::ep::ids::in_use(idb));
}

// ---- options and control -------------------------------------------------------------------

TEST_F(EpTest, Options) {
    fid_ep *ep = open_ep();
    ASSERT_NE(ep, nullptr);
    size_t v = 0, len = sizeof v;
    ASSERT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &v, &len), 0);
    EXPECT_EQ(v, info_->ep_attr->max_msg_size);
    len = sizeof v;
    ASSERT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_INJECT_MSG_SIZE, &v, &len), 0);
    EXPECT_EQ(v, info_->tx_attr->inject_size);
    len = sizeof v;
    ASSERT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, &len), 0);
    EXPECT_EQ(v, info_->tx_attr->inject_size);
    len = 1;
    EXPECT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &v, &len), -FI_ETOOSMALL);
    EXPECT_EQ(len, sizeof(size_t));
    v = info_->tx_attr->inject_size + 1;
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_INJECT_RMA_SIZE, &v, sizeof v),
              -FI_EINVAL);
    v = 8;
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_INJECT_RMA_SIZE, &v, sizeof v), 0);
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_INJECT_RMA_SIZE, &v, 4), -FI_EINVAL);
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, 4242, &v, sizeof v), -FI_ENOPROTOOPT);
    EXPECT_EQ(fi_setopt(&ep->fid, 3, FI_OPT_MAX_MSG_SIZE, &v, sizeof v), -FI_ENOPROTOOPT);
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, sizeof v),
              -FI_ENOPROTOOPT);
    len = sizeof v;
    EXPECT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &v, &len), -FI_ENOPROTOOPT);
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_INJECT_RMA_SIZE, nullptr, sizeof v),
              -FI_EINVAL);
    EXPECT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &v, nullptr), -FI_EINVAL);
    len = sizeof v;
    EXPECT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, nullptr, &len), -FI_EINVAL);
    bool no = false, yes = true;
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CUDA_API_PERMITTED, &no, sizeof no), 0);
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_CUDA_API_PERMITTED, &yes, sizeof yes),
              -FI_EINVAL);
    int p2p = FI_HMEM_P2P_REQUIRED;
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_FI_HMEM_P2P, &p2p, sizeof p2p),
              -FI_EOPNOTSUPP);
}

TEST_F(EpTest, OptionsAfterEnable) {
    fid_ep *ep = enabled_ep();
    UFI_NEED(ep, "fi_av_open");
    size_t v = 8;
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &v, sizeof v),
              -FI_EOPBADSTATE);
    EXPECT_EQ(fi_setopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, sizeof v), 0);
    size_t len = sizeof v;
    EXPECT_EQ(fi_getopt(&ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &v, &len), 0);
    EXPECT_EQ(v, 8U);
}

TEST_F(EpTest, OpsFlags) {
    fid_ep *ep = open_ep();
    ASSERT_NE(ep, nullptr);
    uint64_t f = FI_TRANSMIT;
    ASSERT_EQ(fi_control(&ep->fid, FI_GETOPSFLAG, &f), 0);
    EXPECT_EQ(f, info_->tx_attr->op_flags);
    f = FI_TRANSMIT | FI_INJECT_COMPLETE | FI_COMPLETION;
    ASSERT_EQ(fi_control(&ep->fid, FI_SETOPSFLAG, &f), 0);
    f = FI_RECV | FI_MULTI_RECV;
    ASSERT_EQ(fi_control(&ep->fid, FI_SETOPSFLAG, &f), 0);
    f = FI_TRANSMIT;
    ASSERT_EQ(fi_control(&ep->fid, FI_GETOPSFLAG, &f), 0);
    EXPECT_EQ(f, FI_INJECT_COMPLETE | FI_COMPLETION);
    f = FI_RECV;
    ASSERT_EQ(fi_control(&ep->fid, FI_GETOPSFLAG, &f), 0);
    EXPECT_EQ(f, FI_MULTI_RECV);
    EXPECT_EQ(ep_object(ep)->tx_op_flags(), FI_INJECT_COMPLETE | FI_COMPLETION);

    f = FI_TRANSMIT | FI_RECV;
    EXPECT_EQ(fi_control(&ep->fid, FI_GETOPSFLAG, &f), -FI_EINVAL);
    f = FI_TRANSMIT | FI_RECV | FI_COMPLETION;
    EXPECT_EQ(fi_control(&ep->fid, FI_SETOPSFLAG, &f), -FI_EINVAL);
    f = 0;
    EXPECT_EQ(fi_control(&ep->fid, FI_GETOPSFLAG, &f), -FI_EINVAL);
    f = FI_COMPLETION;
    EXPECT_EQ(fi_control(&ep->fid, FI_SETOPSFLAG, &f), -FI_EINVAL);
    f = FI_TRANSMIT | FI_TAGGED;
    EXPECT_EQ(fi_control(&ep->fid, FI_SETOPSFLAG, &f), -FI_EBADFLAGS);
    EXPECT_EQ(fi_control(&ep->fid, FI_GETOPSFLAG, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_control(&ep->fid, FI_SETOPSFLAG, nullptr), -FI_EINVAL);

    // (fi_ep_alias: tests/unit/msg/alias_test.cpp.)
    EXPECT_EQ(fi_control(&ep->fid, FI_BACKLOG, &f), -FI_ENOSYS);
    EXPECT_EQ(fi_control(&ep->fid, 999, nullptr), -FI_ENOSYS);
    void *ops = nullptr;
    EXPECT_EQ(fi_open_ops(&ep->fid, "x", 0, &ops, nullptr), -FI_ENOSYS);
}

// ---- authorization keys --------------------------------------------------------------------

class EpAuthKeyTest : public EpFixture {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->ep_attr->auth_key_size = sizeof key_;
        hints->ep_attr->auth_key = static_cast<uint8_t *>(malloc(sizeof key_));
        std::memcpy(hints->ep_attr->auth_key, key_, sizeof key_);
    }
    const uint8_t key_[4] = {1, 2, 3, 4};
};

TEST_F(EpAuthKeyTest, ClassicKeyIsStored) {
    fid_ep *ep = open_ep();
    ASSERT_NE(ep, nullptr);
    EXPECT_EQ(ep_object(ep)->auth_key(), std::vector<uint8_t>(key_, key_ + 4));
    fi_info *copy = fi_dupinfo(info_);
    free(copy->ep_attr->auth_key);
    copy->ep_attr->auth_key = nullptr;
    copy->ep_attr->auth_key_size = 0;
    fid_ep *plain = open_ep(nullptr, copy);
    EXPECT_EQ(ep_object(plain)->auth_key(), runtime::object_of<runtime::Domain>(domain_)->auth_key)
        << "without its own key the endpoint uses the domain's";
    copy->ep_attr->auth_key_size = 65;
    copy->ep_attr->auth_key = static_cast<uint8_t *>(calloc(65, 1));
    fid_ep *bad = nullptr;
    EXPECT_EQ(fi_endpoint(domain_, copy, &bad, nullptr), -FI_EINVAL) << "keys are 1 to 64 bytes";
    fi_freeinfo(copy);
}

class EpAvAuthKeyTest : public EpFixture {
  protected:
    void adjust_hints(fi_info *hints) override {
        hints->domain_attr->auth_key_size = FI_AV_AUTH_KEY;
    }
};

TEST_F(EpAvAuthKeyTest, EndpointKeysComeFromTheAv) {
    fi_info *copy = fi_dupinfo(info_);
    copy->ep_attr->auth_key_size = 4;
    copy->ep_attr->auth_key = static_cast<uint8_t *>(calloc(4, 1));
    fid_ep *bad = nullptr;
    EXPECT_EQ(fi_endpoint(domain_, copy, &bad, nullptr), -FI_EINVAL)
        << "FI_AV_AUTH_KEY domains: ep key unset";
    fi_freeinfo(copy);

    fid_av *av = open_av();
    UFI_NEED(av, "fi_av_open");
    const uint8_t key[4] = {9, 8, 7, 6};
    fi_addr_t handle = FI_ADDR_NOTAVAIL;
    const int rc = fi_av_insert_auth_key(av, key, sizeof key, &handle, 0);
    ASSERT_EQ(rc, 0);
    fid_ep *ep = open_ep();
    ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
    bind_cq(ep);
    ASSERT_EQ(fi_enable(ep), 0);
    EXPECT_EQ(ep_object(ep)->held_auth_keys(), std::vector<fi_addr_t>{handle});
    EXPECT_EQ(fi_av_remove(av, &handle, 1, FI_AUTH_KEY), -FI_EBUSY)
        << "held by the enabled endpoint";
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
    EXPECT_EQ(fi_av_remove(av, &handle, 1, FI_AUTH_KEY), 0) << "released at close";
}

// ---- FI_ADDR_STR ---------------------------------------------------------------------------

class EpStrTest : public EpFixture {
  protected:
    void adjust_hints(fi_info *hints) override { hints->addr_format = FI_ADDR_STR; }
};

TEST_F(EpStrTest, GetnameReturnsTheString) {
    ASSERT_EQ(info_->addr_format, static_cast<uint32_t>(FI_ADDR_STR));
    fid_ep *ep = enabled_ep();
    UFI_NEED(ep, "fi_av_open");
    size_t len = 0;
    ASSERT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_ETOOSMALL);
    std::string s(len, 'x');
    ASSERT_EQ(fi_getname(&ep->fid, s.data(), &len), 0);
    EXPECT_EQ(s.back(), '\0') << "NUL-terminated, counted in addrlen";
    EXPECT_EQ(std::strlen(s.c_str()) + 1, len);
    EXPECT_EQ(s.rfind("fi_ufi://", 0), 0U) << s;
    std::vector<uint8_t> blob;
    ASSERT_TRUE(address::from_string(s.c_str(), blob));
    const auto &padded = ep_object(ep)->address_blob();
    EXPECT_EQ(blob, std::vector<uint8_t>(padded.begin(),
                                         padded.begin() + static_cast<long>(blob.size())))
        << "the string carries the records, without the binary form's padding";
    EXPECT_EQ(address::content_size(padded.data(), padded.size()), blob.size());

    char small[12];
    len = sizeof small;
    EXPECT_EQ(fi_getname(&ep->fid, small, &len), -FI_ETOOSMALL);
    EXPECT_EQ(len, s.size());
    EXPECT_EQ(small[sizeof small - 1], '\0') << "a truncated string is still terminated";
    EXPECT_EQ(std::string(small), s.substr(0, sizeof small - 1));

    // fi_setname takes the string form on this domain.
    const std::string name = s.c_str();
    EXPECT_EQ(fi_close(&ep->fid), 0);
    forget(&ep->fid);
    fid_ep *again = open_ep();
    EXPECT_EQ(fi_setname(&again->fid, const_cast<char *>(name.c_str()), name.size() + 1), 0);
    std::vector<uint8_t> binary = blob;
    EXPECT_EQ(fi_setname(&again->fid, binary.data(), binary.size()), -FI_EINVAL)
        << "a string is expected";
}

}  // namespace
}  // namespace ufi::test
