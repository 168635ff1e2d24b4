// Kernel network interfaces as the getinfo code needs them: which interface owns
// which IPv4/IPv6 address, which one is loopback, and where a NIC sits on PCI.
// UCT names its network devices after kernel interfaces (tcp/eth0) or RDMA
// devices (rc_mlx5/mlx5_0:1); these helpers map both to interfaces.
#pragma once

#include "transports/resource.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ufi::transports {

// Every interface getifaddrs() reports, in kernel order, with its addresses,
// loopback/up flags and PCI bus id (when sysfs shows one).
std::vector<NetInterface> list_net_interfaces();

// True when the kernel interface has IFF_LOOPBACK (ioctl SIOCGIFFLAGS). False for
// names that are not kernel interfaces (mlx5_0:1) or on any error.
bool is_loopback_interface(std::string_view name);

// The PCI bus id ("0000:00:03.0") of a sysfs device link such as
// /sys/class/net/eth0/device or /sys/class/infiniband/mlx5_0/device: the last
// path component of its real path that looks like a PCI address. Virtual
// devices (lo) have none.
std::optional<std::string> pci_bus_id_of_sysfs_device(const std::string &device_link);

// The PCI bus id of a kernel network interface or of an RDMA device name with an
// optional port suffix ("mlx5_0:1").
std::optional<std::string> netdev_pci_bus_id(std::string_view netdev);
std::optional<std::string> rdma_device_pci_bus_id(std::string_view rdma_dev);

// The kernel interface bound to an RDMA device port ("mlx5_0:1" -> "ib0"), from
// /sys/class/infiniband/<dev>/device/net/*/dev_port. Empty when unknown.
std::string rdma_port_netdev(std::string_view rdma_dev_port);

// Splits "mlx5_0:1" into ("mlx5_0", 1); a name without a numeric ":port" suffix
// comes back whole with port 0.
std::pair<std::string, unsigned> split_device_port(std::string_view dev);

}  // namespace ufi::transports
