#include "transports/op_limits.h"

#include <uct/api/uct.h>

namespace ufi::transports {

std::optional<std::size_t> am_send_max(const Resource &r) {
    if (r.has(UCT_IFACE_FLAG_AM_SHORT)) return r.limits.am.max_short;
    if (r.has(UCT_IFACE_FLAG_AM_BCOPY)) return r.limits.am.max_bcopy;
    return std::nullopt;
}

std::optional<std::size_t> am_datagram_max(const Resource &r) {
    if (r.has(UCT_IFACE_FLAG_AM_BCOPY)) return r.limits.am.max_bcopy;
    if (r.has(UCT_IFACE_FLAG_AM_SHORT)) return r.limits.am.max_short;
    return std::nullopt;
}

std::size_t am_zcopy_max_iov(const Resource &r) {
    return r.has(UCT_IFACE_FLAG_AM_ZCOPY) ? r.limits.am.max_iov : 0;
}

std::size_t put_zcopy_max_iov(const Resource &r) {
    return r.has(UCT_IFACE_FLAG_PUT_ZCOPY) ? r.limits.put.max_iov : 0;
}

std::size_t get_zcopy_max_iov(const Resource &r) {
    return r.has(UCT_IFACE_FLAG_GET_ZCOPY) ? r.limits.get.max_iov : 0;
}

std::vector<SizeLimit> op_size_limits(const Resource &r) {
    const IfaceLimits &l = r.limits;
    const struct {
        std::uint64_t flag;
        std::string_view name;
        std::size_t value;
    } all[] = {
        {UCT_IFACE_FLAG_AM_SHORT, "am_short_max", l.am.max_short},
        {UCT_IFACE_FLAG_AM_BCOPY, "am_bcopy_max", l.am.max_bcopy},
        {UCT_IFACE_FLAG_AM_ZCOPY, "am_zcopy_max", l.am.max_zcopy},
        {UCT_IFACE_FLAG_AM_ZCOPY, "am_zcopy_max_iov", l.am.max_iov},
        {UCT_IFACE_FLAG_AM_ZCOPY, "am_zcopy_max_hdr", l.am.max_hdr},
        {UCT_IFACE_FLAG_PUT_SHORT, "put_short_max", l.put.max_short},
        {UCT_IFACE_FLAG_PUT_BCOPY, "put_bcopy_max", l.put.max_bcopy},
        {UCT_IFACE_FLAG_PUT_ZCOPY, "put_zcopy_max", l.put.max_zcopy},
        {UCT_IFACE_FLAG_PUT_ZCOPY, "put_zcopy_max_iov", l.put.max_iov},
        {UCT_IFACE_FLAG_GET_SHORT, "get_short_max", l.get.max_short},
        {UCT_IFACE_FLAG_GET_BCOPY, "get_bcopy_max", l.get.max_bcopy},
        {UCT_IFACE_FLAG_GET_ZCOPY, "get_zcopy_max", l.get.max_zcopy},
        {UCT_IFACE_FLAG_GET_ZCOPY, "get_zcopy_max_iov", l.get.max_iov},
    };
    std::vector<SizeLimit> out;
    for (const auto &a : all) {
        if (r.has(a.flag)) out.push_back({a.name, a.value});
    }
    return out;
}

}  // namespace ufi::transports
