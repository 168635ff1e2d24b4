// ufi_perf's side of the fabric, through the public API only: one endpoint with its CQ
// (FI_THREAD_DOMAIN: one thread drives it) and buffers for the largest message. An RDM
// endpoint has an AV and the peer inserted from the address the other side sent; a connected
// (FI_EP_MSG) endpoint has an EQ and is connected through the server's passive endpoint,
// whose name the other side sent, and names its peer FI_ADDR_NOTAVAIL.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ufi::perf {

class Endpoint {
  public:
    Endpoint() = default;
    ~Endpoint();
    Endpoint(const Endpoint &) = delete;
    Endpoint &operator=(const Endpoint &) = delete;

    // `rma`: the endpoint also does RMA (FI_RMA), into a window register_window() makes.
    bool open(bool rma, std::string &error);
    // FI_EP_MSG, server: a passive endpoint listening on a port the kernel picks (its name,
    // a socket address, is listen_name()); accept() then takes one connection request.
    bool listen(bool rma, std::string &error);
    std::vector<uint8_t> listen_name() const;
    bool accept(int timeout_ms, std::string &error);
    // FI_EP_MSG, client: an endpoint connected to the passive endpoint named `server`.
    bool connect(bool rma, const std::vector<uint8_t> &server, int timeout_ms, std::string &error);
    // Registers a window of `size` bytes peers read and write (FI_REMOTE_READ |
    // FI_REMOTE_WRITE); its key and the address peers name its first byte with.
    bool register_window(size_t size, std::string &error);
    uint8_t *window() { return window_.data(); }
    uint64_t window_key() const;
    uint64_t window_addr() const;
    std::vector<uint8_t> name() const;
    bool insert_peer(const std::vector<uint8_t> &name, std::string &error);
    // One more peer (group runs: group.h): its fi_addr_t in `out`.
    bool insert(const std::vector<uint8_t> &name, fi_addr_t &out, std::string &error);

    fid_ep *ep() const { return ep_; }
    fid_cq *cq() const { return cq_; }
    fi_addr_t peer() const { return peer_; }
    const fi_info *info() const { return info_; }
    // Where the transports of the chosen domain are: "eth0", "shm", ...
    std::string domain_name() const;

    // Reads completions (spinning: manual progress) until `total` have arrived since the
    // endpoint opened; false on an error completion or after `timeout_ms` without one.
    bool wait_total(uint64_t total, std::string &error, int timeout_ms = 60000);
    uint64_t completed() const { return completed_; }
    // Reads what completions there are (progressing the endpoint) without waiting.
    bool poll(std::string &error);

  private:
    bool open_fabric(bool rma, fi_ep_type type, std::string &error);
    bool open_endpoint(std::string &error);  // on info_, bound to cq_ and av_ or eq_
    // Reads eq_ until `event` comes; false on an error event or after `timeout_ms`.
    bool wait_event(uint32_t event, fi_eq_cm_entry &entry, int timeout_ms, std::string &error);

    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    fid_av *av_ = nullptr;
    fid_cq *cq_ = nullptr;
    fid_ep *ep_ = nullptr;
    fid_eq *eq_ = nullptr;     // FI_EP_MSG
    fid_pep *pep_ = nullptr;   // FI_EP_MSG, server
    fi_addr_t peer_ = FI_ADDR_UNSPEC;
    std::vector<uint8_t> window_;
    fid_mr *window_mr_ = nullptr;
    uint64_t completed_ = 0;
};

}  // namespace ufi::perf
