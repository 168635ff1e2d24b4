// The UCP side of ufi_perf's group (group_ucp.h): one UCP worker per process (single thread),
// an endpoint to every other process from the worker addresses exchanged over the group's
// channel, and the four measurements of group.h done with ucp_tag_send_nbx / ucp_tag_recv_nbx.
// Each phase's messages carry its own tag and are received with a full mask, so a message that
// comes early waits in UCP's unexpected queue for its phase.
#include "group_ucp.h"

#include <sched.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace ufi::perf {

namespace {

constexpr int kTimeoutMs = 60000;
constexpr uint64_t kFullMask = ~uint64_t{0};

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A phase's tag for messages from `from`: phase in the high half, sender below.
uint64_t tag_of(uint64_t phase, int from) { return (phase << 32) | static_cast<uint32_t>(from); }

class UcpMember final : public GroupMeasures {
  public:
    UcpMember(int rank, int n, const Options &o) : o_(o), rank_(rank), n_(n) {}
    ~UcpMember() override {
        for (ucp_ep_h ep : eps_) {
            if (ep == nullptr) continue;
            ucp_request_param_t p{};
            p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            p.flags = UCP_EP_CLOSE_FLAG_FORCE;  // (after the last barrier: nothing in flight)
            void *req = ucp_ep_close_nbx(ep, &p);
            if (UCS_PTR_IS_PTR(req)) {
                const double deadline = now_s() + 1.0;
                while (ucp_request_check_status(req) == UCS_INPROGRESS && now_s() < deadline) {
                    ucp_worker_progress(worker_);
                }
                ucp_request_free(req);
            }
        }
        if (worker_ != nullptr) ucp_worker_destroy(worker_);
        if (context_ != nullptr) ucp_cleanup(context_);
    }

    bool open(GroupChannel &ch, std::string &error) override {
        ucp_config_t *config = nullptr;
        ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
        if (s != UCS_OK) return set(error, "ucp_config_read", s);
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_TAG;
        s = ucp_init(&params, config, &context_);
        ucp_config_release(config);
        if (s != UCS_OK) return set(error, "ucp_init", s);
        ucp_worker_params_t wp{};
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        s = ucp_worker_create(context_, &wp, &worker_);
        if (s != UCS_OK) return set(error, "ucp_worker_create", s);
        ucp_address_t *address = nullptr;
        size_t len = 0;
        s = ucp_worker_get_address(worker_, &address, &len);
        if (s != UCS_OK) return set(error, "ucp_worker_get_address", s);
        const auto *bytes = reinterpret_cast<const uint8_t *>(address);
        const std::vector<uint8_t> mine(bytes, bytes + len);
        ucp_worker_release_address(worker_, address);
        std::vector<std::vector<uint8_t>> all;
        if (!ch.exchange_names(mine, all, error)) return false;
        eps_.assign(n_, nullptr);
        for (int r = 0; r < n_; ++r) {
            if (r == rank_) continue;
            ucp_ep_params_t ep{};
            ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
            ep.address = reinterpret_cast<const ucp_address_t *>(all[r].data());
            s = ucp_ep_create(worker_, &ep, &eps_[r]);
            if (s != UCS_OK) return set(error, "ucp_ep_create", s);
        }
        return true;
    }

    bool progress(std::string &) override {
        poll();
        return true;
    }

    bool pingpong(int peer, bool first, uint64_t phase, double &lat_us, std::string &error) override {
        const uint64_t iters = o_.iters, warmup = std::min<uint64_t>(o_.warmup, 1000);
        uint64_t out = 0, in = 0;
        double t0 = 0;
        for (uint64_t it = 0; it < warmup + iters; ++it) {
            if (it == warmup) t0 = now_s();
            if (first && !wait(send(peer, &out, 8, tag_of(phase, rank_)), error)) return false;
            if (!wait(recv(&in, 8, tag_of(phase, peer)), error)) return false;
            if (!first && !wait(send(peer, &out, 8, tag_of(phase, rank_)), error)) return false;
        }
        lat_us = (now_s() - t0) * 1e6 / static_cast<double>(iters) / 2.0;
        return true;
    }

    // Up to a window (-W; 16 for large messages) in flight; the data and the acknowledgement
    // carry phases of their own, after the pairs' (8 bytes and large apart).
    bool stream(int peer, bool sender, size_t size, uint64_t count, double &rate,
                std::string &error) override {
        const bool big = size > 8;
        const uint64_t phase = pairs() + (big ? 4 : 1);
        const size_t window = big ? 16 : o_.window;
        std::vector<uint8_t> buf(size, 0x5a);
        std::vector<void *> pending;
        pending.reserve(window);
        auto drain_to = [&](size_t keep) {
            while (pending.size() > keep) {
                if (!wait(pending.front(), error)) return false;
                pending.erase(pending.begin());
            }
            return true;
        };
        uint64_t ack = 0;
        const uint64_t data_tag = tag_of(phase, sender ? rank_ : peer);
        const uint64_t ack_tag = tag_of(phase + 1, sender ? peer : rank_);
        const double t0 = now_s();
        for (uint64_t k = 0; k < count; ++k) {
            void *req = sender ? send(peer, buf.data(), size, data_tag) : recv(buf.data(), size, data_tag);
            if (UCS_PTR_IS_ERR(req)) return wait(req, error);
            if (req != nullptr) pending.push_back(req);
            if (pending.size() >= window && !drain_to(window / 2)) return false;
        }
        if (!drain_to(0)) return false;
        if (sender) {
            if (!wait(recv(&ack, 8, ack_tag), error)) return false;
            const double s = now_s() - t0;
            rate = big ? static_cast<double>(count) * static_cast<double>(size) / s / 1e6
                       : static_cast<double>(count) / s;
            return true;
        }
        rate = 0;
        return wait(send(peer, &ack, 8, ack_tag), error);
    }

    // Every process sends `per_peer` 8-byte messages to every other, round robin, while
    // receiving as many from each; the rate of what this process received. As ufi's side does
    // it: the receives are posted first, the sends go out without waiting for one another
    // (UCP completes most of them at once), and only then does the process wait. (Waiting
    // on each request in turn stalls on whichever peer the scheduler left out when there
    // are more processes than cores.)
    bool all_to_all(uint64_t per_peer, double &rate, std::string &error) override {
        const uint64_t phase = pairs() + 3;
        std::vector<uint64_t> in(static_cast<size_t>(n_), 0);
        uint64_t out = 0;
        std::vector<void *> pending;
        pending.reserve(static_cast<size_t>(per_peer) * static_cast<size_t>(n_ - 1) * 2);
        const double t0 = now_s();
        for (int d = 1; d < n_; ++d) {
            const int from = (rank_ - d + n_) % n_;
            for (uint64_t k = 0; k < per_peer; ++k) {
                void *r = recv(&in[from], 8, tag_of(phase, from));
                if (UCS_PTR_IS_ERR(r)) return wait(r, error);
                if (r != nullptr) pending.push_back(r);
            }
        }
        // Sends UCP could not complete at once stay at most a window (-W) in flight, as a UCP
        // application bounds them (ufi's side is bounded by -FI_EAGAIN): without a bound, UCP
        // queues them all and retries its whole pending queue on every progress call.
        std::vector<void *> sends;
        const double deadline = now_s() + kTimeoutMs / 1000.0;
        for (uint64_t k = 0; k < per_peer; ++k) {
            for (int d = 1; d < n_; ++d) {
                void *s = send((rank_ + d) % n_, &out, 8, tag_of(phase, rank_));
                if (UCS_PTR_IS_ERR(s)) return wait(s, error);
                if (s != nullptr) sends.push_back(s);
                while (sends.size() >= o_.window) {
                    poll();
                    std::erase_if(sends, [](void *q) {
                        if (ucp_request_check_status(q) == UCS_INPROGRESS) return false;
                        ucp_request_free(q);
                        return true;
                    });
                    if (now_s() > deadline) {
                        error = "sends did not complete";
                        return false;
                    }
                }
            }
        }
        pending.insert(pending.end(), sends.begin(), sends.end());
        for (void *r : pending) {
            if (!wait(r, error)) return false;
        }
        rate = static_cast<double>(per_peer * static_cast<uint64_t>(n_ - 1)) / (now_s() - t0);
        return true;
    }

  private:
    uint64_t pairs() const { return static_cast<uint64_t>(n_) * static_cast<uint64_t>(n_ - 1) / 2; }

    // One progress call; after 256 empty ones in a row, the core is given up once
    // (sched_yield), as ufi's own polling does by default (UFI_POLL_YIELD=256), so that with
    // more processes than cores both sides are measured under the same courtesy.
    void poll() {
        if (ucp_worker_progress(worker_) != 0) {
            empty_ = 0;
        } else if (++empty_ >= 256) {
            empty_ = 0;
            sched_yield();
        }
    }

    static bool set(std::string &error, const char *what, ucs_status_t s) {
        error = std::string(what) + ": " + ucs_status_string(s);
        return false;
    }

    // Waits for `req` (a request, nullptr for done at once, or an error pointer) and frees it.
    bool wait(void *req, std::string &error) {
        if (req == nullptr) return true;
        if (UCS_PTR_IS_ERR(req)) return set(error, "UCP operation", UCS_PTR_STATUS(req));
        const double deadline = now_s() + kTimeoutMs / 1000.0;
        unsigned spins = 0;
        ucs_status_t s;
        while ((s = ucp_request_check_status(req)) == UCS_INPROGRESS) {
            poll();
            if (++spins % 4096 == 0 && now_s() > deadline) {
                ucp_request_free(req);  // (UCP completes it later and frees it then)
                error = "timed out";
                return false;
            }
        }
        ucp_request_free(req);
        return s == UCS_OK || set(error, "UCP operation", s);
    }

    void *send(int peer, const void *buf, size_t len, uint64_t tag) {
        ucp_request_param_t p{};
        return ucp_tag_send_nbx(eps_[peer], buf, len, tag, &p);
    }
    void *recv(void *buf, size_t len, uint64_t tag) {
        ucp_request_param_t p{};
        return ucp_tag_recv_nbx(worker_, buf, len, tag, kFullMask, &p);
    }

    const Options &o_;
    int rank_, n_;
    ucp_context_h context_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    std::vector<ucp_ep_h> eps_;
    unsigned empty_ = 0;  // progress calls in a row that found nothing (poll())
};

}  // namespace

int run_ucp_member(GroupChannel &ch, const Options &o, std::vector<std::vector<double>> &reports) {
    UcpMember m(ch.rank(), ch.size(), o);
    return run_schedule(ch, o, m, "UCP (--ucp)", reports);
}

}  // namespace ufi::perf
