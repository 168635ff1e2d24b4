#include "runtime/info/hint_match.h"

#include "runtime/c_enum.h"
#include "runtime/info/capabilities.h"
#include "runtime/info/domain_offer.h"
#include "runtime/info/info_alloc.h"
#include "runtime/info/mr_mode.h"
#include "runtime/info/names.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace ufi::runtime::info {

namespace {

using names::FlagSet;

// The traffic class an entry reports for a requested one. ufi's transports here have no way to
// apply one (UCX 1.13's tcp sets no IP_TOS; InfiniBand's service level would need
// UCX_IB_TRAFFIC_CLASS per iface, not wired yet), so only best effort, which every path
// gives, is granted; any other class comes back unset (FI_TC_UNSPEC) rather than claimed.
uint32_t granted_tclass(uint32_t requested) {
    return requested == FI_TC_BEST_EFFORT ? requested : uint32_t{FI_TC_UNSPEC};
}

// Direction qualifiers of the primary capabilities (FI_MSG alone implies all of them).
constexpr uint64_t kDirectionMask =
    FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
// Primary capabilities without their direction qualifiers.
constexpr uint64_t kPrimaryMask = kAllPrimaryCaps & ~kDirectionMask;

std::string caps_str(uint64_t bits) { return names::flags(bits, FlagSet::Caps); }

std::string num(size_t v) { return std::to_string(v); }

// Builds "what: asked X, ufi offers Y" reasons compactly.
std::string too_big(const char *what, size_t asked, size_t offered) {
    return std::string(what) + " " + num(asked) + " exceeds ufi's " + num(offered);
}

// Capabilities the candidate offers, with the direction bits its primaries imply.
uint64_t offered_caps(uint64_t caps) {
    if (caps & (FI_MSG | FI_TAGGED)) caps |= FI_SEND | FI_RECV;
    if (caps & (FI_RMA | FI_ATOMIC)) caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    return caps;
}

// The caps an application gets (fi_getinfo(3)): the primaries it asked for (with all
// directions when it named none; the transfer primaries when it named only secondaries),
// plus every secondary capability the entry has, except FI_SOURCE and FI_SOURCE_ERR, which
// change completions and are returned only on request. Asking for nothing (caps 0, or no
// hints: what fi_info does) gets everything offered, as libfabric's providers answer, except
// libfabric 2.0's receive capabilities (kOnlyOnRequestCaps).
uint64_t negotiated_caps(uint64_t requested, uint64_t offered) {
    if (requested == 0) return offered & ~kApi2Caps;  // (FI_RMA_EVENT included)
    uint64_t primaries = requested & kPrimaryMask;
    uint64_t directions = requested & kDirectionMask;
    // Secondary capabilities alone still get the data-transfer primaries (not the domain's
    // FI_AV_USER_ID, which changes how fi_addr_t values are reported).
    if (primaries == 0) primaries = offered & kPrimaryMask & ~kDomainPrimaryCaps;
    if (directions == 0) directions = offered_caps(primaries) & kDirectionMask;
    constexpr uint64_t kOnRequest = FI_SOURCE | FI_SOURCE_ERR | kOnlyOnRequestCaps;
    const uint64_t secondaries = offered & ~(kPrimaryMask | kDirectionMask | kOnRequest);
    return primaries | directions | secondaries | (requested & offered & kOnRequest);
}

// domain_attr->caps, the same way from the domain hint's caps (0: every domain capability the
// entry's negotiated caps keep).
uint64_t negotiated_domain_caps(uint64_t requested, uint64_t offered, uint64_t info_caps) {
    const uint64_t secondaries = offered & ~kAllPrimaryCaps;
    if (requested == 0) return (offered & info_caps & kAllPrimaryCaps) | secondaries;
    return (requested & offered & kAllPrimaryCaps) | secondaries;
}

// tx_attr->caps / rx_attr->caps: the entry's caps that belong to that side, narrowed to the
// side's hint when it names capabilities of its own (bits of the other side are ignored).
uint64_t tx_rx_caps(uint64_t caps, uint64_t hint, uint64_t side, uint64_t ignored) {
    uint64_t out = caps & side;
    const uint64_t asked = hint & side & ~ignored;
    if (asked != 0) out = negotiated_caps(asked, out) & side;
    return out;
}

// A classic authorization key: none, or 1 to kMaxAuthKeySize bytes that are present.
bool auth_key_ok(const uint8_t *key, size_t size, const char *where, std::string &why) {
    if (size == 0 && key == nullptr) return true;
    if (size == 0 || size > kMaxAuthKeySize || key == nullptr) {
        why = std::string(where) + " auth_key_size " + std::to_string(size) + (key ? "" : " with a NULL key") +
              ": keys are 1 to " + std::to_string(kMaxAuthKeySize) + " bytes";
        return false;
    }
    return true;
}

// Copies a caller's key into a malloc'ed buffer of the output fi_info.
bool copy_key(const uint8_t *key, size_t size, uint8_t *&dst_key, size_t &dst_size) {
    dst_key = nullptr;
    dst_size = size;
    if (key == nullptr || size == 0 || size == FI_AV_AUTH_KEY) return true;
    dst_key = static_cast<uint8_t *>(malloc(size));
    if (dst_key == nullptr) return false;
    memcpy(dst_key, key, size);
    return true;
}

bool check_ep(const fi_ep_attr &prov, const fi_ep_attr &hint, std::string &why) {
    const int type = raw_enum(hint.type);
    if (type != FI_EP_UNSPEC && type != prov.type) {
        why = "ep_type " + std::string(names::ep_type(type)) + " not offered (ufi: " +
              std::string(names::ep_type(prov.type)) + ")";
        return false;
    }
    if (hint.protocol != FI_PROTO_UNSPEC && hint.protocol != prov.protocol) {
        why = "protocol " + std::string(names::protocol(hint.protocol)) + " not offered (ufi: " +
              std::string(names::protocol(prov.protocol)) + ")";
        return false;
    }
    if (hint.protocol_version > prov.protocol_version) {
        why = too_big("protocol_version", hint.protocol_version, prov.protocol_version);
        return false;
    }
    if (hint.max_msg_size > prov.max_msg_size) {
        why = too_big("max_msg_size", hint.max_msg_size, prov.max_msg_size);
        return false;
    }
    if (hint.max_order_raw_size > prov.max_order_raw_size ||
        hint.max_order_war_size > prov.max_order_war_size ||
        hint.max_order_waw_size > prov.max_order_waw_size) {
        why = "max_order_{raw,war,waw}_size larger than ufi's ordering limits";
        return false;
    }
    // (More than one context: a scalable endpoint's, on the connectionless types.)
    const size_t max_ctx = prov.type == FI_EP_MSG ? prov.tx_ctx_cnt : kMaxScalableContexts;
    if (hint.tx_ctx_cnt > max_ctx && hint.tx_ctx_cnt != FI_SHARED_CONTEXT) {
        why = too_big("ep_attr tx_ctx_cnt", hint.tx_ctx_cnt, max_ctx);
        return false;
    }
    if (hint.rx_ctx_cnt > max_ctx && hint.rx_ctx_cnt != FI_SHARED_CONTEXT) {
        why = too_big("ep_attr rx_ctx_cnt", hint.rx_ctx_cnt, max_ctx);
        return false;
    }
    if (hint.auth_key_size == FI_AV_AUTH_KEY) {
        why = "ep_attr auth_key_size FI_AV_AUTH_KEY is a domain attribute value";
        return false;
    }
    if (!auth_key_ok(hint.auth_key, hint.auth_key_size, "ep_attr", why)) return false;
    if (hint.xpu_ctx != nullptr) {
        why = "XPU contexts are not offered";
        return false;
    }
    return true;
}

bool progress_ok(int asked, bool control, std::string &why) {
    switch (asked) {
        case FI_PROGRESS_UNSPEC:
        case FI_PROGRESS_MANUAL:
            return true;
        case FI_PROGRESS_CONTROL_UNIFIED:
            if (control) return true;
            why = "data_progress FI_PROGRESS_CONTROL_UNIFIED is only valid for control_progress";
            return false;
        case FI_PROGRESS_AUTO:
            if (kAutoProgress) return true;
            why = std::string(control ? "control" : "data") +
                  "_progress FI_PROGRESS_AUTO not offered yet (ufi: FI_PROGRESS_MANUAL)";
            return false;
        default:
            why = std::string(control ? "control" : "data") + "_progress value " +
                  std::to_string(asked) + " is unknown";
            return false;
    }
}

bool check_domain(const fi_domain_attr &prov, const fi_domain_attr &hint, std::string &why) {
    if (hint.name != nullptr && strcmp(hint.name, prov.name) != 0) {
        why = std::string("domain name \"") + hint.name + "\" differs";
        return false;
    }
    if (hint.domain != nullptr) {
        // An open domain: only entries for that domain match.
        const DomainOffer *open = offer_of_open_domain(hint.domain);
        if (open == nullptr || open->name != prov.name) {
            why = "domain_attr->domain is another domain";
            return false;
        }
    }
    switch (raw_enum(hint.threading)) {
        case FI_THREAD_UNSPEC: case FI_THREAD_SAFE: case FI_THREAD_FID: case FI_THREAD_DOMAIN:
        case FI_THREAD_COMPLETION: case FI_THREAD_ENDPOINT:
            break;
        default:
            why = "threading value " + std::to_string(raw_enum(hint.threading)) + " is unknown";
            return false;
    }
    if (!progress_ok(raw_enum(hint.control_progress), true, why)) return false;
    if (!progress_ok(raw_enum(hint.data_progress), false, why)) return false;
    switch (raw_enum(hint.resource_mgmt)) {
        case FI_RM_UNSPEC: case FI_RM_ENABLED: case FI_RM_DISABLED:
            break;
        default:
            why = "resource_mgmt value " + std::to_string(raw_enum(hint.resource_mgmt)) + " is unknown";
            return false;
    }
    switch (raw_enum(hint.av_type)) {
        case FI_AV_UNSPEC: case FI_AV_TABLE: case FI_AV_MAP:
            break;
        default:
            why = "av_type value " + std::to_string(raw_enum(hint.av_type)) + " is unknown";
            return false;
    }
    struct Limit { const char *what; size_t asked, offered; };
    const Limit limits[] = {
        {"mr_key_size", hint.mr_key_size, prov.mr_key_size},
        {"cq_data_size", hint.cq_data_size, prov.cq_data_size},
        {"cq_cnt", hint.cq_cnt, prov.cq_cnt},
        {"ep_cnt", hint.ep_cnt, prov.ep_cnt},
        {"domain tx_ctx_cnt", hint.tx_ctx_cnt, prov.tx_ctx_cnt},
        {"domain rx_ctx_cnt", hint.rx_ctx_cnt, prov.rx_ctx_cnt},
        {"max_ep_tx_ctx", hint.max_ep_tx_ctx, prov.max_ep_tx_ctx},
        {"max_ep_rx_ctx", hint.max_ep_rx_ctx, prov.max_ep_rx_ctx},
        {"max_ep_stx_ctx", hint.max_ep_stx_ctx, prov.max_ep_stx_ctx},
        {"max_ep_srx_ctx", hint.max_ep_srx_ctx, prov.max_ep_srx_ctx},
        {"cntr_cnt", hint.cntr_cnt, prov.cntr_cnt},
        {"mr_iov_limit", hint.mr_iov_limit, prov.mr_iov_limit},
        {"mr_cnt", hint.mr_cnt, prov.mr_cnt},
        {"max_ep_auth_key", hint.max_ep_auth_key, prov.max_ep_auth_key},
        {"max_group_id", hint.max_group_id, prov.max_group_id},
        {"max_cntr_value", hint.max_cntr_value, prov.max_cntr_value},
        {"max_err_cntr_value", hint.max_err_cntr_value, prov.max_err_cntr_value},
        {"max_xpu_ctx_cnt", hint.max_xpu_ctx_cnt, prov.max_xpu_ctx_cnt},
    };
    for (const Limit &l : limits) {
        if (l.asked > l.offered) {
            why = too_big(l.what, l.asked, l.offered);
            return false;
        }
    }
    if (hint.caps & ~prov.caps) {
        why = "domain caps " + caps_str(hint.caps & ~prov.caps) + " not offered";
        return false;
    }
    if (hint.auth_key_size != FI_AV_AUTH_KEY && !auth_key_ok(hint.auth_key, hint.auth_key_size, "domain_attr", why)) {
        return false;
    }
    return true;
}

bool check_tx(const fi_tx_attr &prov, const fi_tx_attr &hint, std::string &why) {
    if (const uint64_t extra = hint.caps & ~kIgnoredTxCaps & ~offered_caps(prov.caps)) {
        why = "tx caps " + caps_str(extra) + " not offered";
        return false;
    }
    if (hint.msg_order & ~prov.msg_order) {
        why = "tx msg_order " + names::flags(hint.msg_order & ~prov.msg_order, FlagSet::MsgOrder) +
              " not guaranteed";
        return false;
    }
    if (hint.comp_order & ~prov.comp_order) {
        why = "tx comp_order " + names::flags(hint.comp_order & ~prov.comp_order, FlagSet::CompOrder) +
              " not guaranteed";
        return false;
    }
    if (hint.op_flags & FI_COMMIT_COMPLETE) {
        why = "tx op_flags FI_COMMIT_COMPLETE (persistent memory) not offered";
        return false;
    }
    if (hint.inject_size > prov.inject_size) {
        why = too_big("inject_size", hint.inject_size, prov.inject_size);
        return false;
    }
    if (hint.size > prov.size) {
        why = too_big("tx size", hint.size, prov.size);
        return false;
    }
    if (hint.iov_limit > prov.iov_limit) {
        why = too_big("tx iov_limit", hint.iov_limit, prov.iov_limit);
        return false;
    }
    if (hint.rma_iov_limit > prov.rma_iov_limit) {
        why = too_big("rma_iov_limit", hint.rma_iov_limit, prov.rma_iov_limit);
        return false;
    }
    return true;
}

bool check_rx(const fi_rx_attr &prov, const fi_rx_attr &hint, std::string &why) {
    if (const uint64_t extra = hint.caps & ~kIgnoredRxCaps & ~offered_caps(prov.caps)) {
        why = "rx caps " + caps_str(extra) + " not offered";
        return false;
    }
    if (hint.msg_order & ~prov.msg_order) {
        why = "rx msg_order " + names::flags(hint.msg_order & ~prov.msg_order, FlagSet::MsgOrder) +
              " not guaranteed";
        return false;
    }
    if (hint.comp_order & ~prov.comp_order) {
        why = "rx comp_order " + names::flags(hint.comp_order & ~prov.comp_order, FlagSet::CompOrder) +
              " not guaranteed";
        return false;
    }
    if (hint.size > prov.size) {
        why = too_big("rx size", hint.size, prov.size);
        return false;
    }
    if (hint.iov_limit > prov.iov_limit) {
        why = too_big("rx iov_limit", hint.iov_limit, prov.iov_limit);
        return false;
    }
    return true;
}

bool check_fabric(const fi_fabric_attr &prov, const fi_fabric_attr &hint, std::string &why) {
    if (hint.name != nullptr && strcmp(hint.name, prov.name) != 0) {
        why = std::string("fabric name \"") + hint.name + "\" differs (ufi: \"" + prov.name + "\")";
        return false;
    }
    if (hint.fabric != nullptr) {
        // An open fabric: ufi has one fabric, so any ufi fabric handle matches; a foreign
        // handle cannot reach us (it would come from another library).
        return true;
    }
    if (hint.prov_version != 0 && hint.prov_version > prov.prov_version) {
        why = "prov_version newer than ufi's";
        return false;
    }
    return true;
}

}  // namespace

MatchResult match_hints(const fi_info &cand, const fi_info *hints, uint32_t api_version) {
    MatchResult res;
    const uint64_t offered = offered_caps(cand.caps);
    // No hints: everything offered (FI_RMA_EVENT too), but the API 2.0 receive caps (they
    // restrict what an application may do).
    uint64_t caps = cand.caps & ~kApi2Caps;
    uint32_t addr_format = cand.addr_format;
    std::optional<int> mr_mode_request;  // none without domain hints

    if (hints != nullptr) {
        if (hints->caps & ~offered) {
            res.reason = "caps " + caps_str(hints->caps & ~offered) + " not offered (ufi: " +
                         (cand.caps ? caps_str(cand.caps) : std::string("no primary capability yet")) + ")";
            return res;
        }
        caps = negotiated_caps(hints->caps, offered);
        if (kRequiredModes & ~hints->mode) {
            res.reason = "mode " + names::flags(kRequiredModes & ~hints->mode, FlagSet::Mode) +
                         " required by ufi but not offered";
            return res;
        }
        switch (hints->addr_format) {
            case FI_FORMAT_UNSPEC:
                break;
            case FI_ADDR_UCX:
            case FI_ADDR_STR:
            case FI_SOCKADDR:  // a domain with tcp only (getinfo.cpp checks per domain)
            case FI_SOCKADDR_IN:
            case FI_SOCKADDR_IN6:
                addr_format = hints->addr_format;
                break;
            default:
                res.reason = "addr_format " + std::string(names::addr_format(hints->addr_format)) +
                             " not offered (ufi: FI_ADDR_UCX, FI_ADDR_STR, FI_SOCKADDR_IN[6])";
                return res;
        }
        if (cand.ep_attr->type == FI_EP_MSG && addr_format != FI_SOCKADDR &&
            addr_format != FI_SOCKADDR_IN && addr_format != FI_SOCKADDR_IN6) {
            res.reason = "addr_format " + std::string(names::addr_format(addr_format)) +
                         ": FI_EP_MSG endpoints are addressed by socket address";
            return res;
        }
        if (hints->ep_attr && !check_ep(*cand.ep_attr, *hints->ep_attr, res.reason)) return res;
        if (hints->domain_attr) {
            if (!check_domain(*cand.domain_attr, *hints->domain_attr, res.reason)) return res;
            mr_mode_request = hints->domain_attr->mr_mode;
        }
        if (hints->tx_attr && !check_tx(*cand.tx_attr, *hints->tx_attr, res.reason)) return res;
        if (hints->rx_attr && !check_rx(*cand.rx_attr, *hints->rx_attr, res.reason)) return res;
        if (hints->fabric_attr && !check_fabric(*cand.fabric_attr, *hints->fabric_attr, res.reason))
            return res;
        if (hints->nic != nullptr && hints->nic->device_attr != nullptr &&
            hints->nic->device_attr->name != nullptr) {
            const char *dev = hints->nic->device_attr->name;
            if (cand.domain_attr->name == nullptr || strcmp(dev, cand.domain_attr->name) != 0) {
                res.reason = std::string("nic ") + dev + " is not this domain's device";
                return res;
            }
        }
    }

    const MrModeOutcome mr = negotiate_mr_mode(mr_mode_request, api_version, caps);
    if (!mr.ok) {
        res.reason = mr.reason;
        return res;
    }

    fi_info *out = dup_info(&cand);
    if (out == nullptr) {
        res.error = -FI_ENOMEM;
        res.reason = "out of memory";
        return res;
    }
    out->caps = caps;
    out->addr_format = addr_format;
    out->tx_attr->caps = tx_rx_caps(caps, hints && hints->tx_attr ? hints->tx_attr->caps : 0,
                                    kTxCaps, kIgnoredTxCaps);
    out->rx_attr->caps = tx_rx_caps(caps, hints && hints->rx_attr ? hints->rx_attr->caps : 0,
                                    kRxCaps, kIgnoredRxCaps);
    out->domain_attr->caps = negotiated_domain_caps(
        hints && hints->domain_attr ? hints->domain_attr->caps : 0, cand.domain_attr->caps, caps);
    out->domain_attr->mr_mode = mr.mr_mode;

    if (hints != nullptr) {
        out->mode = cand.mode & hints->mode;
        if (hints->domain_attr) {
            const fi_domain_attr &h = *hints->domain_attr;
            fi_domain_attr &d = *out->domain_attr;
            if (h.threading != FI_THREAD_UNSPEC) d.threading = h.threading;
            if (h.control_progress != FI_PROGRESS_UNSPEC) d.control_progress = h.control_progress;
            if (h.data_progress != FI_PROGRESS_UNSPEC) d.data_progress = h.data_progress;
            if (h.resource_mgmt != FI_RM_UNSPEC) d.resource_mgmt = h.resource_mgmt;
            if (h.av_type != FI_AV_UNSPEC) d.av_type = h.av_type;
            d.tclass = granted_tclass(h.tclass);
            d.mode = cand.domain_attr->mode & h.mode;
        }
        // Scalable endpoints' contexts are reported to applications that ask for them:
        // FI_NAMED_RX_CTX, more than one context, or room for more. Others are told 1, as of
        // an endpoint: Open MPI 4.1's btl/ofi opens a scalable endpoint whenever
        // max_ep_tx_ctx > 1 and reads its name into FI_NAME_MAX bytes, which a name of one
        // name per context outgrows (docs/endpoints.md). fi_scalable_ep works either way.
        const bool asks_scalable =
            (hints->caps & FI_NAMED_RX_CTX) ||
            (hints->ep_attr && ((hints->ep_attr->tx_ctx_cnt > 1 && hints->ep_attr->tx_ctx_cnt != FI_SHARED_CONTEXT) ||
                                (hints->ep_attr->rx_ctx_cnt > 1 && hints->ep_attr->rx_ctx_cnt != FI_SHARED_CONTEXT))) ||
            (hints->domain_attr && (hints->domain_attr->max_ep_tx_ctx > 1 || hints->domain_attr->max_ep_rx_ctx > 1));
        if (!asks_scalable) {
            out->domain_attr->max_ep_tx_ctx = std::min<size_t>(out->domain_attr->max_ep_tx_ctx, 1);
            out->domain_attr->max_ep_rx_ctx = std::min<size_t>(out->domain_attr->max_ep_rx_ctx, 1);
        }
        // FI_SHARED_CONTEXT asked for stays in the answer: the endpoint then takes its
        // contexts from fi_stx_context / fi_srx_context (runtime/ep/shared_rx.h).
        if (hints->ep_attr) {
            // (So do the context counts of a scalable endpoint: fi_scalable_ep opens that many.)
            if (hints->ep_attr->tx_ctx_cnt != 0) out->ep_attr->tx_ctx_cnt = hints->ep_attr->tx_ctx_cnt;
            if (hints->ep_attr->rx_ctx_cnt != 0) out->ep_attr->rx_ctx_cnt = hints->ep_attr->rx_ctx_cnt;
        }
        bool keys_ok = true;
        if (hints->domain_attr) {
            const fi_domain_attr &h = *hints->domain_attr;
            keys_ok &= copy_key(h.auth_key, h.auth_key_size, out->domain_attr->auth_key, out->domain_attr->auth_key_size);
        }
        if (hints->ep_attr) {
            const fi_ep_attr &h = *hints->ep_attr;
            keys_ok &= copy_key(h.auth_key, h.auth_key_size, out->ep_attr->auth_key, out->ep_attr->auth_key_size);
        }
        if (!keys_ok) {
            free_info(out);
            res.error = -FI_ENOMEM;
            res.reason = "out of memory";
            return res;
        }
        // Orderings: SAS always, the others when asked for (they make operations wait).
        out->tx_attr->msg_order =
            kMsgOrder | (hints->tx_attr ? hints->tx_attr->msg_order & kRequestableOrder : 0);
        out->rx_attr->msg_order =
            kMsgOrder | (hints->rx_attr ? hints->rx_attr->msg_order & kRequestableOrder : 0);
        if (hints->tx_attr) {
            out->tx_attr->op_flags = hints->tx_attr->op_flags;
            out->tx_attr->mode = cand.tx_attr->mode & hints->tx_attr->mode;
            out->tx_attr->tclass = granted_tclass(hints->tx_attr->tclass);
        }
        if (hints->rx_attr) {
            out->rx_attr->op_flags = hints->rx_attr->op_flags;
            out->rx_attr->mode = cand.rx_attr->mode & hints->rx_attr->mode;
        }
        // FI_MSG_PREFIX (the candidate has it only where the application offered it, in mode
        // or in either direction's): required of both directions.
        if (cand.mode & FI_MSG_PREFIX) {
            out->mode |= FI_MSG_PREFIX;
            out->tx_attr->mode |= FI_MSG_PREFIX;
            out->rx_attr->mode |= FI_MSG_PREFIX;
        }
        if (hints->fabric_attr && hints->fabric_attr->fabric) {
            out->fabric_attr->fabric = hints->fabric_attr->fabric;
        }
    }
    res.info = out;
    return res;
}

}  // namespace ufi::runtime::info
