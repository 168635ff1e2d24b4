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
    if (pep_) fi_close(&pep_->fid);
    if (eq_) fi_close(&eq_->fid);
    if (domain_) fi_close(&domain_->fid);
    if (fabric_) fi_close(&fabric_->fid);
    if (info_) fi_freeinfo(info_);
}

namespace {

bool check(int rc, const char *what, std::string &error) {
    if (rc == 0) return true;
    error = std::string(what) + ": " + fi_strerror(-rc);
    return false;
}

}  // namespace

// fi_getinfo for ufi's `type` entries, then the fabric (and, for RDM, the domain: a connected
// endpoint's server opens its domain from the connection request's info).
bool Endpoint::open_fabric(bool rma, fi_ep_type type, std::string &error) {
    fi_info *hints = fi_allocinfo();
    if (hints == nullptr) {
        error = "fi_allocinfo failed";
        return false;
    }
    hints->caps = FI_MSG | FI_TAGGED | (rma ? FI_RMA | FI_ATOMIC : 0);
    hints->ep_attr->type = type;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->mr_mode = 0;
    hints->fabric_attr->prov_name = strdup("ufi");
    const int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);
    if (rc == -FI_ENODATA && type == FI_EP_MSG) {
        error = "fi_getinfo: no FI_EP_MSG entry (connected endpoints need a tcp device for their "
                "connection manager: is UFI_TLS=shm set?)";
        return false;
    }
    if (!check(rc, "fi_getinfo", error)) return false;
    if (!check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric", error)) return false;
    if (type == FI_EP_MSG) {
        fi_eq_attr eq_attr{};
        eq_attr.wait_obj = FI_WAIT_UNSPEC;
        return check(fi_eq_open(fabric_, &eq_attr, &eq_, nullptr), "fi_eq_open", error);
    }
    return check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain", error);
}

bool Endpoint::open_endpoint(std::string &error) {
    if (av_ == nullptr && eq_ == nullptr) {
        fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        if (!check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open", error)) return false;
    }
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.size = 8192;
    if (!check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open", error)) return false;
    if (!check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint", error)) return false;
    fid *bound = av_ != nullptr ? &av_->fid : &eq_->fid;
    if (!check(fi_ep_bind(ep_, bound, 0), av_ != nullptr ? "fi_ep_bind(av)" : "fi_ep_bind(eq)",
               error)) {
        return false;
    }
    if (!check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)", error)) {
        return false;
    }
    return check(fi_enable(ep_), "fi_enable", error);
}

bool Endpoint::open(bool rma, std::string &error) {
    return open_fabric(rma, FI_EP_RDM, error) && open_endpoint(error);
}

bool Endpoint::listen(bool rma, std::string &error) {
    if (!open_fabric(rma, FI_EP_MSG, error)) return false;
    if (!check(fi_passive_ep(fabric_, info_, &pep_, nullptr), "fi_passive_ep", error)) return false;
    if (!check(fi_pep_bind(pep_, &eq_->fid, 0), "fi_pep_bind", error)) return false;
    return check(fi_listen(pep_), "fi_listen", error);
}

std::vector<uint8_t> Endpoint::listen_name() const {
    size_t len = 0;
    (void)fi_getname(&pep_->fid, nullptr, &len);
    std::vector<uint8_t> n(len);
    if (fi_getname(&pep_->fid, n.data(), &len) != 0) n.clear();
    return n;
}

bool Endpoint::wait_event(uint32_t event, fi_eq_cm_entry &entry, int timeout_ms,
                          std::string &error) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        uint32_t got = 0;
        const ssize_t rc = fi_eq_sread(eq_, &got, &entry, sizeof entry, 100, 0);
        if (rc >= 0) {
            if (got == event) return true;
            if (event == FI_CONNREQ && got != FI_CONNREQ) continue;  // (not ours)
            error = "unexpected connection event " + std::to_string(got);
            if (got == FI_CONNREQ) fi_freeinfo(entry.info);
            return false;
        }
        if (rc == -FI_EAVAIL) {
            fi_eq_err_entry e{};
            (void)fi_eq_readerr(eq_, &e, 0);
            error = std::string("connection failed: ") + fi_strerror(e.err);
            return false;
        }
        if (rc != -FI_EAGAIN && rc != -FI_ETIMEDOUT) {
            error = std::string("fi_eq_sread: ") + fi_strerror(static_cast<int>(-rc));
            return false;
        }
        if (std::chrono::steady_clock::now() > end) {
            error = "no connection event within " + std::to_string(timeout_ms / 1000) + " s";
            return false;
        }
    }
}

bool Endpoint::accept(int timeout_ms, std::string &error) {
    fi_eq_cm_entry entry{};
    if (!wait_event(FI_CONNREQ, entry, timeout_ms, error)) return false;
    // The request's info describes the connection: the endpoint and its domain open from it.
    fi_freeinfo(info_);
    info_ = entry.info;
    if (!check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain", error)) return false;
    if (!open_endpoint(error)) return false;
    if (!check(fi_accept(ep_, nullptr, 0), "fi_accept", error)) return false;
    if (!wait_event(FI_CONNECTED, entry, timeout_ms, error)) return false;
    peer_ = FI_ADDR_NOTAVAIL;
    return true;
}

bool Endpoint::connect(bool rma, const std::vector<uint8_t> &server, int timeout_ms,
                       std::string &error) {
    if (!open_fabric(rma, FI_EP_MSG, error)) return false;
    if (!check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain", error)) return false;
    if (!open_endpoint(error)) return false;
    if (!check(static_cast<int>(fi_connect(ep_, server.data(), nullptr, 0)), "fi_connect",
               error)) {
        return false;
    }
    fi_eq_cm_entry entry{};
    if (!wait_event(FI_CONNECTED, entry, timeout_ms, error)) return false;
    peer_ = FI_ADDR_NOTAVAIL;
    return true;
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
