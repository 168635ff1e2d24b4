#include "transports/iface/iface_caps.h"

namespace ufi::transports {

IfaceCaps caps_of(const uct_iface_attr_t &a) {
    IfaceCaps c;
    c.flags = a.cap.flags;
    c.event_flags = a.cap.event_flags;
    auto rma = [](const auto &src) {
        RmaLimits l;
        l.max_short = src.max_short;
        l.max_bcopy = src.max_bcopy;
        l.min_zcopy = src.min_zcopy;
        l.max_zcopy = src.max_zcopy;
        l.opt_zcopy_align = src.opt_zcopy_align;
        l.align_mtu = src.align_mtu;
        l.max_iov = src.max_iov;
        return l;
    };
    c.limits.am = {a.cap.am.max_short, a.cap.am.max_bcopy,       a.cap.am.min_zcopy,
                   a.cap.am.max_zcopy, a.cap.am.opt_zcopy_align, a.cap.am.align_mtu,
                   a.cap.am.max_hdr,   a.cap.am.max_iov};
    c.limits.put = rma(a.cap.put);
    c.limits.get = rma(a.cap.get);
    c.limits.atomic32 = {a.cap.atomic32.op_flags, a.cap.atomic32.fop_flags};
    c.limits.atomic64 = {a.cap.atomic64.op_flags, a.cap.atomic64.fop_flags};
    c.limits.max_conn_priv = a.max_conn_priv;
    c.perf.latency_s = a.latency.c;
    c.perf.latency_per_ep_s = a.latency.m;
    c.perf.overhead_s = a.overhead;
    c.perf.bandwidth_dedicated = a.bandwidth.dedicated;
    c.perf.bandwidth_shared = a.bandwidth.shared;
    c.perf.priority = a.priority;
    c.perf.max_num_eps = a.max_num_eps;
    c.perf.dev_num_paths = a.dev_num_paths;
    c.device_addr_len = a.device_addr_len;
    c.iface_addr_len = a.iface_addr_len;
    c.ep_addr_len = a.ep_addr_len;
    c.am_short = (a.cap.flags & UCT_IFACE_FLAG_AM_SHORT) != 0;
    c.am_bcopy = (a.cap.flags & UCT_IFACE_FLAG_AM_BCOPY) != 0;
    c.am_zcopy = (a.cap.flags & UCT_IFACE_FLAG_AM_ZCOPY) != 0;
    c.get_zcopy = (a.cap.flags & UCT_IFACE_FLAG_GET_ZCOPY) != 0;
    c.put_zcopy = (a.cap.flags & UCT_IFACE_FLAG_PUT_ZCOPY) != 0;
    c.ep_check = (a.cap.flags & UCT_IFACE_FLAG_EP_CHECK) != 0;
    c.ep_keepalive = (a.cap.flags & UCT_IFACE_FLAG_EP_KEEPALIVE) != 0;
    return c;
}

}  // namespace ufi::transports
