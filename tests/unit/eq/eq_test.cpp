// fi_eq_open, fi_eq_read (FI_PEEK), fi_eq_readerr (err_data by API version), fi_eq_write,
// fi_eq_sread (timeouts, wake-ups), fi_eq_strerror, FI_GETWAIT fds, the bindings
// (attach/detach, -FI_EBUSY) and the thread-safe post() used by AVs and domains.
#include "completion_fixture.h"

#include "runtime/wait/trywait.h"
#include "runtime/eq/eq.h"
#include "base/log/testing.h"

#include <ucs/type/status.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>

namespace {

using ufi::runtime::eq::Eq;
using ufi::runtime::eq::eq_of;
using ufi_test::now_ms;
using ufi_test::readable;

class EqTest : public ::testing::Test {
  protected:
    void SetUp() override { env_.open(); }
    void TearDown() override { env_.close(); }

    fid_eq *open_eq(size_t size, uint64_t flags, fi_wait_obj wait) {
        fi_eq_attr attr{};
        attr.size = size;
        attr.flags = flags;
        attr.wait_obj = wait;
        fid_eq *eq = nullptr;
        EXPECT_EQ(fi_eq_open(env_.fabric, &attr, &eq, nullptr), 0);
        return eq;
    }
    void expect_open_fails(fi_eq_attr attr, int rc, const char *argument) {
        ufi::log::ScopedCapture capture;
        fid_eq *eq = nullptr;
        EXPECT_EQ(fi_eq_open(env_.fabric, &attr, &eq, nullptr), rc) << argument;
        const auto lines = capture.lines();
        ASSERT_EQ(lines.size(), 1u) << argument;
        EXPECT_NE(lines[0].find(argument), std::string::npos) << lines[0];
    }
    int write_notify(fid_eq *eq, int i) {
        fi_eq_entry entry{};
        entry.fid = &eq->fid;
        entry.context = reinterpret_cast<void *>(static_cast<uintptr_t>(i));
        entry.data = i;
        return static_cast<int>(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof entry, 0));
    }

    ufi_test::FabricEnv env_;
};

TEST_F(EqTest, OpenCloseSizesAndFabricChildren) {
    for (int i = 0; i < 17; ++i) {
        fid_eq *eq = open_eq(size_t{1} << i, 0, FI_WAIT_UNSPEC);
        ASSERT_NE(eq, nullptr);
        EXPECT_EQ(eq->fid.fclass, static_cast<size_t>(FI_CLASS_EQ));
        EXPECT_EQ(fi_close(&eq->fid), 0);
    }
    int ctx;
    fi_eq_attr attr{};
    fid_eq *eq = nullptr;
    ASSERT_EQ(fi_eq_open(env_.fabric, &attr, &eq, &ctx), 0) << "size 0: ufi's default";
    EXPECT_EQ(eq->fid.context, &ctx);
    EXPECT_EQ(eq_of(eq)->capacity(), ufi::runtime::eq::kDefaultSize);
    // The EQ belongs to the fabric: the fabric cannot close under it.
    EXPECT_EQ(fi_close(&env_.domain->fid), 0);
    env_.domain = nullptr;
    EXPECT_EQ(fi_close(&env_.fabric->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(EqTest, BadAttributes) {
    fi_eq_attr good{};
    good.wait_obj = FI_WAIT_FD;
    fi_eq_attr a = good;
    a.flags = FI_SEND;
    expect_open_fails(a, -FI_EBADFLAGS, "attr->flags");
    a = good;
    reinterpret_cast<int &>(a.wait_obj) = 77;
    expect_open_fails(a, -FI_EINVAL, "attr->wait_obj");
    a = good;
    a.wait_obj = FI_WAIT_SET;
    expect_open_fails(a, -FI_ENOSYS, "attr->wait_obj");
    a = good;
    a.wait_obj = FI_WAIT_MUTEX_COND;
    expect_open_fails(a, -FI_ENOSYS, "attr->wait_obj");
    a = good;
    a.size = ufi::runtime::eq::kMaxSize + 1;
    expect_open_fails(a, -FI_EINVAL, "attr->size");
    fid_eq *eq = nullptr;
    EXPECT_EQ(fi_eq_open(env_.fabric, nullptr, &eq, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_eq_open(env_.fabric, &good, nullptr, nullptr), -FI_EINVAL);
    a = good;
    a.flags = FI_AFFINITY | FI_WRITE;
    ASSERT_EQ(fi_eq_open(env_.fabric, &a, &eq, nullptr), 0);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

// EQs define FI_WRITE and FI_AFFINITY; every other bit (FI_XPU too) is -FI_EBADFLAGS.
TEST_F(EqTest, UnknownFlagsAreBadFlags) {
    fi_eq_attr a{};
    a.wait_obj = FI_WAIT_FD;
    for (uint64_t flags :
         {uint64_t{FI_XPU}, uint64_t{FI_XPU | FI_WRITE}, ~uint64_t{0}, uint64_t{1ULL << 63}}) {
        a.flags = flags;
        expect_open_fails(a, -FI_EBADFLAGS, "attr->flags");
    }
}

// fabtests' eq_write_read_self: write five, read each with FI_PEEK then without.
TEST_F(EqTest, WriteReadAndPeek) {
    fid_eq *eq = open_eq(32, FI_WRITE, FI_WAIT_NONE);
    for (int i = 0; i < 5; ++i)
        ASSERT_EQ(write_notify(eq, i), static_cast<int>(sizeof(fi_eq_entry)));
    for (int i = 0; i < 10; ++i) {
        fi_eq_entry entry{};
        uint32_t event = ~0u;
        ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, (i & 1) ? 0 : FI_PEEK),
                  static_cast<ssize_t>(sizeof entry));
        EXPECT_EQ(event, static_cast<uint32_t>(FI_NOTIFY));
        EXPECT_EQ(entry.data, static_cast<uint64_t>(i / 2));
        EXPECT_EQ(entry.fid, &eq->fid);
    }
    fi_eq_entry entry;
    uint32_t event;
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), -FI_EAGAIN);
    fi_eq_err_entry err{};
    EXPECT_EQ(fi_eq_readerr(eq, &err, 0), -FI_EAGAIN);
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 10, 0), -FI_ENOSYS) << "FI_WAIT_NONE";
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(EqTest, WriteRules) {
    fid_eq *ro = open_eq(8, 0, FI_WAIT_NONE);
    EXPECT_EQ(write_notify(ro, 1), -FI_ENOSYS) << "opened without FI_WRITE";
    EXPECT_EQ(fi_close(&ro->fid), 0);

    fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_NONE);
    fi_eq_entry entry{};
    EXPECT_EQ(fi_eq_write(eq, FI_NOTIFY, nullptr, sizeof entry, 0), -FI_EINVAL);
    EXPECT_EQ(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof entry, FI_PEEK), -FI_EBADFLAGS);
    std::vector<char> huge(ufi::runtime::eq::kMaxEventSize + 1);
    EXPECT_EQ(fi_eq_write(eq, FI_NOTIFY, huge.data(), huge.size(), 0), -FI_EINVAL);
    uint32_t event;
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, FI_SEND), -FI_EBADFLAGS);
    EXPECT_EQ(fi_eq_read(eq, &event, nullptr, sizeof entry, 0), -FI_EINVAL);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

// fabtests' eq_size_verify: an EQ of size N holds N events; the next fi_eq_write is refused,
// not lost. ufi's own events still go in (the EQ grows for them), after the application's.
TEST_F(EqTest, CapacityIsRefusedNotOverrun) {
    fid_eq *eq = open_eq(32, FI_WRITE, FI_WAIT_NONE);
    for (int i = 0; i < 32; ++i)
        ASSERT_EQ(write_notify(eq, i), static_cast<int>(sizeof(fi_eq_entry)));
    EXPECT_EQ(write_notify(eq, 32), -FI_EAGAIN);
    fi_eq_entry mine{};
    mine.data = 1000;
    EXPECT_EQ(ufi::runtime::eq::post(eq_of(eq), FI_NOTIFY, &mine, sizeof mine, 0), 0)
        << "a provider event is never refused for space";
    fi_eq_err_entry err{};
    err.err = FI_EIO;
    EXPECT_EQ(ufi::runtime::eq::post_error(eq_of(eq), err), 0);
    EXPECT_EQ(write_notify(eq, 33), -FI_EAGAIN) << "the application is still bounded";
    for (int i = 0; i < 32; ++i) {
        fi_eq_entry entry{};
        uint32_t event;
        ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0),
                  static_cast<ssize_t>(sizeof entry));
        EXPECT_EQ(entry.data, static_cast<uint64_t>(i));
    }
    fi_eq_entry entry{};
    uint32_t event;
    ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(entry.data, 1000u);
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), -FI_EAVAIL);
    fi_eq_err_entry got{};
    ASSERT_EQ(fi_eq_readerr(eq, &got, 0), static_cast<ssize_t>(sizeof got));
    EXPECT_EQ(got.err, FI_EIO);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(EqTest, SmallBuffers) {
    fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_NONE);
    ASSERT_EQ(write_notify(eq, 1), static_cast<int>(sizeof(fi_eq_entry)));
    char small[8];
    uint32_t event;
    EXPECT_EQ(fi_eq_read(eq, &event, small, sizeof small, 0), -FI_ETOOSMALL);
    fi_eq_entry entry{};
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), static_cast<ssize_t>(sizeof entry))
        << "still queued after -FI_ETOOSMALL";

    // A connection event with data: the data is cut to the caller's buffer.
    alignas(8) unsigned char cm[sizeof(fi_eq_cm_entry) + 32] = {};
    reinterpret_cast<fi_eq_cm_entry *>(cm)->fid = &eq->fid;
    strcpy(reinterpret_cast<char *>(cm + sizeof(fi_eq_cm_entry)), "connection data");
    ASSERT_EQ(fi_eq_write(eq, FI_CONNREQ, cm, sizeof cm, 0), static_cast<ssize_t>(sizeof cm));
    alignas(8) unsigned char got[sizeof(fi_eq_cm_entry) + 4] = {};
    EXPECT_EQ(fi_eq_read(eq, &event, got, sizeof got, 0), static_cast<ssize_t>(sizeof got));
    EXPECT_EQ(event, static_cast<uint32_t>(FI_CONNREQ));
    EXPECT_EQ(reinterpret_cast<fi_eq_cm_entry *>(got)->fid, &eq->fid);
    EXPECT_EQ(memcmp(got + sizeof(fi_eq_cm_entry), "conn", 4), 0);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(EqTest, ErrorsInOrderAndReaderr) {
    fid_eq *eq = open_eq(8, FI_WRITE, FI_WAIT_UNSPEC);
    Eq *e = eq_of(eq);
    ASSERT_EQ(write_notify(eq, 1), static_cast<int>(sizeof(fi_eq_entry)));
    fi_eq_err_entry err{};
    err.fid = &eq->fid;
    err.context = this;
    err.data = 5;
    err.err = -FI_ECONNREFUSED;
    err.prov_errno = UCS_ERR_UNREACHABLE;
    const char detail[] = "peer said no";
    err.err_data = const_cast<char *>(detail);
    err.err_data_size = sizeof detail;
    ASSERT_EQ(ufi::runtime::eq::post_error(e, err), 0);
    ASSERT_EQ(write_notify(eq, 2), static_cast<int>(sizeof(fi_eq_entry)));

    fi_eq_entry entry{};
    uint32_t event;
    ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), -FI_EAVAIL);
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 100, 0), -FI_EAVAIL);

    fi_eq_err_entry got{};
    ASSERT_EQ(fi_eq_readerr(eq, &got, FI_PEEK), static_cast<ssize_t>(sizeof got));
    ASSERT_EQ(fi_eq_readerr(eq, &got, 0), static_cast<ssize_t>(sizeof got));
    EXPECT_EQ(got.fid, &eq->fid);
    EXPECT_EQ(got.context, this);
    EXPECT_EQ(got.data, 5u);
    EXPECT_EQ(got.err, FI_ECONNREFUSED);
    EXPECT_EQ(got.prov_errno, UCS_ERR_UNREACHABLE);
    ASSERT_NE(got.err_data, nullptr);
    EXPECT_STREQ(static_cast<const char *>(got.err_data), detail);
    EXPECT_EQ(got.err_data_size, sizeof detail);
    EXPECT_EQ(fi_eq_readerr(eq, &got, 0), -FI_EAGAIN);
    EXPECT_EQ(fi_eq_readerr(eq, nullptr, 0), -FI_EINVAL);
    EXPECT_EQ(fi_eq_readerr(eq, &got, FI_SEND), -FI_EBADFLAGS);
    ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(entry.data, 2u);

    // An application writes an error event the way libfabric's util layer does.
    fi_eq_err_entry mine{};
    mine.err = FI_EIO;
    ASSERT_EQ(fi_eq_write(eq, FI_NOTIFY, &mine, sizeof mine, 1ULL << 60),
              static_cast<ssize_t>(sizeof mine));
    EXPECT_EQ(fi_eq_write(eq, FI_NOTIFY, &mine, 8, 1ULL << 60), -FI_EINVAL);
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), -FI_EAVAIL);
    unsigned char buf[4];
    got.err_data = buf;
    got.err_data_size = sizeof buf;
    ASSERT_EQ(fi_eq_readerr(eq, &got, 0), static_cast<ssize_t>(sizeof got));
    EXPECT_EQ(got.err, FI_EIO);
    EXPECT_EQ(got.err_data_size, 0u) << "no data to copy";
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(EqTest, Strerror) {
    fid_eq *eq = open_eq(8, 0, FI_WAIT_NONE);
    EXPECT_STREQ(fi_eq_strerror(eq, UCS_ERR_UNREACHABLE, nullptr, nullptr, 0),
                 ucs_status_string(UCS_ERR_UNREACHABLE));
    char buf[100];
    EXPECT_EQ(fi_eq_strerror(eq, UCS_ERR_UNREACHABLE, nullptr, buf, sizeof buf), buf);
    EXPECT_NE(std::string(buf).find("UCS status"), std::string::npos);
    EXPECT_STREQ(fi_eq_strerror(eq, FI_ECONNREFUSED, nullptr, nullptr, 0),
                 fi_strerror(FI_ECONNREFUSED));
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

class EqVersionTest : public ::testing::TestWithParam<uint32_t> {
  protected:
    void SetUp() override { env_.open(GetParam()); }
    void TearDown() override { env_.close(); }
    ufi_test::FabricEnv env_;
};

// Below 1.5 the caller's fi_eq_err_entry ends before err_data_size: nothing past it is written.
TEST_P(EqVersionTest, ReaderrWritesTheCallersEntry) {
    fi_eq_attr attr{};
    fid_eq *eq = nullptr;
    ASSERT_EQ(fi_eq_open(env_.fabric, &attr, &eq, nullptr), 0);
    const char data[] = "details";
    fi_eq_err_entry err{};
    err.err = FI_EIO;
    err.err_data = const_cast<char *>(data);
    err.err_data_size = sizeof data;
    ASSERT_EQ(ufi::runtime::eq::post_error(eq_of(eq), err), 0);

    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    char *mem = static_cast<char *>(
        mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(mem, MAP_FAILED);
    ASSERT_EQ(mprotect(mem + page, page, PROT_NONE), 0);
    const bool old = GetParam() < FI_VERSION(1, 5);
    const size_t written = old ? offsetof(fi_eq_err_entry, err_data_size) : sizeof(fi_eq_err_entry);
    auto *e = reinterpret_cast<fi_eq_err_entry *>(mem + page - written);
    memset(mem, 0xA5, page);
    if (!old) e->err_data_size = 0;
    EXPECT_EQ(eq->ops->readerr(eq, e, 0), static_cast<ssize_t>(written));
    EXPECT_EQ(e->err, FI_EIO);
    ASSERT_NE(e->err_data, nullptr);
    EXPECT_STREQ(static_cast<const char *>(e->err_data), data);
    if (!old) {
        EXPECT_EQ(e->err_data_size, sizeof data);
    }
    munmap(mem, 2 * page);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

INSTANTIATE_TEST_SUITE_P(Versions, EqVersionTest,
                         ::testing::Values(FI_VERSION(1, 4), FI_VERSION(1, 10), FI_VERSION(2, 7)));

class EqWaitTest : public EqTest, public ::testing::WithParamInterface<fi_wait_obj> {};

// fabtests' eq_wait_fd_sread: timeout -> -FI_EAGAIN within tolerance; a queued event at once.
TEST_P(EqWaitTest, SreadTimeoutAndImmediate) {
    fid_eq *eq = open_eq(32, FI_WRITE, GetParam());
    fi_eq_entry entry{};
    uint32_t event;
    int64_t t0 = now_ms();
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 150, 0), -FI_EAGAIN);
    const int64_t elapsed = now_ms() - t0;
    EXPECT_GE(elapsed, 140);
    EXPECT_LT(elapsed, 150 + ufi_test::kSchedulingSlackMs);
    EXPECT_EQ(fi_eq_sread(eq, &event, nullptr, sizeof entry, 0, 0), -FI_EINVAL);
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 0, FI_SEND), -FI_EBADFLAGS);
    ASSERT_EQ(write_notify(eq, 3), static_cast<int>(sizeof entry));
    t0 = now_ms();
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 4 * ufi_test::kSchedulingSlackMs, 0),
              static_cast<ssize_t>(sizeof entry));
    EXPECT_LT(now_ms() - t0, ufi_test::kSchedulingSlackMs) << "a queued event is read at once";
    EXPECT_EQ(entry.data, 3u);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

// fabtests' eq_wait_sread_peek, and a post from another thread waking a blocked sread.
TEST_P(EqWaitTest, SreadPeekAndWakeUp) {
    fid_eq *eq = open_eq(32, FI_WRITE, GetParam());
    fi_eq_entry entry{};
    uint32_t event;
    ASSERT_EQ(write_notify(eq, 1), static_cast<int>(sizeof entry));
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 2000, 0),
              static_cast<ssize_t>(sizeof entry));
    ASSERT_EQ(write_notify(eq, 2), static_cast<int>(sizeof entry));
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 2000, FI_PEEK),
              static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 2000, 0),
              static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(entry.data, 2u);

    Eq *e = eq_of(eq);
    std::thread poster([e] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        fi_eq_entry ev{};
        ev.data = 9;
        EXPECT_EQ(ufi::runtime::eq::post(e, FI_AV_COMPLETE, &ev, sizeof ev, 0), 0);
    });
    const int64_t t0 = now_ms();
    EXPECT_EQ(fi_eq_sread(eq, &event, &entry, sizeof entry, 2 * ufi_test::kSchedulingSlackMs, 0),
              static_cast<ssize_t>(sizeof entry)) << "woken by the event, not timed out";
    const int64_t elapsed = now_ms() - t0;
    poster.join();
    EXPECT_EQ(event, static_cast<uint32_t>(FI_AV_COMPLETE));
    EXPECT_EQ(entry.data, 9u);
    EXPECT_GE(elapsed, 80);
    EXPECT_LT(elapsed, 100 + ufi_test::kSchedulingSlackMs);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

INSTANTIATE_TEST_SUITE_P(WaitObjects, EqWaitTest,
                         ::testing::Values(FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_YIELD));

// fabtests' eq_wait_fd_poll: after fi_trywait the fd polls empty; a write makes it readable.
TEST_F(EqTest, GetwaitFd) {
    fid_eq *eq = open_eq(32, FI_WRITE, FI_WAIT_FD);
    int fd = -1;
    ASSERT_EQ(fi_control(&eq->fid, FI_GETWAIT, &fd), 0);
    fid *fids[1] = {&eq->fid};
    ASSERT_EQ(ufi::runtime::wait::trywait(fids, 1), 0);
    EXPECT_FALSE(readable(fd));
    ASSERT_EQ(write_notify(eq, 1), static_cast<int>(sizeof(fi_eq_entry)));
    EXPECT_TRUE(readable(fd));
    EXPECT_EQ(ufi::runtime::wait::trywait(fids, 1), -FI_EAGAIN);
    fi_eq_entry entry;
    uint32_t event;
    ASSERT_GT(fi_eq_read(eq, &event, &entry, sizeof entry, FI_PEEK), 0);
    EXPECT_TRUE(readable(fd)) << "a peek leaves the event, and the fd readable";
    ASSERT_GT(fi_eq_read(eq, &event, &entry, sizeof entry, 0), 0);
    EXPECT_FALSE(readable(fd));
    fi_wait_obj obj = FI_WAIT_NONE;
    ASSERT_EQ(fi_control(&eq->fid, FI_GETWAITOBJ, &obj), 0);
    EXPECT_EQ(obj, FI_WAIT_FD);
    EXPECT_EQ(fi_control(&eq->fid, FI_GETOPSFLAG, &obj), -FI_ENOSYS);
    EXPECT_EQ(fi_close(&eq->fid), 0);

    eq = open_eq(32, 0, FI_WAIT_NONE);
    EXPECT_EQ(fi_control(&eq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
    fids[0] = &eq->fid;
    EXPECT_EQ(ufi::runtime::wait::trywait(fids, 1), -FI_EINVAL);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(EqTest, BoundEqCannotClose) {
    fid_eq *eq = open_eq(8, 0, FI_WAIT_NONE);
    Eq *e = ufi::runtime::eq::eq_of(&eq->fid);
    ASSERT_EQ(e, eq_of(eq));
    ufi::runtime::eq::attach(e);
    ufi::runtime::eq::attach(e);
    EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY);
    ufi::runtime::eq::detach(e);
    EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY);
    ufi::runtime::eq::detach(e);
    EXPECT_EQ(eq->fid.ops->bind(&eq->fid, &env_.fabric->fid, 0), -FI_ENOSYS);
    EXPECT_EQ(fi_close(&eq->fid), 0);
    EXPECT_EQ(ufi::runtime::eq::post(nullptr, FI_NOTIFY, nullptr, 0, 0), -FI_EINVAL);
    EXPECT_EQ(ufi::runtime::eq::post_error(nullptr, fi_eq_err_entry{}), -FI_EINVAL);
    EXPECT_EQ(eq_of(static_cast<fid_t>(nullptr)), nullptr);
}

// post() is thread-safe whatever the domain's threading model: nothing lost, per-thread order.
TEST_F(EqTest, ConcurrentPosts) {
    fid_eq *eq = open_eq(1 << 16, 0, FI_WAIT_FD);
    Eq *e = eq_of(eq);
    constexpr int kThreads = 4;
    constexpr uint64_t kEach = 5000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([e, t] {
            for (uint64_t i = 0; i < kEach; ++i) {
                fi_eq_entry ev{};
                ev.data = (static_cast<uint64_t>(t) << 32) | i;
                while (ufi::runtime::eq::post(e, FI_NOTIFY, &ev, sizeof ev, 0) == -FI_EAGAIN)
                    std::this_thread::yield();
            }
        });
    }
    std::vector<uint64_t> next(kThreads, 0);
    uint64_t total = 0;
    alarm(60);
    while (total < kThreads * kEach) {
        fi_eq_entry ev;
        uint32_t event;
        const ssize_t n = fi_eq_sread(eq, &event, &ev, sizeof ev, 1000, 0);
        if (n == -FI_EAGAIN) continue;
        ASSERT_EQ(n, static_cast<ssize_t>(sizeof ev));
        const uint64_t t = ev.data >> 32;
        ASSERT_LT(t, static_cast<uint64_t>(kThreads));
        ASSERT_EQ(ev.data & 0xffffffffu, next[t]);
        ++next[t];
        ++total;
    }
    alarm(0);
    for (auto &th : threads) th.join();
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

}  // namespace
