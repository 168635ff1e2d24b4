#include "transports/net_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace ufi::transports {

namespace {

namespace fs = std::filesystem;

bool looks_like_pci_bus_id(std::string_view s) {
    // dddd:bb:dd.f in hex
    if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') {
        return false;
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i == 4 || i == 7 || i == 10) {
            continue;
        }
        if (std::isxdigit(static_cast<unsigned char>(s[i])) == 0) {
            return false;
        }
    }
    return true;
}

unsigned prefix_len_of(const sockaddr *mask) {
    if (mask == nullptr) {
        return 0;
    }
    unsigned bits = 0;
    if (mask->sa_family == AF_INET) {
        const auto *sin = reinterpret_cast<const sockaddr_in *>(mask);
        bits = std::popcount(static_cast<std::uint32_t>(sin->sin_addr.s_addr));
    } else if (mask->sa_family == AF_INET6) {
        const auto *sin6 = reinterpret_cast<const sockaddr_in6 *>(mask);
        for (unsigned char byte : sin6->sin6_addr.s6_addr) {
            bits += std::popcount(static_cast<unsigned>(byte));
        }
    }
    return bits;
}

std::optional<std::string> address_text(const sockaddr *sa) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (sa->sa_family == AF_INET) {
        const auto *sin = reinterpret_cast<const sockaddr_in *>(sa);
        if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf)) != nullptr) {
            return std::string(buf);
        }
    } else if (sa->sa_family == AF_INET6) {
        const auto *sin6 = reinterpret_cast<const sockaddr_in6 *>(sa);
        if (inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf)) != nullptr) {
            return std::string(buf);
        }
    }
    return std::nullopt;
}

std::string read_first_line(const fs::path &p) {
    std::ifstream in(p);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

std::pair<std::string, unsigned> split_device_port(std::string_view dev) {
    auto colon = dev.rfind(':');
    if (colon == std::string_view::npos || colon + 1 >= dev.size()) {
        return {std::string(dev), 0};
    }
    std::string_view port = dev.substr(colon + 1);
    if (!std::all_of(port.begin(), port.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
        return {std::string(dev), 0};
    }
    return {std::string(dev.substr(0, colon)),
            static_cast<unsigned>(std::stoul(std::string(port)))};
}

bool is_loopback_interface(std::string_view name) {
    if (name.empty() || name.size() >= IFNAMSIZ) {
        return false;
    }
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return false;
    }
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, name.data(), name.size());
    bool loopback = false;
    if (::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
        loopback = (ifr.ifr_flags & IFF_LOOPBACK) != 0;
    }
    ::close(fd);
    return loopback;
}

std::optional<std::string> pci_bus_id_of_sysfs_device(const std::string &device_link) {
    std::error_code ec;
    fs::path real = fs::canonical(device_link, ec);
    if (ec) {
        return std::nullopt;
    }
    std::optional<std::string> found;
    for (const fs::path &component : real) {
        std::string s = component.string();
        if (looks_like_pci_bus_id(s)) {
            found = s;  // keep the deepest (last) one: the device, not an upstream bridge
        }
    }
    return found;
}

std::optional<std::string> netdev_pci_bus_id(std::string_view netdev) {
    if (netdev.empty() || netdev.find('/') != std::string_view::npos) {
        return std::nullopt;
    }
    return pci_bus_id_of_sysfs_device("/sys/class/net/" + std::string(netdev) + "/device");
}

std::optional<std::string> rdma_device_pci_bus_id(std::string_view rdma_dev) {
    std::string dev = split_device_port(rdma_dev).first;
    if (dev.empty() || dev.find('/') != std::string::npos) {
        return std::nullopt;
    }
    return pci_bus_id_of_sysfs_device("/sys/class/infiniband/" + dev + "/device");
}

std::string rdma_port_netdev(std::string_view rdma_dev_port) {
    auto [dev, port] = split_device_port(rdma_dev_port);
    if (dev.empty() || dev.find('/') != std::string::npos) {
        return {};
    }
    std::error_code ec;
    fs::path net_dir = fs::path("/sys/class/infiniband") / dev / "device" / "net";
    std::vector<std::string> names;
    for (const auto &entry : fs::directory_iterator(net_dir, ec)) {
        names.push_back(entry.path().filename().string());
    }
    if (ec || names.empty()) {
        return {};
    }
    std::sort(names.begin(), names.end());
    for (const std::string &n : names) {
        // dev_port is 0-based; UCT ports are 1-based.
        std::string dev_port = read_first_line(net_dir / n / "dev_port");
        if (!dev_port.empty() && port > 0 && std::to_string(port - 1) == dev_port) {
            return n;
        }
    }
    return names.size() == 1 ? names.front() : std::string{};
}

std::vector<NetInterface> list_net_interfaces() {
    std::vector<NetInterface> out;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) {
        return out;
    }
    for (ifaddrs *ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
        if (ifa->ifa_name == nullptr) {
            continue;
        }
        std::string name = ifa->ifa_name;
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const NetInterface &n) { return n.name == name; });
        if (it == out.end()) {
            NetInterface n;
            n.name = name;
            n.is_loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
            n.is_up = (ifa->ifa_flags & IFF_UP) != 0;
            n.pci_bus_id = netdev_pci_bus_id(name);
            out.push_back(std::move(n));
            it = std::prev(out.end());
        }
        if (ifa->ifa_addr == nullptr) {
            continue;
        }
        if (auto text = address_text(ifa->ifa_addr)) {
            InterfaceAddress a;
            a.family = ifa->ifa_addr->sa_family;
            a.address = std::move(*text);
            a.prefix_len = prefix_len_of(ifa->ifa_netmask);
            it->addresses.push_back(std::move(a));
        }
    }
    ::freeifaddrs(list);
    return out;
}

}  // namespace ufi::transports
