// ufi_perf's side of the fabric, through the public API only: one RDM endpoint with its AV
// and CQ (FI_THREAD_DOMAIN: one thread drives it), the peer inserted from the address the
// other side sent, and buffers for the largest message.
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
    fi_info *info_ = nullptr;
    fid_fabric *fabric_ = nullptr;
    fid_domain *domain_ = nullptr;
    fid_av *av_ = nullptr;
    fid_cq *cq_ = nullptr;
    fid_ep *ep_ = nullptr;
    fi_addr_t peer_ = FI_ADDR_UNSPEC;
    std::vector<uint8_t> window_;
    fid_mr *window_mr_ = nullptr;
    uint64_t completed_ = 0;
};

}  // namespace ufi::perf
