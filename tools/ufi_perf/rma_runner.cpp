// The RMA tests, in ucx_perftest's shapes:
//   put_lat  ping-pong of writes: each side writes the other's window and polls the last byte
//            of its own for the iteration's mark (as ucp_put_lat polls memory); one-way is half
//            the round trip. Writes that fit the inject size go by fi_inject_write.
//   get_lat  the client reads the server's window, one read at a time (ucp_get).
//   put_bw / get_bw  the client keeps `window` operations in flight (ucp_put_bw).
//   fadd_lat / fadd_rate  64-bit fetch-add into the server's window, one at a time / `window`
//            in flight (ucp_fadd); -o and -D choose another fetching or comparing atomic.
// The server of get_lat and the *_bw tests only progresses its endpoint (the reads and writes
// need its progress to be served) until the client says it is done.
#include "runner.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <atomic>
#include <chrono>
#include <vector>

namespace ufi::perf {

namespace {

using Clock = std::chrono::steady_clock;

bool posted(Endpoint &ep, ssize_t rc, std::string &error) {
    if (rc == 0) return true;
    if (rc != -FI_EAGAIN) {
        error = std::string("post: ") + fi_strerror(static_cast<int>(-rc));
        return false;
    }
    return ep.poll(error);  // progress, then the caller tries again
}

// Reads the window's byte as another process (or the endpoint's progress) wrote it.
uint8_t load(const uint8_t *p) {
    return std::atomic_ref<const uint8_t>(*p).load(std::memory_order_acquire);
}

// Progresses until the byte at `p` is `mark`; false on an error or after 60 s.
bool wait_mark(Endpoint &ep, const uint8_t *p, uint8_t mark, std::string &error) {
    unsigned spins = 0;
    Clock::time_point start{};
    while (load(p) != mark) {
        if (!ep.poll(error)) return false;
        if (++spins % 4096 != 0) continue;
        if (spins == 4096) start = Clock::now();
        else if (Clock::now() - start > std::chrono::seconds(60)) {
            error = "the peer's write never arrived";
            return false;
        }
    }
    return true;
}

// The server's side of get_lat and the *_bw tests: progress until the client's byte arrives.
bool serve(Endpoint &ep, Oob &oob, std::string &error) {
    char done = 0;
    unsigned spins = 0;
    const auto start = Clock::now();
    for (;;) {
        if (!ep.poll(error)) return false;
        if (++spins % 256 != 0) continue;
        if (oob.recv(&done, 1, 0)) return true;
        if (Clock::now() - start > std::chrono::seconds(600)) {
            error = "the client never finished";
            return false;
        }
    }
}

bool put_lat(Endpoint &ep, size_t size, uint64_t count, bool client, const RemoteWindow &remote,
             std::string &error, IterTimer &timer) {
    std::vector<uint8_t> out(size, 0x5a);
    const uint8_t *mine = ep.window() + size - 1;
    const bool inject = size <= ep.info()->tx_attr->inject_size;
    uint64_t issued = 0;  // writes whose completion comes to the CQ
    const uint64_t base = ep.completed();
    auto write = [&](uint8_t mark) {
        out[size - 1] = mark;
        for (;;) {
            const ssize_t rc =
                inject ? fi_inject_write(ep.ep(), out.data(), size, ep.peer(), remote.addr, remote.key)
                       : fi_write(ep.ep(), out.data(), size, nullptr, ep.peer(), remote.addr,
                                  remote.key, nullptr);
            if (rc == 0) break;
            if (!posted(ep, rc, error)) return false;
        }
        if (!inject) ++issued;
        return true;
    };
    timer.start();
    for (uint64_t i = 0; i < count; ++i) {
        const auto mark = static_cast<uint8_t>(i % 255 + 1);  // never the window's initial 0
        if (client) {
            if (!write(mark) || !wait_mark(ep, mine, mark, error)) return false;
        } else {
            if (!wait_mark(ep, mine, mark, error) || !write(mark)) return false;
        }
        timer.tick();
    }
    // Both sides start the next run from a window of zeroes, with nothing in flight.
    if (!ep.wait_total(base + issued, error)) return false;
    ep.window()[size - 1] = 0;
    return true;
}

bool stream(Endpoint &ep, const Options &o, size_t size, uint64_t count,
            const RemoteWindow &remote, std::string &error, IterTimer &timer) {
    const Test test = o.test;
    std::vector<uint8_t> buf(size != 0 ? size : 1, 0x5a);
    const bool get = test == Test::GetLat || test == Test::GetBw;
    const bool fadd = test == Test::FaddLat || test == Test::FaddRate;
    const bool one_at_a_time = test == Test::GetLat || test == Test::FaddLat;
    const uint32_t in_flight = one_at_a_time ? 1 : o.window;
    // The atomic's operand and compare values (one element, bytes of 1: a valid value of
    // every datatype) and where each in-flight one's old value lands.
    const auto op = static_cast<fi_op>(o.atomic_op);
    const auto datatype = static_cast<fi_datatype>(o.atomic_datatype);
    const bool compare = op >= FI_CSWAP && op <= FI_MSWAP;
    std::vector<uint8_t> operand(size, 1), cmp(size, 1), fetched(size * in_flight);
    const uint64_t base = ep.completed();
    timer.start();
    for (uint64_t i = 0; i < count; ++i) {
        if (i >= in_flight && !ep.wait_total(base + (i - in_flight + 1), error)) return false;
        for (;;) {
            const ssize_t rc =
                fadd && compare
                    ? fi_compare_atomic(ep.ep(), operand.data(), 1, nullptr, cmp.data(), nullptr,
                                        &fetched[(i % in_flight) * size], nullptr, ep.peer(),
                                        remote.addr, remote.key, datatype, op, nullptr)
                : fadd ? fi_fetch_atomic(ep.ep(), operand.data(), 1, nullptr,
                                         &fetched[(i % in_flight) * size], nullptr, ep.peer(),
                                         remote.addr, remote.key, datatype, op, nullptr)
                : get ? fi_read(ep.ep(), buf.data(), size, nullptr, ep.peer(), remote.addr,
                                remote.key, nullptr)
                      : fi_write(ep.ep(), buf.data(), size, nullptr, ep.peer(), remote.addr,
                                 remote.key, nullptr);
            if (rc == 0) break;
            if (!posted(ep, rc, error)) return false;
        }
        if (one_at_a_time && !ep.wait_total(base + i + 1, error)) return false;
        timer.tick();
    }
    return ep.wait_total(base + count, error);
}

}  // namespace

bool run_rma(Endpoint &ep, Oob &oob, const Options &o, size_t size, uint64_t count, bool client,
             const RemoteWindow &remote, std::string &error, double &seconds, IterTimer &timer) {
    const auto start = Clock::now();
    if (o.test == Test::PutLat) {
        if (!put_lat(ep, size, count, client, remote, error, timer)) return false;
    } else if (client) {
        if (!stream(ep, o, size, count, remote, error, timer)) return false;
        const char done = 'd';
        if (!oob.send(&done, 1)) return error = "the server left", false;
    } else if (!serve(ep, oob, error)) {
        return false;
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return true;
}

}  // namespace ufi::perf
