// fi_av_insertsym's address ranges: node and service sequences as fi_av(3) describes them.
#include "runtime/av/av.h"
#include "transports/address_svc.h"

#include <rdma/fi_errno.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cctype>
#include <climits>
#include <cstring>

namespace ufi::runtime::av {

namespace {

// Adds `n` to a 16-byte big-endian number; false on overflow.
bool add_be128(uint8_t *b, uint64_t n) {
    for (int i = 15; i >= 0 && n != 0; --i) {
        const uint64_t sum = b[i] + (n & 0xff);
        b[i] = static_cast<uint8_t>(sum);
        n = (n >> 8) + (sum >> 8);
    }
    return n == 0;
}

}  // namespace

int expand_symmetric(const char *node, size_t nodecnt, const char *service, size_t svccnt,
                     std::vector<std::pair<std::string, std::string>> &out, std::string *why) {
    auto fail = [&](std::string text) {
        if (why != nullptr) *why = std::move(text);
        return -FI_EINVAL;
    };
    out.clear();
    if (node == nullptr) return fail("node is NULL");
    if (service == nullptr) return fail("service is NULL: ufi needs the first port number");
    if (nodecnt == 0 || svccnt == 0) return fail("nodecnt and svccnt must be at least 1");
    if (nodecnt > INT_MAX / svccnt)
        return fail("nodecnt x svccnt exceeds the number of addresses one call can insert");
    if (std::strspn(service, "0123456789") != std::strlen(service))
        return fail(std::string("service \"") + service +
                    "\" is not a port number (a range of ports is counted up from a number)");
    uint16_t first_port = 0;
    std::string bad;
    if (!transports::address::parse_service(service, false, first_port, &bad)) return fail(bad);
    const unsigned port = first_port;
    if (port + (svccnt - 1) > 65535)
        return fail("service range " + std::to_string(port) + " + " + std::to_string(svccnt) +
                    " goes beyond port 65535");

    std::vector<std::string> nodes;
    nodes.reserve(nodecnt);
    in_addr v4;
    in6_addr v6;
    if (inet_pton(AF_INET, node, &v4) == 1) {
        const uint64_t first = ntohl(v4.s_addr);
        if (first + (nodecnt - 1) > 0xffffffffULL)
            return fail(std::string("node range from ") + node + " overflows");
        char buf[INET_ADDRSTRLEN];
        for (size_t i = 0; i < nodecnt; ++i) {
            in_addr a;
            a.s_addr = htonl(static_cast<uint32_t>(first + i));
            nodes.emplace_back(inet_ntop(AF_INET, &a, buf, sizeof buf));
        }
    } else if (inet_pton(AF_INET6, node, &v6) == 1) {
        char buf[INET6_ADDRSTRLEN];
        for (size_t i = 0; i < nodecnt; ++i) {
            in6_addr a = v6;
            if (!add_be128(a.s6_addr, i))
                return fail(std::string("node range from ") + node + " overflows");
            nodes.emplace_back(inet_ntop(AF_INET6, &a, buf, sizeof buf));
        }
    } else {
        // A host name: host10 -> host10, host11, ... (the suffix keeps its width: host09 ->
        // host10).
        const size_t len = std::strlen(node);
        size_t digits = 0;
        while (digits < len && std::isdigit(static_cast<unsigned char>(node[len - 1 - digits])))
            ++digits;
        if (nodecnt > 1 && digits == 0) {
            return fail(std::string("node \"") + node +
                        "\" is a host name without a numeric suffix, so it has no range");
        }
        if (digits > 18)
            return fail(std::string("node \"") + node +
                        "\" has a numeric suffix too long to count with");
        const std::string prefix(node, len - digits);
        const uint64_t first = digits == 0 ? 0 : std::stoull(std::string(node + len - digits));
        for (size_t i = 0; i < nodecnt; ++i) {
            if (digits == 0) {
                nodes.emplace_back(node);
                continue;
            }
            std::string num = std::to_string(first + i);
            if (num.size() < digits) num.insert(0, digits - num.size(), '0');
            nodes.push_back(prefix + num);
        }
    }
    out.reserve(nodecnt * svccnt);
    for (const std::string &n : nodes) {
        for (size_t s = 0; s < svccnt; ++s) out.emplace_back(n, std::to_string(port + s));
    }
    return 0;
}

}  // namespace ufi::runtime::av
