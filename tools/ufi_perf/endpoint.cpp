#include "endpoint.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <cstring>

namespace ufi::perf {

Endpoint::~Endpoint() {
    if (ep_) fi_close(&ep_->fid);
    if (window_mr_) fi_close(&window_mr_->fid);
    if (cq_) fi_close(&cq_->fid);
    if (av_) fi_close(&av_->fid);
    if (domain_) fi_close(&domain_->fid);
    if (fabric_) fi_close(&fabric_->fid);
    if (info_) fi_freeinfo(info_);
}

bool Endpoint::open(bool rma, std::string &error) {
    fi_info *hints = fi_allocinfo();
    if (hints == nullptr) {
        error = "fi_allocinfo failed";
        return false;
    }
    hints->caps = FI_MSG | FI_TAGGED | (rma ? FI_RMA | FI_ATOMIC : 0);
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->mr_mode = 0;
    hints->fabric_attr->prov_name = strdup("ufi");
    int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);
    auto check = [&](int r, const char *what) {
        if (r == 0) return true;
        error = std::string(what) + ": " + fi_strerror(-r);
        return false;
    };
    if (!check(rc, "fi_getinfo")) return false;
    if (!check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric")) return false;
    if (!check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain")) return false;
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if (!check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open")) return false;
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.size = 8192;
    if (!check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open")) return false;
    if (!check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint")) return false;
    if (!check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind(av)")) return false;
    if (!check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)")) return false;
    return check(fi_enable(ep_), "fi_enable");
}

bool Endpoint::register_window(size_t size, std::string &error) {
    window_.assign(size != 0 ? size : 1, 0);
    const int rc = fi_mr_reg(domain_, window_.data(), window_.size(), FI_REMOTE_READ | FI_REMOTE_WRITE,
                             0, 0x75ff, 0, &window_mr_, nullptr);
    if (rc != 0) {
        error = std::string("fi_mr_reg: ") + fi_strerror(-rc);
        return false;
    }
    return true;
}

uint64_t Endpoint::window_key() const {
    return window_mr_ != nullptr ? fi_mr_key(window_mr_) : 0;
}

uint64_t Endpoint::window_addr() const {
    const bool virt = (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    return virt ? reinterpret_cast<uint64_t>(window_.data()) : 0;
}

std::vector<uint8_t> Endpoint::name() const {
    size_t len = 0;
    (void)fi_getname(&ep_->fid, nullptr, &len);
    std::vector<uint8_t> n(len);
    if (fi_getname(&ep_->fid, n.data(), &len) != 0) n.clear();
    return n;
}

bool Endpoint::insert_peer(const std::vector<uint8_t> &name, std::string &error) {
    const int rc = fi_av_insert(av_, name.data(), 1, &peer_, 0, nullptr);
    if (rc != 1) {
        error = "fi_av_insert of the peer's address failed (" + std::to_string(rc) +
                "): do both sides use the same UFI_TLS?";
        return false;
    }
    return true;
}

bool Endpoint::insert(const std::vector<uint8_t> &name, fi_addr_t &out, std::string &error) {
    const int rc = fi_av_insert(av_, name.data(), 1, &out, 0, nullptr);
    if (rc != 1) {
        error = "fi_av_insert of a peer's address failed (" + std::to_string(rc) + ")";
        return false;
    }
    return true;
}

std::string Endpoint::domain_name() const {
    return info_ != nullptr && info_->domain_attr->name ? info_->domain_attr->name : "?";
}

bool Endpoint::poll(std::string &error) {
    fi_cq_entry entries[64];
    const ssize_t rc = fi_cq_read(cq_, entries, 64);
    if (rc > 0) {
        completed_ += static_cast<uint64_t>(rc);
        return true;
    }
    if (rc == -FI_EAGAIN) return true;
    fi_cq_err_entry e{};
    if (rc == -FI_EAVAIL && fi_cq_readerr(cq_, &e, 0) == 1) {
        error = std::string("error completion: ") + fi_strerror(e.err);
    } else {
        error = std::string("fi_cq_read: ") + fi_strerror(static_cast<int>(-rc));
    }
    return false;
}

bool Endpoint::wait_total(uint64_t total, std::string &error, int timeout_ms) {
    // The clock is read only after many empty polls (never in a ping-pong's usual wait, as
    // ucx_perftest never reads it there), so the timeout costs the measured loop nothing.
    std::chrono::steady_clock::time_point last{};
    uint64_t seen = completed_;
    unsigned spins = 0;
    while (completed_ < total) {
        if (!poll(error)) return false;
        if (++spins % 4096 != 0) continue;
        if (spins == 4096) {
            last = std::chrono::steady_clock::now();
        } else if (completed_ != seen) {
            seen = completed_;
            last = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - last > std::chrono::milliseconds(timeout_ms)) {
            error = "no completion for " + std::to_string(timeout_ms / 1000) + " s";
            return false;
        }
    }
    return true;
}

}  // namespace ufi::perf
