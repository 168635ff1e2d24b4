// ufi_perf --procs N (group.h).
#include "group.h"

#include "endpoint.h"
#include "group_channel.h"
#include "group_ucp.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace ufi::perf {

namespace {

constexpr int kTimeoutMs = 60000;
// Small messages carry tags below 256 (the receives kept posted match only those); large ones
// one above, so that no small receive takes them.
constexpr uint64_t kTagLat = 0xA0, kTagRate = 0xB0, kTagAll = 0xC0, kTagAck = 0xFF;
constexpr uint64_t kTagBw = uint64_t{1} << 32;
constexpr int kSlots = 64;  // receives kept posted

// ---- the socket between the launcher and one process ----------------------------------------

bool write_all(int fd, const void *p, size_t n) {
    const auto *b = static_cast<const uint8_t *>(p);
    while (n > 0) {
        const ssize_t w = ::write(fd, b, n);
        if (w <= 0) return false;
        b += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool read_all(int fd, void *p, size_t n) {
    auto *b = static_cast<uint8_t *>(p);
    while (n > 0) {
        pollfd pfd{fd, POLLIN, 0};
        if (::poll(&pfd, 1, kTimeoutMs) <= 0) return false;
        const ssize_t r = ::read(fd, b, n);
        if (r <= 0) return false;
        b += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

bool write_blob(int fd, const std::vector<uint8_t> &v) {
    const uint32_t n = static_cast<uint32_t>(v.size());
    return write_all(fd, &n, sizeof n) && write_all(fd, v.data(), n);
}

bool read_blob(int fd, std::vector<uint8_t> &v) {
    uint32_t n = 0;
    if (!read_all(fd, &n, sizeof n) || n > (1u << 20)) return false;
    v.resize(n);
    return read_all(fd, v.data(), n);
}

// ---- one process of the group -----------------------------------------------------------------

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ufi's side: one RDM endpoint, receives kept posted for small messages (counted by the phase
// their payload names), large ones posted as they are due.
class Member final : public GroupMeasures {
  public:
    Member(int rank, int n, const Options &o) : rank_(rank), n_(n), o_(o) {}

    bool open(GroupChannel &ch, std::string &error) override {
        if (!ep_.open(false, error)) {
            error = "opening the endpoint: " + error;
            return false;
        }
        std::vector<std::vector<uint8_t>> names;
        if (!ch.exchange_names(ep_.name(), names, error)) return false;
        if (names.size() != static_cast<size_t>(n_)) {
            error = "address exchange: names missing";
            return false;
        }
        peers_.resize(n_);
        for (int r = 0; r < n_; ++r) {
            if (!ep_.insert(names[r], peers_[r], error)) return false;
        }
        got_.assign(pairs() + 8, 0);
        from_.assign(n_, 0);
        return post_slots(error);
    }

    bool progress(std::string &error) override { return drain(error); }

    bool pingpong(int peer, bool first, uint64_t phase, double &lat_us, std::string &error) override {
        const uint64_t iters = o_.iters, warmup = std::min<uint64_t>(o_.warmup, 1000);
        double t0 = 0;
        for (uint64_t it = 0; it < warmup + iters; ++it) {
            if (it == warmup) t0 = now_s();
            const uint64_t v = mark(phase, it);
            if (first && !inject(peer, &v, 8, kTagLat, error)) return false;
            if (!wait_until([&] { return got_[phase] > it; }, error)) return false;
            if (!first && !inject(peer, &v, 8, kTagLat, error)) return false;
        }
        lat_us = (now_s() - t0) * 1e6 / static_cast<double>(iters) / 2.0;
        return true;
    }

  private:
    // Receives kept posted for small messages from anyone, any tag: slot i's context is &slot_[i].
    bool post_slots(std::string &error) {
        slot_.assign(kSlots, 0);
        for (int i = 0; i < kSlots; ++i) {
            if (!post_slot(i, error)) return false;
        }
        return true;
    }
    bool post_slot(int i, std::string &error) {
        for (;;) {
            const ssize_t rc = fi_trecv(ep_.ep(), &slot_[i], 8, nullptr, FI_ADDR_UNSPEC, 0, 0xFF, &slot_[i]);
            if (rc == 0) return true;
            if (rc != -FI_EAGAIN) {
                error = std::string("fi_trecv: ") + fi_strerror(static_cast<int>(-rc));
                return false;
            }
            if (!drain(error)) return false;
        }
    }

    // Reads completions: small receives are counted by tag and reposted; big receives and
    // sends counted. False on an error completion.
    bool drain(std::string &error) {
        fi_cq_entry e[32];
        const ssize_t rc = fi_cq_read(ep_.cq(), e, 32);
        if (rc == -FI_EAGAIN) return true;
        if (rc < 0) {
            fi_cq_err_entry err{};
            error = rc == -FI_EAVAIL && fi_cq_readerr(ep_.cq(), &err, 0) == 1
                        ? std::string("error completion: ") + fi_strerror(err.err)
                        : std::string("fi_cq_read: ") + fi_strerror(static_cast<int>(-rc));
            return false;
        }
        for (ssize_t k = 0; k < rc; ++k) {
            void *ctx = e[k].op_context;
            if (ctx == &send_ctx_) {
                ++sends_done_;
            } else if (ctx == &big_ctx_) {
                ++big_received_;
            } else {
                auto *slot = static_cast<uint64_t *>(ctx);
                if (slot < slot_.data() || slot >= slot_.data() + slot_.size()) {
                    char text[64];
                    std::snprintf(text, sizeof text, "a completion of context %p, not ours", ctx);
                    error = text;
                    return false;
                }
                const auto i = static_cast<int>(slot - slot_.data());
                // Counted by the phase the message names (bits 63..48), never by arrival: a
                // peer that started the next phase first has its messages counted there.
                const uint64_t phase = *slot >> 48, from = (*slot >> 32) & 0xFFFF;
                if (phase < got_.size()) ++got_[phase];
                if (phase == all_phase() && from < from_.size()) ++from_[from];
                if (!post_slot(i, error)) return false;
            }
        }
        return true;
    }
    // (The CQ's entries carry contexts only: phases are kept apart by barriers and counts,
    // the tags only name them on the wire.)
    template <typename Done>
    bool wait_until(Done &&done, std::string &error) {
        const double deadline = now_s() + kTimeoutMs / 1000.0;
        unsigned spins = 0;
        while (!done()) {
            if (!drain(error)) return false;
            if (++spins % 4096 == 0 && now_s() > deadline) {
                error = "timed out";
                return false;
            }
        }
        return true;
    }

    bool inject(int peer, const void *buf, size_t len, uint64_t tag, std::string &error) {
        for (unsigned spins = 0;; ++spins) {
            const ssize_t rc = fi_tinject(ep_.ep(), buf, len, peers_[peer], tag);
            if (rc == 0) return true;
            if (rc != -FI_EAGAIN) {
                error = std::string("fi_tinject: ") + fi_strerror(static_cast<int>(-rc));
                return false;
            }
            if (!drain(error)) return false;
            if (spins == 0) inject_since_ = now_s();
            if ((spins & 4095) == 4095 && now_s() - inject_since_ > kTimeoutMs / 1000.0) {
                error = "fi_tinject to rank " + std::to_string(peer) + " was refused (-FI_EAGAIN) for " +
                        std::to_string(kTimeoutMs / 1000) + " s";
                return false;
            }
        }
    }

    // One-way stream of `count` messages of `size` to `peer` (sender) or from it (receiver),
    // then an acknowledgement back; the sender's rate: messages per second (8 B) or MB/s.
  public:
    bool stream(int peer, bool sender, size_t size, uint64_t count, double &rate,
                std::string &error) override {
        rate = 0;
        const bool big = size > 8;
        const uint64_t tag = big ? kTagBw : kTagRate;
        std::vector<uint8_t> buf(size, 0x5a);
        const uint64_t phase = big ? 0 : rate_phase();  // (big messages are counted apart)
        const uint64_t ack_phase = big ? bw_ack_phase() : rate_ack_phase();
        const uint64_t ack = mark(ack_phase, 0);
        const double t0 = now_s();
        if (sender) {
            const uint64_t done0 = sends_done_;
            const uint32_t window = big ? 16 : o_.window;
            for (uint64_t k = 0; k < count; ++k) {
                if (!big) {
                    const uint64_t v = mark(phase, k);
                    if (!inject(peer, &v, 8, tag, error)) return false;
                    continue;
                }
                if (!wait_until([&] { return sends_done_ - done0 + window > k; }, error)) return false;
                for (;;) {
                    const ssize_t rc = fi_tsend(ep_.ep(), buf.data(), size, nullptr, peers_[peer], tag, &send_ctx_);
                    if (rc == 0) break;
                    if (rc != -FI_EAGAIN || !drain(error)) {
                        if (error.empty()) error = std::string("fi_tsend: ") + fi_strerror(static_cast<int>(-rc));
                        return false;
                    }
                }
            }
            if (big && !wait_until([&] { return sends_done_ - done0 >= count; }, error)) return false;
            if (!wait_until([&] { return got_[ack_phase] >= 1; }, error)) return false;
            const double s = now_s() - t0;
            rate = big ? static_cast<double>(count) * static_cast<double>(size) / s / 1e6
                       : static_cast<double>(count) / s;
            return true;
        }
        if (!big) {
            if (!wait_until([&] { return got_[phase] >= count; }, error)) return false;
        } else {
            // Large receives posted ahead, a window at a time, into one buffer.
            const uint64_t base = big_received_;
            uint64_t posted = 0;
            while (big_received_ - base < count) {
                while (posted < count && posted - (big_received_ - base) < 16) {
                    const ssize_t rc = fi_trecv(ep_.ep(), buf.data(), size, nullptr, FI_ADDR_UNSPEC, tag, 0, &big_ctx_);
                    if (rc == -FI_EAGAIN) break;
                    if (rc != 0) {
                        error = std::string("fi_trecv: ") + fi_strerror(static_cast<int>(-rc));
                        return false;
                    }
                    ++posted;
                }
                if (!drain(error)) return false;
            }
        }
        return inject(peer, &ack, 8, kTagAck, error);
    }

    // Every process sends `per_peer` 8-byte messages to every other, round robin, while
    // receiving as many from each; the rate of what this process received.
    bool all_to_all(uint64_t per_peer, double &rate, std::string &error) override {
        const uint64_t want = per_peer * static_cast<uint64_t>(n_ - 1);
        const double t0 = now_s();
        for (uint64_t k = 0; k < per_peer; ++k) {
            for (int d = 1; d < n_; ++d) {
                const uint64_t v = mark(all_phase(), k);
                if (!inject((rank_ + d) % n_, &v, 8, kTagAll, error)) return false;
            }
            if ((k & 15) == 0 && !drain(error)) return false;
        }
        if (!wait_until([&] { return got_[all_phase()] >= want; }, error)) {
            error += " (" + std::to_string(want - got_[all_phase()]) + " of " +
                     std::to_string(per_peer * static_cast<uint64_t>(n_ - 1)) + " messages missing; from each:";
            for (int r = 0; r < n_; ++r) error += " " + std::to_string(from_[r]);
            error += ")";
            return false;
        }
        rate = static_cast<double>(per_peer * static_cast<uint64_t>(n_ - 1)) / (now_s() - t0);
        return true;
    }

  private:
    // A small message's payload: its phase, its sender, a sequence number.
    uint64_t mark(uint64_t phase, uint64_t seq) const {
        return (phase << 48) | (static_cast<uint64_t>(rank_) << 32) | (seq & 0xFFFFFFFF);
    }
    // Phases: 1 + the pair's index for latency pairs, then these.
    uint64_t pairs() const { return static_cast<uint64_t>(n_) * (n_ - 1) / 2; }
    uint64_t rate_phase() const { return pairs() + 1; }
    uint64_t rate_ack_phase() const { return pairs() + 2; }
    uint64_t all_phase() const { return pairs() + 3; }
    uint64_t bw_ack_phase() const { return pairs() + 4; }

    int rank_, n_;
    const Options &o_;
    Endpoint ep_;
    std::vector<fi_addr_t> peers_;
    std::vector<uint64_t> slot_;
    std::vector<uint64_t> got_;   // small messages received, by phase
    std::vector<uint64_t> from_;  // the all-to-all phase's, by sender
    uint64_t big_received_ = 0, sends_done_ = 0;
    int send_ctx_ = 0, big_ctx_ = 0;
    double inject_since_ = 0;
};

// ---- a process's side of the socket to ufi_perf's launcher --------------------------------------

class SocketChannel final : public GroupChannel {
  public:
    SocketChannel(int rank, int n, int fd) : rank_(rank), n_(n), fd_(fd) {}
    int rank() const override { return rank_; }
    int size() const override { return n_; }

    bool exchange_names(const std::vector<uint8_t> &mine, std::vector<std::vector<uint8_t>> &all,
                        std::string &error) override {
        all.assign(n_, {});
        if (!write_blob(fd_, mine)) return left(error);
        for (auto &name : all) {
            if (!read_blob(fd_, name)) return left(error);
        }
        return true;
    }

    // Between progress calls it sleeps on the socket for a millisecond, so that processes
    // waiting here leave the cores to the pair being measured (more processes than cores).
    bool barrier(const std::function<bool()> &progress, std::string &error) override {
        uint8_t b = 1;
        if (!write_all(fd_, &b, 1)) return left(error);
        const double deadline = now_s() + kTimeoutMs / 1000.0;
        for (;;) {
            pollfd pfd{fd_, POLLIN, 0};
            if (::poll(&pfd, 1, 1) > 0) return read_all(fd_, &b, 1) || left(error);
            if (!progress()) return false;
            if (now_s() > deadline) {
                error = "the group did not meet within " + std::to_string(kTimeoutMs / 1000) + " s";
                return false;
            }
        }
    }

    // (The launcher gathers and prints: `all` stays empty here.)
    bool report(double value, const std::function<bool()> &, std::vector<double> &all,
                std::string &error) override {
        all.clear();
        return write_all(fd_, &value, sizeof value) || left(error);
    }

  private:
    static bool left(std::string &error) {
        error = "the launcher left";
        return false;
    }
    int rank_, n_, fd_;
};

// ---- the launcher -----------------------------------------------------------------------------

bool gather_barrier(const std::vector<int> &fds) {
    uint8_t b = 0;
    for (int fd : fds) {
        if (!read_all(fd, &b, 1)) return false;
    }
    for (int fd : fds) {
        if (!write_all(fd, &b, 1)) return false;
    }
    return true;
}

bool gather_report(const std::vector<int> &fds, std::vector<std::vector<double>> &reports) {
    std::vector<double> all(fds.size());
    for (size_t i = 0; i < fds.size(); ++i) {
        if (!read_all(fds[i], &all[i], sizeof(double))) return false;
    }
    reports.push_back(std::move(all));
    return true;
}

// The launcher's side of the members' run(): names, then a barrier and a report per phase.
bool lead(const std::vector<int> &fds, std::vector<std::vector<double>> &reports) {
    const int n = static_cast<int>(fds.size());
    std::vector<std::vector<uint8_t>> names(n);
    for (int i = 0; i < n; ++i) {
        if (!read_blob(fds[i], names[i])) return false;
    }
    for (int fd : fds) {
        for (const auto &name : names) {
            if (!write_blob(fd, name)) return false;
        }
    }
    const int phases = n * (n - 1) / 2 + 3;  // every pair's latency, two rates, bandwidth
    for (int k = 0; k < phases; ++k) {
        if (!gather_barrier(fds) || !gather_report(fds, reports)) return false;
    }
    return gather_barrier(fds);
}

// ---- the figures --------------------------------------------------------------------------------

// The reports in the order members make them: one per pair (i < j, the latency measured by
// i), then message rate with one peer, with every peer, and bandwidth (summed over processes).
struct GroupResults {
    std::vector<double> pair_lat;
    double rate_one = 0, rate_all = 0, bw = 0;
};

bool summarize(int n, const std::vector<std::vector<double>> &reports, GroupResults &out) {
    const size_t pairs = static_cast<size_t>(n) * static_cast<size_t>(n - 1) / 2;
    if (reports.size() != pairs + 3) return false;
    for (const auto &r : reports) {
        if (r.size() != static_cast<size_t>(n)) return false;
    }
    out = GroupResults{};
    size_t k = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) out.pair_lat.push_back(reports[k++][i]);
    }
    auto sum = [](const std::vector<double> &v) {
        double s = 0;
        for (double x : v) s += x;
        return s;
    };
    out.rate_one = sum(reports[pairs]);
    out.rate_all = sum(reports[pairs + 1]);
    out.bw = sum(reports[pairs + 2]);
    return true;
}

// The figures of a group: avg and slowest pair latency, the two rates, bandwidth.
struct Figures {
    double lat_avg = 0, lat_max = 0, rate_one = 0, rate_all = 0, bw = 0;
};
Figures figures_of(const GroupResults &r) {
    Figures f;
    for (double l : r.pair_lat) {
        f.lat_avg += l;
        f.lat_max = std::max(f.lat_max, l);
    }
    f.lat_avg /= static_cast<double>(std::max<size_t>(1, r.pair_lat.size()));
    f.rate_one = r.rate_one;
    f.rate_all = r.rate_all;
    f.bw = r.bw;
    return f;
}

// `ucp`, where measured (--ucp), beside ufi's: its figures and ufi's over UCP's (latency: lower
// is better; rates and bandwidth: higher is better).
void print_group(const Options &o, int n, const char *launcher, const GroupResults &r,
                 const GroupResults *ucp) {
    const size_t m = *std::max_element(o.sizes.begin(), o.sizes.end());
    const size_t bw_size = m <= 8 ? size_t{1} << 20 : m;
    const Figures f = figures_of(r);
    const Figures u = ucp != nullptr ? figures_of(*ucp) : Figures{};
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    const int pairs = n / 2;
    if (o.format == Format::Csv) {
        std::printf("measure,procs,value,unit\n");
        std::printf("pair_lat_avg,%d,%.4f,us\npair_lat_max,%d,%.4f,us\n", n, f.lat_avg, n, f.lat_max);
        std::printf("rate_one_peer,%d,%.1f,msg/s\nrate_every_peer,%d,%.1f,msg/s\n", n, f.rate_one, n, f.rate_all);
        std::printf("bw_pairs,%d,%.1f,MB/s\n", n, f.bw);
        if (ucp != nullptr) {
            std::printf("ucp_pair_lat_avg,%d,%.4f,us\nucp_pair_lat_max,%d,%.4f,us\n", n, u.lat_avg, n, u.lat_max);
            std::printf("ucp_rate_one_peer,%d,%.1f,msg/s\nucp_rate_every_peer,%d,%.1f,msg/s\n", n, u.rate_one,
                        n, u.rate_all);
            std::printf("ucp_bw_pairs,%d,%.1f,MB/s\n", n, u.bw);
            std::printf("ratio_pair_lat_avg,%d,%.3f,ufi/ucp\nratio_rate_one_peer,%d,%.3f,ufi/ucp\n", n,
                        ratio(f.lat_avg, u.lat_avg), n, ratio(f.rate_one, u.rate_one));
            std::printf("ratio_rate_every_peer,%d,%.3f,ufi/ucp\nratio_bw_pairs,%d,%.3f,ufi/ucp\n", n,
                        ratio(f.rate_all, u.rate_all), n, ratio(f.bw, u.bw));
        }
        std::fflush(stdout);
        return;
    }
    std::printf("ufi_perf: %d processes (%s; each process its own endpoint)%s\n", n, launcher,
                ucp != nullptr ? "; then UCP's tag API in the same processes, ufi/UCP in brackets" : "");
    auto beside = [&](double mine, double theirs, const char *unit, double scale) {
        if (ucp == nullptr) return std::string();
        char text[96];
        std::snprintf(text, sizeof text, " (UCP %.3f%s: %.2f)", theirs / scale, unit, ratio(mine, theirs));
        return std::string(text);
    };
    std::printf("  8 B one-way latency, every pair in turn (%zu pairs): average %.3f us%s, slowest pair %.3f us%s\n",
                r.pair_lat.size(), f.lat_avg, beside(f.lat_avg, u.lat_avg, " us", 1).c_str(), f.lat_max,
                beside(f.lat_max, u.lat_max, " us", 1).c_str());
    std::printf("  8 B message rate, one peer each (%d pairs at once): %.2f M msg/s in all%s\n", pairs,
                f.rate_one / 1e6, beside(f.rate_one, u.rate_one, " M", 1e6).c_str());
    std::printf("  8 B message rate, every peer at once: %.2f M msg/s in all%s\n", f.rate_all / 1e6,
                beside(f.rate_all, u.rate_all, " M", 1e6).c_str());
    std::printf("  %zu B bandwidth, one peer each (%d pairs at once): %.0f MB/s in all%s\n", bw_size, pairs,
                f.bw, beside(f.bw, u.bw, " MB/s", 1).c_str());
    std::fflush(stdout);
}

}  // namespace

int run_schedule(GroupChannel &ch, const Options &o, GroupMeasures &m, const char *who,
                 std::vector<std::vector<double>> &reports) {
    const int rank = ch.rank(), n = ch.size();
    std::string error, progress_error;
    auto fail = [&](const char *what) {
        if (!progress_error.empty()) error = progress_error;  // (the first cause)
        std::fprintf(stderr, "ufi_perf, %s: rank %d: %s: %s\n", who, rank, what, error.c_str());
        return 1;
    };
    if (!m.open(ch, error)) return fail("opening");
    const std::function<bool()> progress = [&] { return m.progress(progress_error); };
    auto barrier = [&] { return ch.barrier(progress, error); };
    auto report = [&](double v) {
        std::vector<double> all;
        if (!ch.report(v, progress, all, error)) return false;
        if (!all.empty()) reports.push_back(std::move(all));
        return true;
    };
    // 1. Every pair's 8-byte one-way latency, one pair at a time.
    uint64_t pair = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
            if (!barrier()) return fail("waiting for the group");
            double lat = 0;
            ++pair;
            if ((rank == i || rank == j) && !m.pingpong(rank == i ? j : i, rank == i, pair, lat, error))
                return fail("latency");
            if (!report(rank == i ? lat : 0)) return fail("reporting");
        }
    }
    // 2. 8-byte message rate with one peer: pairs (0,1), (2,3), ... at once. (The odd process
    // out of an odd group has no partner: it reports 0.)
    const int partner = (rank % 2 == 0) ? rank + 1 : rank - 1;
    if (!barrier()) return fail("waiting for the group");
    double rate = 0;
    if (partner < n && !m.stream(partner, rank % 2 == 0, 8, o.iters * 10, rate, error))
        return fail("message rate, one peer");
    if (!report(rate)) return fail("reporting");
    // 3. 8-byte message rate with every peer, all at once.
    if (!barrier()) return fail("waiting for the group");
    if (!m.all_to_all(o.iters, rate, error)) return fail("message rate, every peer");
    if (!report(rate)) return fail("reporting");
    // 4. Bandwidth, pairs at once, at the largest -s size (1 MiB when -s is 8).
    if (!barrier()) return fail("waiting for the group");
    const size_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
    const size_t size = largest <= 8 ? size_t{1} << 20 : largest;
    rate = 0;
    if (partner < n &&
        !m.stream(partner, rank % 2 == 0, size, std::max<uint64_t>(200, o.iters / 20), rate, error))
        return fail("bandwidth");
    if (!report(rate)) return fail("reporting");
    if (!barrier()) return fail("waiting for the group");  // nobody closes early
    return 0;
}

int run_member(GroupChannel &ch, const Options &o, const char *launcher) {
    std::vector<std::vector<double>> reports, ucp_reports;
    {
        Member m(ch.rank(), ch.size(), o);  // (closed before UCP opens)
        const int rc = run_schedule(ch, o, m, "ufi", reports);
        if (rc != 0) return rc;
    }
    if (o.ucp) {
        const int rc = run_ucp_member(ch, o, ucp_reports);
        if (rc != 0) return rc;
    }
    if (reports.empty()) return 0;  // (another process prints)
    GroupResults r, u;
    if (!summarize(ch.size(), reports, r) || (o.ucp && !summarize(ch.size(), ucp_reports, u))) {
        std::fprintf(stderr, "ufi_perf: the group's reports do not add up\n");
        return 1;
    }
    print_group(o, ch.size(), launcher, r, o.ucp ? &u : nullptr);
    return 0;
}

int run_group(const Options &o) {
    const int n = static_cast<int>(o.procs);
    std::vector<int> fds;
    std::vector<pid_t> pids;
    for (int rank = 0; rank < n; ++rank) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
            std::perror("ufi_perf: socketpair");
            return 1;
        }
        const pid_t pid = ::fork();
        if (pid < 0) {
            std::perror("ufi_perf: fork");
            return 1;
        }
        if (pid == 0) {
            ::close(sv[0]);
            for (int fd : fds) ::close(fd);
            SocketChannel ch(rank, n, sv[1]);
            const int rc = run_member(ch, o, "");
            std::fflush(stdout);
            ::_exit(rc);
        }
        ::close(sv[1]);
        fds.push_back(sv[0]);
        pids.push_back(pid);
    }
    std::vector<std::vector<double>> reports, ucp_reports;
    const bool ok = lead(fds, reports) && (!o.ucp || lead(fds, ucp_reports));
    int status = ok ? 0 : 1;
    for (int fd : fds) ::close(fd);
    for (pid_t pid : pids) {
        int st = 0;
        if (!ok) ::kill(pid, SIGTERM);
        if (::waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) status = 1;
    }
    if (!ok || status != 0) {
        std::fprintf(stderr, "ufi_perf --procs: a process failed (its line above says why)\n");
        return 1;
    }
    GroupResults r, u;
    if (!summarize(n, reports, r) || (o.ucp && !summarize(n, ucp_reports, u))) {
        std::fprintf(stderr, "ufi_perf --procs: the group's reports do not add up\n");
        return 1;
    }
    print_group(o, n, "started by ufi_perf --procs on this host", r, o.ucp ? &u : nullptr);
    return 0;
}

}  // namespace ufi::perf
