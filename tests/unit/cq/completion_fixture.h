// Shared by the CQ, EQ and counter tests: a fabric and domain opened through the public API for
// a chosen API version and threading model, a fake progress source (a pipe standing in for a
// transport's event fd) and small timing helpers.
#pragma once

#include "runtime/progress.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace ufi_test {

struct FabricEnv {
    fi_info *info = nullptr;
    fid_fabric *fabric = nullptr;
    fid_domain *domain = nullptr;

    // Opens the first domain fi_getinfo offers for `version`, with `threading`.
    void open(uint32_t version = FI_VERSION(2, 7), int threading = FI_THREAD_SAFE) {
        fi_info *hints = fi_allocinfo();
        ASSERT_NE(hints, nullptr);
        hints->domain_attr->threading = static_cast<fi_threading>(threading);
        ASSERT_EQ(fi_getinfo(version, nullptr, nullptr, 0, hints, &info), 0);
        fi_freeinfo(hints);
        ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
        ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
    }
    void close() {
        if (domain != nullptr) {
            EXPECT_EQ(fi_close(&domain->fid), 0);
        }
        if (fabric != nullptr) {
            EXPECT_EQ(fi_close(&fabric->fid), 0);
        }
        if (info != nullptr) fi_freeinfo(info);
        domain = nullptr;
        fabric = nullptr;
        info = nullptr;
    }
};

// A stand-in for an endpoint's transports: a byte written to the pipe is an "event" that
// progress() turns into whatever on_event does (write a completion, bump a counter).
struct PipeSource {
    int fds[2] = {-1, -1};
    bool has_fd = true;
    std::atomic<int> progress_calls{0};
    std::atomic<int> arm_calls{0};
    std::atomic<int> arm_eagain{0};  // arm() answers -FI_EAGAIN this many times
    std::function<void()> on_event;

    PipeSource() { EXPECT_EQ(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0); }
    ~PipeSource() {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    void fire() {
        const char b = 1;
        EXPECT_EQ(write(fds[1], &b, 1), 1);
    }
    static unsigned progress(void *arg) {
        auto *s = static_cast<PipeSource *>(arg);
        s->progress_calls.fetch_add(1);
        unsigned n = 0;
        char b;
        while (read(s->fds[0], &b, 1) == 1) {
            ++n;
            if (s->on_event) s->on_event();
        }
        return n;
    }
    static int arm(void *arg) {
        auto *s = static_cast<PipeSource *>(arg);
        s->arm_calls.fetch_add(1);
        if (s->arm_eagain.load() > 0) {
            s->arm_eagain.fetch_sub(1);
            return -FI_EAGAIN;
        }
        return 0;
    }
    static int wait_fds(void *arg, int *out, int max) {
        auto *s = static_cast<PipeSource *>(arg);
        if (!s->has_fd || max < 1) return 0;
        out[0] = s->fds[0];
        return 1;
    }
    ufi::runtime::ProgressSource source() {
        ufi::runtime::ProgressSource p;
        p.arg = this;
        p.progress = &PipeSource::progress;
        p.arm = &PipeSource::arm;
        p.wait_fds = &PipeSource::wait_fds;
        return p;
    }
};

// The slack allowed on top of a wait's own time: only a lost wake-up or an ignored timeout
// exceeds it. A loaded CI machine can keep a woken thread off the CPU for a second or more,
// so the bound is generous; whether a wait was woken or timed out is told by its result
// (0 against -FI_ETIMEDOUT / -FI_EAGAIN), not by the clock. Lower bounds (a timeout must
// not fire early) are exact.
inline constexpr int64_t kSchedulingSlackMs = 5000;

inline int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Readable within timeout_ms (poll())?
inline bool readable(int fd, int timeout_ms = 0) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

}  // namespace ufi_test
