// Blocking CQ calls and wait objects: fi_cq_sread/sreadfrom timeouts and wake-ups (a thread
// writes after a delay), fi_cq_signal, FI_CQ_COND_THRESHOLD, FI_GETWAIT fds that poll()
// readable when an entry arrives or after a signal, FI_WAIT_POLLFD, FI_WAIT_YIELD, sleeping on
// a progress source's event fd, and fi_trywait. Every wait is bounded.
#include "completion_fixture.h"

#include "runtime/cq/cq.h"
#include "runtime/wait/trywait.h"

#include <thread>

namespace {

using ufi::runtime::cq::Cq;
using ufi::runtime::cq::cq_of;
using ufi_test::now_ms;
using ufi_test::readable;

// A timeout must not fire early nor be ignored (ufi_test::kSchedulingSlackMs).
constexpr int64_t kSlack = ufi_test::kSchedulingSlackMs;

class CqWaitTest : public ::testing::TestWithParam<fi_wait_obj> {
  protected:
    void SetUp() override { env_.open(); }
    void TearDown() override { env_.close(); }

    fid_cq *open_cq(fi_wait_obj wait, fi_cq_wait_cond cond = FI_CQ_COND_NONE, size_t size = 0) {
        fi_cq_attr attr{};
        attr.format = FI_CQ_FORMAT_DATA;
        attr.wait_obj = wait;
        attr.wait_cond = cond;
        attr.size = size;
        fid_cq *cq = nullptr;
        EXPECT_EQ(fi_cq_open(env_.domain, &attr, &cq, nullptr), 0);
        return cq;
    }

    ufi_test::FabricEnv env_;
};

TEST_P(CqWaitTest, SreadTimesOutWithEagain) {
    fid_cq *cq = open_cq(GetParam());
    fi_cq_data_entry e;
    int64_t t0 = now_ms();
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 0), -FI_EAGAIN);
    EXPECT_LT(now_ms() - t0, kSlack);
    t0 = now_ms();
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 150), -FI_EAGAIN);
    const int64_t elapsed = now_ms() - t0;
    EXPECT_GE(elapsed, 140);
    EXPECT_LT(elapsed, 150 + kSlack);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_P(CqWaitTest, SreadWakesWhenAThreadWrites) {
    fid_cq *cq = open_cq(GetParam());
    Cq *q = cq_of(cq);
    std::thread writer([q] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        EXPECT_EQ(q->write(nullptr, FI_RECV, 5, nullptr, 77, 0, 12), 0);
    });
    fi_cq_data_entry e{};
    fi_addr_t src = 0;
    const int64_t t0 = now_ms();
    EXPECT_EQ(fi_cq_sreadfrom(cq, &e, 1, &src, nullptr, 5000), 1);
    const int64_t elapsed = now_ms() - t0;
    writer.join();
    EXPECT_EQ(e.data, 77u);
    EXPECT_EQ(src, 12u);
    EXPECT_GE(elapsed, 80);
    EXPECT_LT(elapsed, 100 + kSlack) << "woken by the write, not the timeout";
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_P(CqWaitTest, InfiniteSreadWakesToo) {
    fid_cq *cq = open_cq(GetParam());
    Cq *q = cq_of(cq);
    std::thread writer([q] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        EXPECT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 1, 0), 0);
    });
    alarm(30);  // bounded even if the wake-up were lost
    fi_cq_data_entry e{};
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, -1), 1);
    alarm(0);
    writer.join();
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_P(CqWaitTest, SignalWakesABlockedSread) {
    fid_cq *cq = open_cq(GetParam());
    // Before any sread: the next one returns at once (fabtests' cq_signal).
    ASSERT_EQ(fi_cq_signal(cq), 0);
    fi_cq_data_entry e;
    int64_t t0 = now_ms();
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 2000), -FI_EAGAIN);
    EXPECT_LT(now_ms() - t0, kSlack);

    std::thread signaller([cq] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        EXPECT_EQ(fi_cq_signal(cq), 0);
    });
    t0 = now_ms();
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 5000), -FI_EAGAIN);
    const int64_t elapsed = now_ms() - t0;
    signaller.join();
    EXPECT_GE(elapsed, 80);
    EXPECT_LT(elapsed, 100 + kSlack);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_P(CqWaitTest, SreadReturnsErrorsAtTheHead) {
    fid_cq *cq = open_cq(GetParam());
    fi_cq_err_entry err{};
    err.err = FI_ECANCELED;
    ASSERT_EQ(cq_of(cq)->write_error(err), 0);
    fi_cq_data_entry e;
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 1000), -FI_EAVAIL);
    ASSERT_EQ(fi_cq_readerr(cq, &err, 0), 1);
    EXPECT_EQ(err.err, FI_ECANCELED);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

// FI_CQ_COND_THRESHOLD: sread waits for `cond` entries; at the timeout it returns what is there.
TEST_P(CqWaitTest, ThresholdCondition) {
    fid_cq *cq = open_cq(GetParam(), FI_CQ_COND_THRESHOLD);
    Cq *q = cq_of(cq);
    std::thread writer([q] {
        for (uint64_t i = 0; i < 4; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
            EXPECT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, i, 0), 0);
        }
    });
    const size_t threshold = 3;
    fi_cq_data_entry e[8];
    const int64_t t0 = now_ms();
    const ssize_t n = fi_cq_sread(cq, e, 8, &threshold, 5000);
    const int64_t elapsed = now_ms() - t0;
    EXPECT_GE(n, 3);
    EXPECT_GE(elapsed, 100) << "did not return on the first entry";
    writer.join();
    ssize_t rest = 0;
    if (n < 4) rest = fi_cq_read(cq, e, 8);
    EXPECT_EQ(n + rest, 4);

    ASSERT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 9, 0), 0);
    EXPECT_EQ(fi_cq_sread(cq, e, 8, &threshold, 100), 1) << "timeout: what is there";
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_P(CqWaitTest, ProgressSourceWakesSread) {
    fid_cq *cq = open_cq(GetParam());
    Cq *q = cq_of(cq);
    ufi_test::PipeSource src;
    src.on_event = [&] { q->write(&src, FI_RECV, 1, nullptr, 0, 0); };
    src.arm_eagain = 2;  // work pending twice: sread progresses again instead of sleeping
    ASSERT_EQ(ufi::runtime::cq::attach_source(q, src.source()), 0);
    std::thread transport([&src] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        src.fire();
    });
    fi_cq_data_entry e{};
    const int64_t t0 = now_ms();
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 5000), 1);
    const int64_t elapsed = now_ms() - t0;
    transport.join();
    EXPECT_EQ(e.op_context, &src);
    EXPECT_LT(elapsed, 100 + kSlack);
    if (GetParam() != FI_WAIT_YIELD) {
        EXPECT_GE(src.arm_calls.load(), 3);
        EXPECT_LT(src.progress_calls.load(), 50) << "slept on the source's fd, did not spin";
    }
    ufi::runtime::cq::detach_source(q, src.source());
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_P(CqWaitTest, SourceWithoutFdIsPolledInSlices) {
    fid_cq *cq = open_cq(GetParam());
    Cq *q = cq_of(cq);
    ufi_test::PipeSource src;
    src.has_fd = false;
    src.on_event = [&] { q->write(&src, FI_RECV, 1, nullptr, 0, 0); };
    ASSERT_EQ(ufi::runtime::cq::attach_source(q, src.source()), 0);
    std::thread transport([&src] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        src.fire();
    });
    fi_cq_data_entry e{};
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 5000), 1);
    transport.join();
    if (GetParam() != FI_WAIT_YIELD) {
        EXPECT_LT(src.progress_calls.load(), 1000) << "short sleeps, not a spin";
        EXPECT_EQ(ufi::runtime::wait::trywait(reinterpret_cast<fid **>(&cq), 1), -FI_EAGAIN)
            << "a source without an fd must be polled";
    }
    ufi::runtime::cq::detach_source(q, src.source());
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

INSTANTIATE_TEST_SUITE_P(WaitObjects, CqWaitTest,
                         ::testing::Values(FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_POLLFD,
                                           FI_WAIT_YIELD),
                         [](const auto &info) {
                             switch (info.param) {
                                 case FI_WAIT_UNSPEC:
                                     return std::string("Unspec");
                                 case FI_WAIT_FD:
                                     return std::string("Fd");
                                 case FI_WAIT_POLLFD:
                                     return std::string("PollFd");
                                 default:
                                     return std::string("Yield");
                             }
                         });

class CqFdTest : public CqWaitTest {};

TEST_F(CqFdTest, GetwaitFdPollsReadable) {
    fid_cq *cq = open_cq(FI_WAIT_FD);
    Cq *q = cq_of(cq);
    int fd = -1;
    ASSERT_EQ(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
    ASSERT_GE(fd, 0);
    fi_wait_obj obj = FI_WAIT_NONE;
    ASSERT_EQ(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
    EXPECT_EQ(obj, FI_WAIT_FD);

    EXPECT_EQ(ufi::runtime::wait::trywait(reinterpret_cast<fid **>(&cq), 1), 0);
    EXPECT_FALSE(readable(fd));
    ASSERT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 1, 0), 0);
    EXPECT_TRUE(readable(fd)) << "an entry arrived";
    EXPECT_EQ(ufi::runtime::wait::trywait(reinterpret_cast<fid **>(&cq), 1), -FI_EAGAIN)
        << "read first";
    fi_cq_data_entry e[4];
    ASSERT_EQ(fi_cq_read(cq, e, 4), 1);
    EXPECT_FALSE(readable(fd)) << "readable exactly while entries are queued";

    ASSERT_EQ(fi_cq_signal(cq), 0);
    EXPECT_TRUE(readable(fd)) << "after fi_cq_signal";
    EXPECT_EQ(fi_cq_read(cq, e, 4), -FI_EAGAIN);
    EXPECT_FALSE(readable(fd));

    // A thread writes while we sleep in poll() on the fd.
    std::thread writer([q] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        EXPECT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 2, 0), 0);
    });
    EXPECT_TRUE(readable(fd, 5000));
    writer.join();
    ASSERT_EQ(fi_cq_read(cq, e, 4), 1);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqFdTest, GetwaitFdWakesOnATransportEvent) {
    fid_cq *cq = open_cq(FI_WAIT_UNSPEC);
    Cq *q = cq_of(cq);
    ufi_test::PipeSource src;
    src.on_event = [&] { q->write(&src, FI_RECV, 1, nullptr, 0, 0); };
    ASSERT_EQ(ufi::runtime::cq::attach_source(q, src.source()), 0);
    int fd = -1;
    ASSERT_EQ(fi_control(&cq->fid, FI_GETWAIT, &fd), 0);
    ASSERT_EQ(ufi::runtime::wait::trywait(reinterpret_cast<fid **>(&cq), 1), 0)
        << "arms the source";
    EXPECT_FALSE(readable(fd));
    src.fire();
    EXPECT_TRUE(readable(fd, 5000)) << "the transport's fd is inside the wait fd";
    fi_cq_data_entry e;
    EXPECT_EQ(fi_cq_read(cq, &e, 1), 1);
    ufi::runtime::cq::detach_source(q, src.source());
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqFdTest, PollFdWaitObject) {
    fid_cq *cq = open_cq(FI_WAIT_POLLFD);
    fi_wait_pollfd pfd{};
    EXPECT_EQ(fi_control(&cq->fid, FI_GETWAIT, &pfd), -FI_ETOOSMALL);
    EXPECT_EQ(pfd.nfds, 1u);
    pollfd slots[2] = {};
    pfd.fd = slots;
    pfd.nfds = 2;
    ASSERT_EQ(fi_control(&cq->fid, FI_GETWAIT, &pfd), 0);
    EXPECT_EQ(pfd.nfds, 1u);
    EXPECT_EQ(slots[0].events, POLLIN);
    ASSERT_EQ(cq_of(cq)->write(nullptr, FI_SEND, 0, nullptr, 1, 0), 0);
    EXPECT_EQ(poll(slots, 1, 1000), 1);
    fi_wait_obj obj = FI_WAIT_NONE;
    ASSERT_EQ(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
    EXPECT_EQ(obj, FI_WAIT_POLLFD);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqFdTest, SreadBadArguments) {
    fid_cq *cq = open_cq(FI_WAIT_FD);
    EXPECT_EQ(fi_cq_sread(cq, nullptr, 1, nullptr, 0), -FI_EINVAL);
    EXPECT_EQ(fi_cq_sreadfrom(cq, nullptr, 1, nullptr, nullptr, 0), -FI_EINVAL);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqFdTest, YieldHasNoWaitObject) {
    fid_cq *cq = open_cq(FI_WAIT_YIELD);
    int fd = -1;
    EXPECT_EQ(fi_control(&cq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
    fi_wait_obj obj = FI_WAIT_NONE;
    ASSERT_EQ(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
    EXPECT_EQ(obj, FI_WAIT_YIELD);
    EXPECT_EQ(ufi::runtime::wait::trywait(reinterpret_cast<fid **>(&cq), 1), -FI_EINVAL);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST(CqTrywait, BadArguments) {
    EXPECT_EQ(ufi::runtime::wait::trywait(nullptr, 1), -FI_EINVAL);
    EXPECT_EQ(ufi::runtime::wait::trywait(nullptr, 0), 0);
    fid f{};
    f.fclass = FI_CLASS_MR;
    fid *fids[1] = {&f};
    EXPECT_EQ(ufi::runtime::wait::trywait(fids, 1), -FI_EINVAL);
}

}  // namespace
