#include "runtime/av/socket_format.h"

#include "transports/address.h"
#include "transports/address_svc.h"

#include <rdma/fabric.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace ufi::runtime::av {

namespace {

int family_of(uint32_t format) {
    return format == FI_SOCKADDR_IN ? AF_INET : format == FI_SOCKADDR_IN6 ? AF_INET6 : AF_UNSPEC;
}

}  // namespace

bool is_socket_format(uint32_t format) noexcept {
    return format == FI_SOCKADDR || format == FI_SOCKADDR_IN || format == FI_SOCKADDR_IN6;
}

socklen_t socket_of_blob(const uint8_t *blob, size_t len, uint32_t format,
                         sockaddr_storage &out) noexcept {
    socklen_t n = 0;
    return transports::address::tcp_socket_address(blob, len, family_of(format), out, n) ? n : 0;
}

std::vector<uint8_t> socket_bytes(const uint8_t *blob, size_t len, uint32_t format) {
    sockaddr_storage ss;
    const socklen_t n = socket_of_blob(blob, len, format, ss);
    const auto *p = reinterpret_cast<const uint8_t *>(&ss);
    return n == 0 ? std::vector<uint8_t>{} : std::vector<uint8_t>(p, p + n);
}

size_t blob_of_socket(const void *addr, size_t avail, uint32_t format, std::vector<uint8_t> &blob,
                      std::string &why) {
    const size_t n = transports::address::socket_address_length(addr, avail, family_of(format), &why);
    if (n == 0) return 0;
    sockaddr_storage ss{};
    std::memcpy(&ss, addr, n);
    blob = transports::address::tcp_peer_address(reinterpret_cast<const sockaddr *>(&ss), &why);
    return blob.empty() ? 0 : n;
}

std::string socket_string(const void *addr, size_t len) {
    sockaddr_storage ss{};
    std::memcpy(&ss, addr, std::min(len, sizeof ss));
    char ip[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
        const auto *in = reinterpret_cast<const sockaddr_in *>(&ss);
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
        return std::string("fi_sockaddr_in://") + ip + ":" + std::to_string(ntohs(in->sin_port));
    }
    if (ss.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
        const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(&ss);
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
        return std::string("fi_sockaddr_in6://[") + ip + "]:" + std::to_string(ntohs(in6->sin6_port));
    }
    return {};
}

}  // namespace ufi::runtime::av
