// fi_cq_open, fi_cq_read/readfrom/readerr, fi_cq_strerror, fi_close and the data path's writer
// API: attribute checks (one WARN line per bad argument), formats and their exact entry sizes,
// capacity and -FI_EAGAIN on a full CQ, error completions in order.
#include "completion_fixture.h"

#include "runtime/cq/cq.h"
#include "base/log/testing.h"

#include <rdma/fi_errno.h>

#include <ucs/type/status.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using ufi::runtime::cq::Cq;
using ufi::runtime::cq::cq_of;

class CqTest : public ::testing::Test {
  protected:
    void SetUp() override { env_.open(); }
    void TearDown() override { env_.close(); }

    fid_cq *open_cq(fi_cq_format format, size_t size = 0, fi_wait_obj wait = FI_WAIT_NONE) {
        fi_cq_attr attr{};
        attr.format = format;
        attr.size = size;
        attr.wait_obj = wait;
        fid_cq *cq = nullptr;
        EXPECT_EQ(fi_cq_open(env_.domain, &attr, &cq, nullptr), 0);
        return cq;
    }
    // Opens with `attr`, expecting `rc` and exactly one WARN line mentioning `argument`.
    void expect_open_fails(fi_cq_attr attr, int rc, const char *argument) {
        ufi::log::ScopedCapture capture;
        fid_cq *cq = nullptr;
        EXPECT_EQ(fi_cq_open(env_.domain, &attr, &cq, nullptr), rc) << argument;
        const auto lines = capture.lines();
        ASSERT_EQ(lines.size(), 1u) << argument;
        EXPECT_NE(lines[0].find(argument), std::string::npos) << lines[0];
        EXPECT_NE(lines[0].find("<warn>"), std::string::npos) << lines[0];
    }

    ufi_test::FabricEnv env_;
};

TEST_F(CqTest, OpensEveryFormatAndReportsUnspec) {
    const fi_cq_format formats[] = {FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG, FI_CQ_FORMAT_DATA,
                                    FI_CQ_FORMAT_TAGGED};
    for (fi_cq_format f : formats) {
        fid_cq *cq = open_cq(f);
        ASSERT_NE(cq, nullptr);
        EXPECT_EQ(cq->fid.fclass, static_cast<size_t>(FI_CLASS_CQ));
        EXPECT_EQ(cq_of(cq)->format(), f);
        EXPECT_EQ(fi_close(&cq->fid), 0);
    }
    fi_cq_attr attr{};
    attr.format = FI_CQ_FORMAT_UNSPEC;
    fid_cq *cq = nullptr;
    int ctx = 0;
    ASSERT_EQ(fi_cq_open(env_.domain, &attr, &cq, &ctx), 0);
    EXPECT_EQ(attr.format, FI_CQ_FORMAT_CONTEXT) << "the provider's choice is reported";
    EXPECT_EQ(cq->fid.context, &ctx);
    EXPECT_EQ(cq_of(cq)->entry_size(), sizeof(fi_cq_entry));
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, SizesAndCapacity) {
    for (int i = -1; i < 17; ++i) {
        const size_t size = i < 0 ? 0 : size_t{1} << i;
        fid_cq *cq = open_cq(FI_CQ_FORMAT_UNSPEC, size, FI_WAIT_UNSPEC);
        ASSERT_NE(cq, nullptr) << size;
        EXPECT_GE(cq_of(cq)->capacity(), size == 0 ? ufi::runtime::cq::kDefaultSize : size);
        EXPECT_EQ(fi_close(&cq->fid), 0);
    }
    fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT, 5);
    EXPECT_EQ(cq_of(cq)->capacity(), 8u) << "rounded up to a power of two";
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, BadAttributes) {
    fi_cq_attr good{};
    good.format = FI_CQ_FORMAT_MSG;
    good.wait_obj = FI_WAIT_FD;

    fi_cq_attr a = good;
    reinterpret_cast<int &>(a.format) = 99;
    expect_open_fails(a, -FI_EINVAL, "attr->format");
    a = good;
    reinterpret_cast<int &>(a.wait_obj) = 42;
    expect_open_fails(a, -FI_EINVAL, "attr->wait_obj");
    a = good;
    a.wait_obj = FI_WAIT_SET;
    expect_open_fails(a, -FI_ENOSYS, "attr->wait_obj");
    a = good;
    a.wait_obj = FI_WAIT_MUTEX_COND;
    expect_open_fails(a, -FI_ENOSYS, "attr->wait_obj");
    a = good;
    reinterpret_cast<int &>(a.wait_cond) = 7;
    expect_open_fails(a, -FI_EINVAL, "attr->wait_cond");
    a = good;
    a.flags = FI_SEND;
    expect_open_fails(a, -FI_EBADFLAGS, "attr->flags");
    a = good;
    a.flags = FI_XPU;
    expect_open_fails(a, -FI_ENOSYS, "FI_XPU");
    a = good;
    a.size = ufi::runtime::cq::kMaxSize + 1;
    expect_open_fails(a, -FI_EINVAL, "attr->size");

    fid_cq *cq = nullptr;
    {
        ufi::log::ScopedCapture capture;
        EXPECT_EQ(fi_cq_open(env_.domain, nullptr, &cq, nullptr), -FI_EINVAL);
        EXPECT_EQ(env_.domain->ops->cq_open(env_.domain, &good, nullptr, nullptr), -FI_EINVAL);
        EXPECT_EQ(capture.lines().size(), 2u);
    }

    // wait_cond is ignored with FI_WAIT_NONE; FI_AFFINITY is accepted (the vector is a hint).
    a = good;
    a.wait_obj = FI_WAIT_NONE;
    reinterpret_cast<int &>(a.wait_cond) = 7;
    ASSERT_EQ(fi_cq_open(env_.domain, &a, &cq, nullptr), 0);
    EXPECT_EQ(fi_close(&cq->fid), 0);
    a = good;
    a.flags = FI_AFFINITY;
    a.signaling_vector = 12345;
    ASSERT_EQ(fi_cq_open(env_.domain, &a, &cq, nullptr), 0);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

// Undefined flag bits are -FI_EBADFLAGS even when FI_XPU (-FI_ENOSYS alone) is among them, and
// whatever else is wrong with the flags word.
TEST_F(CqTest, UnknownFlagsAreBadFlagsWithOrWithoutXpu) {
    fi_cq_attr a{};
    a.format = FI_CQ_FORMAT_MSG;
    a.wait_obj = FI_WAIT_FD;
    for (uint64_t flags :
         {uint64_t{FI_XPU | FI_SEND}, uint64_t{FI_XPU | FI_AFFINITY | (1ULL << 63)}, ~uint64_t{0},
          uint64_t{1ULL << 62}}) {
        a.flags = flags;
        expect_open_fails(a, -FI_EBADFLAGS, "attr->flags");
    }
    a.flags = FI_XPU | FI_AFFINITY;
    expect_open_fails(a, -FI_ENOSYS, "FI_XPU");
}

TEST_F(CqTest, DomainCannotCloseUnderAnOpenCq) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_DATA);
    EXPECT_EQ(fi_close(&env_.domain->fid), -FI_EBUSY);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, ReadEmptyAndBadArguments) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED);
    fi_cq_tagged_entry e[4];
    EXPECT_EQ(fi_cq_read(cq, e, 4), -FI_EAGAIN);
    EXPECT_EQ(fi_cq_readfrom(cq, e, 4, nullptr), -FI_EAGAIN);
    EXPECT_EQ(fi_cq_read(cq, e, 0), -FI_EAGAIN) << "count 0 progresses; still nothing to read";
    {
        ufi::log::ScopedCapture capture;
        EXPECT_EQ(fi_cq_read(cq, nullptr, 4), -FI_EINVAL);
        ASSERT_EQ(capture.lines().size(), 1u);
        EXPECT_NE(capture.lines()[0].find("buf"), std::string::npos);
    }
    EXPECT_EQ(fi_cq_readerr(cq, nullptr, 0), -FI_EINVAL);
    fi_cq_err_entry err{};
    EXPECT_EQ(fi_cq_readerr(cq, &err, 0), -FI_EAGAIN);
    EXPECT_EQ(fi_cq_readerr(cq, &err, FI_PEEK), -FI_EBADFLAGS);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

// Every format is written with exactly its struct's size: nothing past N entries changes.
TEST_F(CqTest, EntriesHaveLibfabricStructSizes) {
    struct Case {
        fi_cq_format format;
        size_t size;
    } cases[] = {{FI_CQ_FORMAT_CONTEXT, sizeof(fi_cq_entry)},
                 {FI_CQ_FORMAT_MSG, sizeof(fi_cq_msg_entry)},
                 {FI_CQ_FORMAT_DATA, sizeof(fi_cq_data_entry)},
                 {FI_CQ_FORMAT_TAGGED, sizeof(fi_cq_tagged_entry)}};
    EXPECT_EQ(sizeof(fi_cq_entry), 8u);
    EXPECT_EQ(sizeof(fi_cq_msg_entry), 24u);
    EXPECT_EQ(sizeof(fi_cq_data_entry), 40u);
    EXPECT_EQ(sizeof(fi_cq_tagged_entry), 48u);
    for (const Case &c : cases) {
        fid_cq *cq = open_cq(c.format, 16);
        Cq *q = cq_of(cq);
        ASSERT_NE(q, nullptr);
        int ctx[3];
        for (int i = 0; i < 3; ++i) {
            ASSERT_EQ(q->write(&ctx[i], FI_RECV | FI_MSG, 100 + i, &ctx[0], 0xd0 + i, 0x70 + i), 0);
        }
        std::vector<unsigned char> buf(10 * sizeof(fi_cq_tagged_entry), 0xA5);
        ASSERT_EQ(fi_cq_read(cq, buf.data(), 10), 3);
        for (size_t b = 3 * c.size; b < buf.size(); ++b) {
            ASSERT_EQ(buf[b], 0xA5) << "format " << c.format << " wrote byte " << b;
        }
        for (int i = 0; i < 3; ++i) {
            fi_cq_tagged_entry full{};
            memcpy(&full, buf.data() + i * c.size, c.size);
            EXPECT_EQ(full.op_context, &ctx[i]);
            if (c.size >= sizeof(fi_cq_msg_entry)) {
                EXPECT_EQ(full.flags, FI_RECV | FI_MSG);
                EXPECT_EQ(full.len, 100u + i);
            }
            if (c.size >= sizeof(fi_cq_data_entry)) {
                EXPECT_EQ(full.buf, &ctx[0]);
                EXPECT_EQ(full.data, 0xd0u + i);
            }
            if (c.size >= sizeof(fi_cq_tagged_entry)) {
                EXPECT_EQ(full.tag, 0x70u + i);
            }
        }
        EXPECT_EQ(fi_close(&cq->fid), 0);
    }
}

// A full CQ refuses the writer with -FI_EAGAIN and loses nothing.
TEST_F(CqTest, OverrunIsRefusedNotLost) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_DATA, 4);
    Cq *q = cq_of(cq);
    ASSERT_EQ(q->capacity(), 4u);
    for (uint64_t i = 0; i < 4; ++i) ASSERT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, i, 0), 0);
    EXPECT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 99, 0), -FI_EAGAIN);
    fi_cq_err_entry err{};
    err.err = FI_EIO;
    EXPECT_EQ(q->write_error(err), -FI_EAGAIN) << "errors count against the capacity too";
    fi_cq_data_entry e[8];
    ASSERT_EQ(fi_cq_read(cq, e, 2), 2);
    ASSERT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 4, 0), 0);
    ASSERT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 5, 0), 0);
    EXPECT_EQ(q->write(nullptr, FI_SEND, 0, nullptr, 6, 0), -FI_EAGAIN);
    ASSERT_EQ(fi_cq_read(cq, e + 2, 8), 4);
    for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(e[i].data, i) << "in order, none lost";
    EXPECT_EQ(fi_cq_read(cq, e, 8), -FI_EAGAIN);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, ReadfromReportsSourcePerEntry) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_MSG);
    Cq *q = cq_of(cq);
    ASSERT_EQ(q->write(nullptr, FI_RECV, 1, nullptr, 0, 0, 7), 0);
    ASSERT_EQ(q->write(nullptr, FI_RECV, 2, nullptr, 0, 0), 0);  // source unknown
    ASSERT_EQ(q->write(nullptr, FI_RECV, 3, nullptr, 0, 0, 9), 0);
    fi_cq_msg_entry e[4];
    fi_addr_t src[4] = {1, 1, 1, 1};
    ASSERT_EQ(fi_cq_readfrom(cq, e, 4, src), 3);
    EXPECT_EQ(src[0], 7u);
    EXPECT_EQ(src[1], FI_ADDR_NOTAVAIL);
    EXPECT_EQ(src[2], 9u);
    EXPECT_EQ(src[3], 1u) << "only `returned` entries are written";
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, ErrorCompletionsStayInOrder) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_TAGGED);
    Cq *q = cq_of(cq);
    int ctx_ok1, ctx_err, ctx_ok2;
    ASSERT_EQ(q->write(&ctx_ok1, FI_SEND, 0, nullptr, 0, 0), 0);
    fi_cq_err_entry err{};
    err.op_context = &ctx_err;
    err.flags = FI_RECV | FI_TAGGED;
    err.len = 10;
    err.tag = 0x55;
    err.olen = 6;
    err.err = -FI_ETRUNC;  // either sign is accepted; reported positive
    err.prov_errno = UCS_ERR_MESSAGE_TRUNCATED;
    const char detail[] = "truncated";
    err.err_data = const_cast<char *>(detail);
    err.err_data_size = sizeof detail;
    err.src_addr = 3;
    ASSERT_EQ(q->write_error(err), 0);
    ASSERT_EQ(q->write(&ctx_ok2, FI_SEND, 0, nullptr, 0, 0), 0);

    fi_cq_tagged_entry e[4];
    ASSERT_EQ(fi_cq_read(cq, e, 4), 1) << "stops before the error";
    EXPECT_EQ(e[0].op_context, &ctx_ok1);
    EXPECT_EQ(fi_cq_read(cq, e, 4), -FI_EAVAIL);
    EXPECT_EQ(fi_cq_sread(cq, e, 4, nullptr, 0), -FI_ENOSYS) << "FI_WAIT_NONE";

    fi_cq_err_entry got{};
    ASSERT_EQ(fi_cq_readerr(cq, &got, 0), 1);
    EXPECT_EQ(got.op_context, &ctx_err);
    EXPECT_EQ(got.flags, FI_RECV | FI_TAGGED);
    EXPECT_EQ(got.len, 10u);
    EXPECT_EQ(got.tag, 0x55u);
    EXPECT_EQ(got.olen, 6u);
    EXPECT_EQ(got.err, FI_ETRUNC);
    EXPECT_EQ(got.prov_errno, UCS_ERR_MESSAGE_TRUNCATED);
    ASSERT_NE(got.err_data, nullptr) << "err_data_size 0 on input: a CQ-owned buffer";
    EXPECT_EQ(got.err_data_size, sizeof detail);
    EXPECT_STREQ(static_cast<const char *>(got.err_data), "truncated");
    EXPECT_EQ(got.src_addr, 3u);

    EXPECT_EQ(fi_cq_readerr(cq, &got, 0), -FI_EAGAIN) << "the next entry is a success";
    ASSERT_EQ(fi_cq_read(cq, e, 4), 1);
    EXPECT_EQ(e[0].op_context, &ctx_ok2);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, ErrorDataIntoCallerBuffer) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT);
    fi_cq_err_entry err{};
    err.err = FI_EIO;
    const unsigned char data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    err.err_data = const_cast<unsigned char *>(data);
    err.err_data_size = sizeof data;
    ASSERT_EQ(cq_of(cq)->write_error(err), 0);
    unsigned char mine[4] = {0, 0, 0, 0};
    fi_cq_err_entry got{};
    got.err_data = mine;
    got.err_data_size = sizeof mine;
    ASSERT_EQ(fi_cq_readerr(cq, &got, 0), 1);
    EXPECT_EQ(got.err_data, mine);
    EXPECT_EQ(got.err_data_size, 4u) << "truncated to the caller's size";
    EXPECT_EQ(mine[3], 4);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, StrerrorIsReadable) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT);
    const char *s = fi_cq_strerror(cq, UCS_ERR_ENDPOINT_TIMEOUT, nullptr, nullptr, 0);
    EXPECT_STREQ(s, ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT));
    char buf[128];
    s = fi_cq_strerror(cq, UCS_ERR_ENDPOINT_TIMEOUT, nullptr, buf, sizeof buf);
    EXPECT_EQ(s, buf);
    EXPECT_NE(std::string(buf).find(ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT)),
              std::string::npos);
    EXPECT_NE(std::string(buf).find("UCS status -80"), std::string::npos) << buf;
    EXPECT_STREQ(fi_cq_strerror(cq, FI_ETRUNC, nullptr, nullptr, 0), fi_strerror(FI_ETRUNC));
    EXPECT_STREQ(fi_cq_strerror(cq, 0, nullptr, nullptr, 0), "No provider error");
    char tiny[6];
    s = fi_cq_strerror(cq, UCS_ERR_NO_MEMORY, nullptr, tiny, sizeof tiny);
    EXPECT_EQ(strlen(s), sizeof tiny - 1) << "truncated and terminated";
    // Values that are no UCS status are not cut to the status type's byte (-0x7fffffff would
    // read as UCS_INPROGRESS, "Operation in progress"): ufi's own text.
    for (int v : {-0x7fffffff, INT32_MIN, -255, static_cast<int>(UCS_ERR_LAST)}) {
        SCOPED_TRACE(v);
        EXPECT_STREQ(fi_cq_strerror(cq, v, nullptr, nullptr, 0), "Unknown provider error");
        s = fi_cq_strerror(cq, v, nullptr, buf, sizeof buf);
        EXPECT_NE(std::string(s).find(std::to_string(v) + " (no UCS status)"), std::string::npos)
            << s;
    }
    EXPECT_STREQ(fi_cq_strerror(cq, UCS_ERR_LAST + 1, nullptr, nullptr, 0),
                 ucs_status_string(static_cast<ucs_status_t>(UCS_ERR_LAST + 1)));
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, WaitNoneRefusesBlockingCalls) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT);
    fi_cq_entry e;
    fi_addr_t src;
    EXPECT_EQ(fi_cq_sread(cq, &e, 1, nullptr, 10), -FI_ENOSYS);
    EXPECT_EQ(fi_cq_sreadfrom(cq, &e, 1, &src, nullptr, 10), -FI_ENOSYS);
    EXPECT_EQ(fi_cq_signal(cq), -FI_ENOSYS);
    int fd = -1;
    EXPECT_EQ(fi_control(&cq->fid, FI_GETWAIT, &fd), -FI_ENODATA);
    fi_wait_obj obj = FI_WAIT_FD;
    EXPECT_EQ(fi_control(&cq->fid, FI_GETWAITOBJ, &obj), 0);
    EXPECT_EQ(obj, FI_WAIT_NONE);
    EXPECT_EQ(fi_control(&cq->fid, FI_GETOPSFLAG, &fd), -FI_ENOSYS);
    EXPECT_EQ(fi_control(&cq->fid, FI_GETWAIT, nullptr), -FI_EINVAL);
    EXPECT_EQ(fi_cq_export_xpu(cq, 0, nullptr), -FI_ENOSYS);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(CqTest, BindIsNotACqOperation) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT);
    EXPECT_EQ(cq->fid.ops->bind(&cq->fid, &env_.domain->fid, 0), -FI_ENOSYS);
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

// Sources attached by endpoints: reading progresses them; fi_close is refused while any is.
TEST_F(CqTest, SourcesAreProgressedAndBlockClose) {
    fid_cq *cq = open_cq(FI_CQ_FORMAT_CONTEXT);
    Cq *q = cq_of(cq);
    ufi_test::PipeSource src;
    src.on_event = [&] { q->write(&src, FI_SEND, 0, nullptr, 0, 0); };
    ASSERT_EQ(ufi::runtime::cq::attach_source(q, src.source()), 0);
    ASSERT_EQ(ufi::runtime::cq::attach_source(q, src.source()), 0) << "FI_TRANSMIT and FI_RECV";
    EXPECT_EQ(q->attached_sources(), 1u) << "the same source counts once";
    EXPECT_EQ(ufi::runtime::cq::attach_source(nullptr, src.source()), -FI_EINVAL);
    EXPECT_EQ(ufi::runtime::cq::attach_source(q, ufi::runtime::ProgressSource{}), -FI_EINVAL);

    fi_cq_entry e[2];
    EXPECT_EQ(fi_cq_read(cq, e, 2), -FI_EAGAIN);
    EXPECT_GE(src.progress_calls.load(), 1);
    src.fire();
    ASSERT_EQ(fi_cq_read(cq, e, 2), 1) << "the read progressed the source first";
    EXPECT_EQ(e[0].op_context, &src);

    EXPECT_EQ(fi_close(&cq->fid), -FI_EBUSY);
    ufi::runtime::cq::detach_source(q, src.source());
    EXPECT_EQ(q->attached_sources(), 0u) << "one detach removes it";
    {
        ufi::log::ScopedCapture capture;
        ufi::runtime::cq::detach_source(q, src.source());
        EXPECT_EQ(capture.lines().size(), 1u) << "detaching a source that is not attached warns";
    }
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST(CqBinding, OnlyUfiCqs) {
    EXPECT_EQ(cq_of(static_cast<fid_t>(nullptr)), nullptr);
    fid f{};
    f.fclass = FI_CLASS_EQ;
    EXPECT_EQ(cq_of(&f), nullptr);
}

}  // namespace
