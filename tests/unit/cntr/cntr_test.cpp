// fi_cntr_open, read/readerr/add/adderr/set/seterr, fi_cntr_wait (threshold, timeout ->
// -FI_ETIMEDOUT, error change -> -FI_EAVAIL, wake-up by another thread or a progress source),
// FI_GETWAIT, FI_GETOPSFLAG/FI_SETOPSFLAG, FI_CNTR_EVENTS_COMP/BYTES accounting and the
// bindings (-FI_EBUSY while endpoints or MRs are bound).
#include "completion_fixture.h"

#include "runtime/cntr/access_tally.h"
#include "runtime/cntr/cntr.h"
#include "runtime/wait/trywait.h"
#include "base/log/testing.h"

#include <string>
#include <thread>
#include <vector>

namespace {

using ufi::runtime::cntr::Cntr;
using ufi::runtime::cntr::cntr_of;
using ufi_test::now_ms;
using ufi_test::readable;

class CntrTest : public ::testing::Test {
  protected:
    void SetUp() override { env_.open(); }
    void TearDown() override { env_.close(); }

    fid_cntr *open_cntr(fi_wait_obj wait = FI_WAIT_NONE,
                        fi_cntr_events events = FI_CNTR_EVENTS_COMP) {
        fi_cntr_attr attr{};
        attr.events = events;
        attr.wait_obj = wait;
        fid_cntr *c = nullptr;
        EXPECT_EQ(fi_cntr_open(env_.domain, &attr, &c, nullptr), 0);
        return c;
    }
    void expect_open_fails(fi_cntr_attr attr, int rc, const char *argument) {
        ufi::log::ScopedCapture capture;
        fid_cntr *c = nullptr;
        EXPECT_EQ(fi_cntr_open(env_.domain, &attr, &c, nullptr), rc) << argument;
        const auto lines = capture.lines();
        ASSERT_EQ(lines.size(), 1u) << argument;
        EXPECT_NE(lines[0].find(argument), std::string::npos) << lines[0];
    }

    ufi_test::FabricEnv env_;
};

TEST_F(CntrTest, OpenAndBadAttributes) {
    int ctx;
    fid_cntr *c = nullptr;
    ASSERT_EQ(fi_cntr_open(env_.domain, nullptr, &c, &ctx), 0) << "NULL attr: the defaults";
    EXPECT_EQ(c->fid.fclass, static_cast<size_t>(FI_CLASS_CNTR));
    EXPECT_EQ(c->fid.context, &ctx);
    EXPECT_EQ(fi_close(&env_.domain->fid), -FI_EBUSY) << "a child of the domain";
    EXPECT_EQ(fi_cntr_wait(c, 1, 0), -FI_ENOSYS) << "FI_WAIT_NONE";
    EXPECT_EQ(fi_close(&c->fid), 0);

    fi_cntr_attr good{};
    good.wait_obj = FI_WAIT_UNSPEC;
    fi_cntr_attr a = good;
    reinterpret_cast<int &>(a.events) = 5;
    expect_open_fails(a, -FI_EINVAL, "attr->events");
    a = good;
    a.flags = 1;
    expect_open_fails(a, -FI_EBADFLAGS, "attr->flags");
    a = good;
    a.flags = FI_XPU;
    expect_open_fails(a, -FI_ENOSYS, "FI_XPU");
    a = good;
    reinterpret_cast<int &>(a.wait_obj) = 99;
    expect_open_fails(a, -FI_EINVAL, "attr->wait_obj");
    a = good;
    a.wait_obj = FI_WAIT_SET;
    expect_open_fails(a, -FI_ENOSYS, "attr->wait_obj");
    a = good;
    a.wait_obj = FI_WAIT_MUTEX_COND;
    expect_open_fails(a, -FI_ENOSYS, "attr->wait_obj");
    EXPECT_EQ(fi_cntr_open(env_.domain, &good, nullptr, nullptr), -FI_EINVAL);
    EXPECT_EQ(env_.domain->ops->cntr_open(nullptr, &good, &c, nullptr), -FI_EINVAL);
}

// Bits other than FI_XPU are -FI_EBADFLAGS even with FI_XPU among them.
TEST_F(CntrTest, UnknownFlagsAreBadFlagsWithOrWithoutXpu) {
    fi_cntr_attr a{};
    a.wait_obj = FI_WAIT_UNSPEC;
    for (uint64_t flags : {uint64_t{FI_XPU | 1}, uint64_t{FI_XPU | FI_AFFINITY}, ~uint64_t{0}}) {
        a.flags = flags;
        expect_open_fails(a, -FI_EBADFLAGS, "attr->flags");
    }
}

TEST_F(CntrTest, ValuesAndErrors) {
    fid_cntr *c = open_cntr();
    EXPECT_EQ(fi_cntr_read(c), 0u);
    EXPECT_EQ(fi_cntr_readerr(c), 0u);
    EXPECT_EQ(fi_cntr_add(c, 5), 0);
    EXPECT_EQ(fi_cntr_add(c, 7), 0);
    EXPECT_EQ(fi_cntr_read(c), 12u);
    EXPECT_EQ(fi_cntr_set(c, 3), 0);
    EXPECT_EQ(fi_cntr_read(c), 3u);
    EXPECT_EQ(fi_cntr_adderr(c, 2), 0);
    EXPECT_EQ(fi_cntr_readerr(c), 2u);
    EXPECT_EQ(fi_cntr_seterr(c, 10), 0);
    EXPECT_EQ(fi_cntr_readerr(c), 10u);
    EXPECT_EQ(fi_cntr_read(c), 3u) << "the two values are distinct";
    // max_cntr_value is UINT64_MAX: values wrap modulo 2^64.
    EXPECT_EQ(fi_cntr_set(c, UINT64_MAX), 0);
    EXPECT_EQ(fi_cntr_read(c), UINT64_MAX);
    EXPECT_EQ(fi_cntr_add(c, 2), 0);
    EXPECT_EQ(fi_cntr_read(c), 1u);
    EXPECT_EQ(fi_cntr_export_xpu(c, 0, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_close(&c->fid), 0);
}

TEST_F(CntrTest, DataPathAccounting) {
    fid_cntr *comp = open_cntr();
    fid_cntr *bytes = open_cntr(FI_WAIT_NONE, FI_CNTR_EVENTS_BYTES);
    ufi::runtime::cntr::on_completion(cntr_of(comp), 4096);
    ufi::runtime::cntr::on_completion(cntr_of(comp), 1);
    ufi::runtime::cntr::on_completion(cntr_of(bytes), 4096);
    ufi::runtime::cntr::on_completion(cntr_of(bytes), 1);
    ufi::runtime::cntr::on_error(cntr_of(comp));
    ufi::runtime::cntr::on_error(cntr_of(bytes));
    EXPECT_EQ(fi_cntr_read(comp), 2u) << "FI_CNTR_EVENTS_COMP counts operations";
    EXPECT_EQ(fi_cntr_read(bytes), 4097u) << "FI_CNTR_EVENTS_BYTES counts bytes";
    EXPECT_EQ(fi_cntr_readerr(comp), 1u);
    EXPECT_EQ(fi_cntr_readerr(bytes), 1u) << "an error adds 1, not its size";
    EXPECT_TRUE(cntr_of(bytes)->counts_bytes());
    EXPECT_EQ(fi_close(&comp->fid), 0);
    EXPECT_EQ(fi_close(&bytes->fid), 0);
}

// One remote access counts once on a counter however many bindings lead to it (the endpoint's
// and an MR's, two MRs', one MR named by two segments); a byte counter counts each byte once.
TEST_F(CntrTest, OneAccessCountsOncePerCounter) {
    fid_cntr *comp = open_cntr();
    fid_cntr *bytes = open_cntr(FI_WAIT_NONE, FI_CNTR_EVENTS_BYTES);
    {
        ufi::runtime::cntr::AccessTally tally;  // bound to the endpoint and to both MRs
        tally.count_whole(cntr_of(comp), 96);
        tally.count_whole(cntr_of(bytes), 96);
        tally.count_whole(nullptr, 96);  // the endpoint has no read counter
        tally.count_segment(cntr_of(comp), 64);
        tally.count_segment(cntr_of(bytes), 64);
        tally.count_segment(cntr_of(comp), 32);
        tally.count_segment(cntr_of(bytes), 32);
    }
    EXPECT_EQ(fi_cntr_read(comp), 1u) << "the endpoint's and the MRs' bindings count once";
    EXPECT_EQ(fi_cntr_read(bytes), 96u) << "the whole access's bytes, once";
    {
        ufi::runtime::cntr::AccessTally tally;  // bound to two MRs only
        tally.count_segment(cntr_of(comp), 64);
        tally.count_segment(cntr_of(bytes), 64);
        tally.count_segment(cntr_of(comp), 32);
        tally.count_segment(cntr_of(bytes), 32);
    }
    EXPECT_EQ(fi_cntr_read(comp), 2u);
    EXPECT_EQ(fi_cntr_read(bytes), 192u) << "each segment's bytes";
    EXPECT_EQ(fi_close(&comp->fid), 0);
    EXPECT_EQ(fi_close(&bytes->fid), 0);
}

TEST_F(CntrTest, OpsFlagsControl) {
    fid_cntr *c = open_cntr();
    uint64_t flags = 0;
    ASSERT_EQ(fi_control(&c->fid, FI_GETOPSFLAG, &flags), 0);
    EXPECT_EQ(flags, 0u);
    flags = FI_SEND;
    ASSERT_EQ(fi_control(&c->fid, FI_SETOPSFLAG, &flags), 0);
    flags = 0;
    ASSERT_EQ(fi_control(&c->fid, FI_GETOPSFLAG, &flags), 0);
    EXPECT_EQ(flags, FI_SEND);
    EXPECT_EQ(fi_control(&c->fid, FI_GETOPSFLAG, nullptr), -FI_EINVAL);
    int fd;
    EXPECT_EQ(fi_control(&c->fid, FI_GETWAIT, &fd), -FI_ENODATA);
    EXPECT_EQ(fi_control(&c->fid, FI_ENABLE, &fd), -FI_ENOSYS);
    EXPECT_EQ(c->fid.ops->bind(&c->fid, &env_.domain->fid, 0), -FI_ENOSYS);
    EXPECT_EQ(fi_close(&c->fid), 0);
}

TEST_F(CntrTest, BindingsBlockClose) {
    fid_cntr *c = open_cntr();
    Cntr *n = cntr_of(c);
    ASSERT_EQ(cntr_of(&c->fid), n);
    ufi::runtime::cntr::attach_mr(n);
    EXPECT_EQ(fi_close(&c->fid), -FI_EBUSY);
    ufi::runtime::cntr::detach_mr(n);
    ufi_test::PipeSource src;
    src.on_event = [n] { ufi::runtime::cntr::on_completion(n, 0); };
    ASSERT_EQ(ufi::runtime::cntr::attach_source(n, src.source()), 0);
    EXPECT_EQ(ufi::runtime::cntr::attach_source(nullptr, src.source()), -FI_EINVAL);
    EXPECT_EQ(fi_close(&c->fid), -FI_EBUSY);
    src.fire();
    EXPECT_EQ(fi_cntr_read(c), 1u) << "reading progresses the bound endpoint";
    ufi::runtime::cntr::detach_source(n, src.source());
    EXPECT_EQ(fi_close(&c->fid), 0);
    fid f{};
    f.fclass = FI_CLASS_CQ;
    EXPECT_EQ(cntr_of(&f), nullptr);
}

class CntrWaitTest : public CntrTest, public ::testing::WithParamInterface<fi_wait_obj> {};

TEST_P(CntrWaitTest, ThresholdAndTimeout) {
    fid_cntr *c = open_cntr(GetParam());
    ASSERT_EQ(fi_cntr_add(c, 3), 0);
    EXPECT_EQ(fi_cntr_wait(c, 3, 0), 0) << "already there";
    EXPECT_EQ(fi_cntr_wait(c, 2, -1), 0);
    int64_t t0 = now_ms();
    EXPECT_EQ(fi_cntr_wait(c, 4, 0), -FI_ETIMEDOUT);
    EXPECT_LT(now_ms() - t0, ufi_test::kSchedulingSlackMs) << "a zero timeout returns at once";
    t0 = now_ms();
    EXPECT_EQ(fi_cntr_wait(c, 4, 150), -FI_ETIMEDOUT);
    const int64_t elapsed = now_ms() - t0;
    EXPECT_GE(elapsed, 140);
    EXPECT_LT(elapsed, 150 + ufi_test::kSchedulingSlackMs);
    EXPECT_EQ(fi_cntr_readerr(c), 0u) << "a timeout leaves the error value alone";
    EXPECT_EQ(fi_close(&c->fid), 0);
}

TEST_P(CntrWaitTest, WokenByAnotherThread) {
    fid_cntr *c = open_cntr(GetParam());
    Cntr *n = cntr_of(c);
    std::thread completer([n] {
        for (int i = 0; i < 5; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            ufi::runtime::cntr::on_completion(n, 0);
        }
    });
    alarm(30);
    const int64_t t0 = now_ms();
    EXPECT_EQ(fi_cntr_wait(c, 5, 2 * ufi_test::kSchedulingSlackMs), 0) << "woken, not timed out";
    const int64_t elapsed = now_ms() - t0;
    alarm(0);
    completer.join();
    EXPECT_EQ(fi_cntr_read(c), 5u);
    EXPECT_GE(elapsed, 80);
    EXPECT_LT(elapsed, 100 + ufi_test::kSchedulingSlackMs);
    EXPECT_EQ(fi_close(&c->fid), 0);
}

TEST_P(CntrWaitTest, ErrorChangeUnblocks) {
    fid_cntr *c = open_cntr(GetParam());
    Cntr *n = cntr_of(c);
    ufi::runtime::cntr::on_error(n);  // before the wait: not a change during it
    std::thread failer([n] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ufi::runtime::cntr::on_error(n);
    });
    const int64_t t0 = now_ms();
    EXPECT_EQ(fi_cntr_wait(c, 1, 2 * ufi_test::kSchedulingSlackMs), -FI_EAVAIL)
        << "woken by the error, not timed out";
    EXPECT_LT(now_ms() - t0, 100 + ufi_test::kSchedulingSlackMs);
    failer.join();
    EXPECT_EQ(fi_cntr_readerr(c), 2u);
    EXPECT_EQ(fi_close(&c->fid), 0);
}

TEST_P(CntrWaitTest, SourceEventWakesWait) {
    fid_cntr *c = open_cntr(GetParam());
    Cntr *n = cntr_of(c);
    ufi_test::PipeSource src;
    src.on_event = [n] { ufi::runtime::cntr::on_completion(n, 64); };
    src.arm_eagain = 1;
    ASSERT_EQ(ufi::runtime::cntr::attach_source(n, src.source()), 0);
    std::thread transport([&src] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        src.fire();
    });
    EXPECT_EQ(fi_cntr_wait(c, 1, 5000), 0);
    transport.join();
    if (GetParam() != FI_WAIT_YIELD) {
        EXPECT_LT(src.progress_calls.load(), 50) << "slept on the source's fd";
    }
    ufi::runtime::cntr::detach_source(n, src.source());
    EXPECT_EQ(fi_close(&c->fid), 0);
}

INSTANTIATE_TEST_SUITE_P(WaitObjects, CntrWaitTest,
                         ::testing::Values(FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_YIELD));

TEST_F(CntrTest, GetwaitFd) {
    fid_cntr *c = open_cntr(FI_WAIT_FD);
    int fd = -1;
    ASSERT_EQ(fi_control(&c->fid, FI_GETWAIT, &fd), 0);
    fi_wait_obj obj = FI_WAIT_NONE;
    ASSERT_EQ(fi_control(&c->fid, FI_GETWAITOBJ, &obj), 0);
    EXPECT_EQ(obj, FI_WAIT_FD);
    fid *fids[1] = {&c->fid};
    ASSERT_EQ(ufi::runtime::wait::trywait(fids, 1), 0);
    EXPECT_FALSE(readable(fd));
    ufi::runtime::cntr::on_completion(cntr_of(c), 0);
    EXPECT_TRUE(readable(fd)) << "the counter changed";
    EXPECT_EQ(fi_cntr_read(c), 1u);
    EXPECT_FALSE(readable(fd)) << "until it is read";
    std::thread adder([c] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        EXPECT_EQ(fi_cntr_add(c, 1), 0);
    });
    EXPECT_TRUE(readable(fd, 5000));
    adder.join();
    EXPECT_EQ(fi_close(&c->fid), 0);
}

}  // namespace
