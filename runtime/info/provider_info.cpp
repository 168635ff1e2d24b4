#include "runtime/info/provider_info.h"

#include "runtime/info/capabilities.h"
#include "runtime/info/info_alloc.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <algorithm>
#include <cstdint>

namespace ufi::runtime::info {

uint32_t provider_version() {
    // ufi 0.1: the major/minor of the project version in meson.build.
    return FI_VERSION(0, 1);
}

namespace {

// FI_REMOTE_COMM names the kind of path, not the hosts a device happens to reach: every
// domain with a network transport offers it, loopback included, as libfabric's tcp provider
// does whatever its interface. Open MPI's OFI MTL asks for it, and a single-node job pinned to
// loopback (UFI_NET_DEVICES=lo) must select ufi. Which nodes a domain reaches is checked
// where a node is named (getinfo.cpp: reaches_remote), so lo still refuses another host.
uint64_t reach_caps(const DomainOffer &offer) {
    uint64_t caps = 0;
    if (offer.reaches_local) caps |= FI_LOCAL_COMM;
    if (offer.reaches_remote || !offer.net_device.empty()) caps |= FI_REMOTE_COMM;
    return caps;
}

}  // namespace

bool offers_msg_prefix(const fi_info *hints) noexcept {
    if (hints == nullptr) return false;
    uint64_t mode = hints->mode;
    if (hints->tx_attr != nullptr) mode |= hints->tx_attr->mode;
    if (hints->rx_attr != nullptr) mode |= hints->rx_attr->mode;
    return (mode & FI_MSG_PREFIX) != 0;
}

size_t msg_prefix_of(const fi_info &info) noexcept {
    uint64_t mode = info.mode;
    if (info.tx_attr != nullptr) mode |= info.tx_attr->mode;
    if (info.rx_attr != nullptr) mode |= info.rx_attr->mode;
    return (mode & FI_MSG_PREFIX) != 0 && info.ep_attr != nullptr ? info.ep_attr->msg_prefix_size : 0;
}

fi_info *make_provider_info(const DomainOffer &offer, fi_ep_type type, uint32_t api_version,
                            bool msg_prefix) {
    fi_info *info = alloc_info();
    if (info == nullptr) return nullptr;

    const bool dgram = type == FI_EP_DGRAM;
    const bool connected = type == FI_EP_MSG;
    const uint64_t api2 = FI_VERSION_GE(api_version, FI_VERSION(2, 0)) ? kApi2Caps : 0;
    const uint64_t domain_caps =
        (connected ? 0 : kDomainPrimaryCaps | kDomainSecondaryCaps) | reach_caps(offer);
    const uint64_t caps =
        (dgram ? kDgramPrimaryCaps | kDgramSecondaryCaps
               : connected ? kMsgEpPrimaryCaps | kMsgEpSecondaryCaps : kPrimaryCaps | kSecondaryCaps) |
        (connected ? api2 & FI_TAGGED_MULTI_RECV : api2) | domain_caps;
    // A datagram is one active message: its size bounds messages and injects alike.
    // (The prefix travels in the same active message: a datagram's payload is that much
    // smaller, and so is what one short message carries.)
    const size_t prefix = msg_prefix ? kMsgPrefixSize : 0;
    const auto less_prefix = [prefix](size_t n) { return n > prefix ? n - prefix : 0; };
    const size_t max_msg = dgram ? less_prefix(offer.datagram_size) : offer.max_msg_size;
    const size_t order_size = dgram ? 0 : offer.max_msg_size;  // (no RMA on datagrams)
    const uint64_t order = dgram ? kDgramOrder : kRequestableOrder;
    info->caps = caps;
    info->mode = kRequiredModes | (msg_prefix ? FI_MSG_PREFIX : 0);
    // (Connected endpoints are addressed by socket address: the CM's listener. FI_SOCKADDR
    // becomes _IN or _IN6 by the domain's address, getinfo.cpp.)
    info->addr_format = connected ? uint32_t{FI_SOCKADDR} : kDefaultAddrFormat;

    fi_tx_attr &tx = *info->tx_attr;
    tx.caps = caps & kTxCaps;
    tx.mode = info->mode;
    tx.op_flags = 0;
    tx.msg_order = order;
    tx.comp_order = 0;
    tx.inject_size = std::min(less_prefix(offer.inject_size), max_msg);
    tx.size = kTxSize;
    tx.iov_limit = offer.iov_limit;
    tx.rma_iov_limit = dgram ? 0 : offer.rma_iov_limit;

    fi_rx_attr &rx = *info->rx_attr;
    rx.caps = caps & kRxCaps;
    rx.mode = info->mode;
    rx.op_flags = 0;
    rx.msg_order = order;
    rx.comp_order = 0;
    rx.total_buffered_recv = 0;
    rx.size = kRxSize;
    rx.iov_limit = offer.iov_limit;

    fi_ep_attr &ep = *info->ep_attr;
    ep.type = type;
    ep.protocol = kProtocol;
    ep.protocol_version = kProtocolVersion;
    ep.max_msg_size = max_msg;
    ep.msg_prefix_size = prefix;
    ep.max_order_raw_size = order_size;  // when asked for, ordering holds for any size
    ep.max_order_war_size = order_size;
    ep.max_order_waw_size = order_size;
    ep.mem_tag_format = kMemTagFormat;
    ep.tx_ctx_cnt = 1;
    ep.rx_ctx_cnt = 1;

    fi_domain_attr &dom = *info->domain_attr;
    dom.name = dup_cstr(offer.name.c_str());
    dom.threading = FI_THREAD_SAFE;
    dom.control_progress = FI_PROGRESS_MANUAL;
    dom.data_progress = FI_PROGRESS_MANUAL;
    dom.resource_mgmt = FI_RM_ENABLED;
    // Either type serves (fi_domain(3) lets a provider say so), as libfabric's own providers
    // answer: programs such as fabtests take FI_AV_TABLE here to mean they may assume the
    // indices an AV hands out (fi_rdm_multi_client's server then sends to index 0).
    dom.av_type = FI_AV_UNSPEC;
    dom.mr_mode = 0;
    dom.mr_key_size = kMrKeySize;
    dom.cq_data_size = kCqDataSize;
    dom.cq_cnt = kCqCount;
    dom.ep_cnt = kEpCount;
    dom.tx_ctx_cnt = kEpCount;
    dom.rx_ctx_cnt = kEpCount;
    dom.max_ep_tx_ctx = connected ? 1 : kMaxScalableContexts;
    dom.max_ep_rx_ctx = connected ? 1 : kMaxScalableContexts;
    // Endpoints a shared transmit or receive context serves (runtime/ep/shared_rx.h): any.
    dom.max_ep_stx_ctx = kEpCount;
    dom.max_ep_srx_ctx = kEpCount;
    dom.cntr_cnt = kCntrCount;
    dom.mr_iov_limit = kMrIovLimit;
    dom.caps = domain_caps;
    dom.mode = 0;
    dom.max_err_data = kMaxErrData;
    dom.mr_cnt = kMrCount;
    dom.tclass = FI_TC_UNSPEC;
    dom.max_ep_auth_key = kMaxEpAuthKeys;
    dom.max_group_id = 0;
    dom.max_cntr_value = kMaxCntrValue;
    dom.max_err_cntr_value = kMaxCntrValue;
    dom.max_xpu_ctx_cnt = 0;

    fi_fabric_attr &fab = *info->fabric_attr;
    fab.name = dup_cstr(kFabricName);
    fab.prov_name = dup_cstr(kProviderName);
    fab.prov_version = provider_version();
    fab.api_version = api_version;

    if (dom.name == nullptr || fab.name == nullptr || fab.prov_name == nullptr) {
        free_info(info);
        return nullptr;
    }
    return info;
}

fi_info *make_provider_attr_only(uint32_t api_version) {
    fi_info *info = alloc_info();
    if (info == nullptr) return nullptr;
    info->fabric_attr->prov_name = dup_cstr(kProviderName);
    info->fabric_attr->prov_version = provider_version();
    info->fabric_attr->api_version = api_version;
    if (info->fabric_attr->prov_name == nullptr) {
        free_info(info);
        return nullptr;
    }
    return info;
}

}  // namespace ufi::runtime::info
