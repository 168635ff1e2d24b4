#include "runner.h"

#include "iter_timer.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <vector>

namespace ufi::perf {

namespace {

constexpr uint64_t kTag = 0x5eed;
constexpr uint64_t kAckTag = 0xacc;

using Clock = std::chrono::steady_clock;

// Posts `f` until it is accepted, reading completions meanwhile.
template <typename F>
bool post(Endpoint &ep, F &&f, std::string &error) {
    for (;;) {
        const ssize_t rc = f();
        if (rc == 0) return true;
        if (rc != -FI_EAGAIN) {
            error = std::string("post: ") + fi_strerror(static_cast<int>(-rc));
            return false;
        }
        if (!ep.poll(error)) return false;  // progress, then try again
    }
}

struct Io {
    Endpoint &ep;
    bool tagged;
    size_t size;
    std::vector<uint8_t> sbuf, rbuf;
    bool inject;  // small enough for fi_inject: no send completion

    Io(Endpoint &e, bool t, size_t s)
        : ep(e), tagged(t), size(s), sbuf(s ? s : 1, 0x5a), rbuf(s ? s : 1, 0),
          inject(s <= e.info()->tx_attr->inject_size) {}

    ssize_t send_once(uint64_t tag = kTag) {
        if (inject) {
            return tagged ? fi_tinject(ep.ep(), sbuf.data(), size, ep.peer(), tag)
                          : fi_inject(ep.ep(), sbuf.data(), size, ep.peer());
        }
        return tagged ? fi_tsend(ep.ep(), sbuf.data(), size, nullptr, ep.peer(), tag, nullptr)
                      : fi_send(ep.ep(), sbuf.data(), size, nullptr, ep.peer(), nullptr);
    }
    ssize_t recv_once(void *buf, uint64_t tag = kTag) {
        return tagged ? fi_trecv(ep.ep(), buf, size, nullptr, FI_ADDR_UNSPEC, tag, 0, nullptr)
                      : fi_recv(ep.ep(), buf, size, nullptr, FI_ADDR_UNSPEC, nullptr);
    }
    // Completions one send produces.
    uint64_t per_send() const { return inject ? 0 : 1; }
};

// Ping-pong, in ucx_perftest's order: the client sends, then posts its receive and waits;
// the server posts its receive, waits, then sends. Each receive is posted while its message
// is still a round trip away, so posting it is off the measured path on both sides, as in
// ucx_perftest's UCP ping-pong (the message may also come first: then it waits unexpected).
bool latency(Io &io, uint64_t count, bool client, std::string &error, double &seconds,
             IterTimer &timer) {
    Endpoint &ep = io.ep;
    uint64_t expect = ep.completed();
    const auto start = Clock::now();
    timer.start();
    for (uint64_t i = 0; i < count; ++i) {
        if (client) {
            if (!post(ep, [&] { return io.send_once(); }, error)) return false;
            if (!post(ep, [&] { return io.recv_once(io.rbuf.data()); }, error)) return false;
            expect += io.per_send() + 1;
            if (!ep.wait_total(expect, error)) return false;
        } else {
            if (!post(ep, [&] { return io.recv_once(io.rbuf.data()); }, error)) return false;
            expect += 1;
            if (!ep.wait_total(expect, error)) return false;
            if (!post(ep, [&] { return io.send_once(); }, error)) return false;
            expect += io.per_send();
            if (io.per_send() && !ep.wait_total(expect, error)) return false;
        }
        timer.tick();
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return true;
}

// Streaming: the client keeps `window` sends in flight; the server keeps `window` receives
// posted and acknowledges the last message.
bool bandwidth(Io &io, uint64_t count, uint32_t window, bool client, std::string &error,
               double &seconds, IterTimer &timer) {
    Endpoint &ep = io.ep;
    const auto start = Clock::now();
    timer.start();
    uint8_t ack = 0;
    if (client) {
        uint64_t base = ep.completed();
        if (!post(ep, [&] { return io.tagged ? fi_trecv(ep.ep(), &ack, 1, nullptr, FI_ADDR_UNSPEC, kAckTag, 0, nullptr)
                                            : fi_recv(ep.ep(), &ack, 1, nullptr, FI_ADDR_UNSPEC, nullptr); },
                  error))
            return false;
        uint64_t sent = 0;
        while (sent < count) {
            // At most `window` sends without their completion.
            if (io.per_send() && sent >= window &&
                !ep.wait_total(base + (sent - window + 1), error))
                return false;
            if (!post(ep, [&] { return io.send_once(); }, error)) return false;
            ++sent;
            timer.tick();
        }
        if (!ep.wait_total(base + count * io.per_send() + 1, error)) return false;
    } else {
        const uint64_t base = ep.completed();
        uint64_t posted = 0;
        const uint64_t first = std::min<uint64_t>(window, count);
        for (; posted < first; ++posted) {
            if (!post(ep, [&] { return io.recv_once(io.rbuf.data()); }, error)) return false;
        }
        for (uint64_t done = 0; done < count; ++done) {
            if (!ep.wait_total(base + done + 1, error)) return false;
            if (posted < count) {
                if (!post(ep, [&] { return io.recv_once(io.rbuf.data()); }, error)) return false;
                ++posted;
            }
            timer.tick();
        }
        const uint64_t before = ep.completed();
        if (!post(ep, [&] { return io.tagged ? fi_tsend(ep.ep(), &ack, 1, nullptr, ep.peer(), kAckTag, nullptr)
                                            : fi_send(ep.ep(), &ack, 1, nullptr, ep.peer(), nullptr); },
                  error))
            return false;
        if (!ep.wait_total(before + 1, error)) return false;
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return true;
}

}  // namespace

bool run_size(Endpoint &ep, Oob &oob, const Options &o, size_t size, bool client,
              const RemoteWindow &remote, Result &out, std::string &error) {
    Io io(ep, is_tagged(o.test), size);
    double seconds = 0;
    IterTimer timer;
    const bool lat = is_latency(o.test);
    auto measure = [&](uint64_t count) {
        if (is_rma(o.test)) {
            return run_rma(ep, oob, o, size, count, client, remote, error, seconds, timer);
        }
        return lat ? latency(io, count, client, error, seconds, timer)
                   : bandwidth(io, count, o.window, client, error, seconds, timer);
    };
    // Warm-up, then the measured run, each started together.
    if (o.warmup > 0) {
        if (!oob.barrier()) return error = "the peer left", false;
        if (!measure(o.warmup)) return false;
    }
    if (!oob.barrier()) return error = "the peer left", false;
    if (!measure(o.iters)) return false;
    out = Result{};
    out.size = size;
    out.iters = o.iters;
    out.seconds = seconds;
    if (o.test == Test::GetLat || o.test == Test::FaddLat) {
        // One read (or fetch-add) is a round trip by nature: its latency is the whole of it (ucx_perftest's
        // ucp_get reports the same).
        out.lat_us = seconds * 1e6 / static_cast<double>(o.iters);
        out.typical_lat_us = timer.median_seconds() * 1e6;
        out.msg_rate = static_cast<double>(o.iters) / seconds;
        out.bw_MBps = static_cast<double>(size) * static_cast<double>(o.iters) / seconds / (1 << 20);
    } else if (lat) {
        out.lat_us = seconds * 1e6 / static_cast<double>(o.iters) / 2;
        out.typical_lat_us = timer.median_seconds() * 1e6 / 2;
        out.msg_rate = static_cast<double>(o.iters) * 2 / seconds;
        out.bw_MBps = static_cast<double>(size) * static_cast<double>(o.iters) * 2 / seconds / (1 << 20);
    } else {
        out.msg_rate = static_cast<double>(o.iters) / seconds;
        out.bw_MBps = static_cast<double>(size) * static_cast<double>(o.iters) / seconds / (1 << 20);
        out.lat_us = seconds * 1e6 / static_cast<double>(o.iters);
    }
    return true;
}

}  // namespace ufi::perf
