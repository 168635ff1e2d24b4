// A network namespace with one end of a veth pair (IPv6 fd00:: addresses), the other end in
// this namespace; removed at the end. For tests between two processes of this host that do not
// share a network namespace, as containers that share /dev/shm but not the network: one
// process enters the namespace (enter_netns) before it opens anything, and each side's ufi
// uses its end of the pair (UFI_NET_DEVICES). Needs root and ip(8); why_not() says what was
// missing, for GTEST_SKIP.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ufi::two_process {

class NetnsPair {
  public:
    NetnsPair() {
        if (geteuid() != 0) {
            why_ = "needs root to make a network namespace";
            return;
        }
        const std::string id = std::to_string(getpid() % 100000);
        ns_ = "ufi_test_" + id;
        dev_a_ = "ufi" + id + "a";
        dev_b_ = "ufi" + id + "b";
        const std::string cmds[] = {
            "ip netns add " + ns_,
            "ip link add " + dev_a_ + " type veth peer name " + dev_b_,
            "ip link set " + dev_b_ + " netns " + ns_,
            "ip -6 addr add " + addr_a_ + "/64 dev " + dev_a_ + " nodad",
            "ip link set " + dev_a_ + " up",
            "ip netns exec " + ns_ + " ip -6 addr add " + addr_b_ + "/64 dev " + dev_b_ + " nodad",
            "ip netns exec " + ns_ + " ip link set " + dev_b_ + " up",
        };
        for (const std::string &c : cmds) {
            if (std::system((c + " 2>/dev/null").c_str()) != 0) {
                why_ = "`" + c + "` failed (root and ip(8) are needed)";
                return;
            }
        }
    }
    ~NetnsPair() {
        (void)!std::system(("ip link del " + dev_a_ + " 2>/dev/null").c_str());
        (void)!std::system(("ip netns del " + ns_ + " 2>/dev/null").c_str());
    }
    NetnsPair(const NetnsPair &) = delete;
    NetnsPair &operator=(const NetnsPair &) = delete;

    const std::string &why_not() const { return why_; }
    const std::string &netns() const { return ns_; }
    const std::string &dev_a() const { return dev_a_; }  // in this namespace
    const std::string &dev_b() const { return dev_b_; }  // in netns()
    const std::string &addr_a() const { return addr_a_; }
    const std::string &addr_b() const { return addr_b_; }

  private:
    std::string ns_, dev_a_, dev_b_, why_;
    const std::string addr_a_ = "fd00:75f1::1", addr_b_ = "fd00:75f1::2";
};

// Moves the calling process (a child of the pair) into network namespace `netns` as
// `ip netns exec` does, with a private /sys showing that namespace's devices (UCX lists network
// devices from /sys/class/net). False, with errno, when a step failed.
inline bool enter_netns(const std::string &netns) {
    const std::string path = "/var/run/netns/" + netns;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool in = setns(fd, CLONE_NEWNET) == 0;
    close(fd);
    return in && unshare(CLONE_NEWNS) == 0 &&
           mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) == 0 &&
           umount2("/sys", MNT_DETACH) == 0 &&
           mount(netns.c_str(), "/sys", "sysfs", 0, nullptr) == 0;
}

}  // namespace ufi::two_process
