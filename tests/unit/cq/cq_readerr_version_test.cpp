// fi_cq_readerr by the caller's API version (abi-notes.md): below 1.5 only the 1.0 entry is
// written (no err_data_size), 1.5..1.19 up to err_data_size (no src_addr), 1.20 and later the
// whole entry. The entry is placed against a guard page, so a write past the caller's struct
// faults, and the bytes beyond it are checked against a sentinel.
#include "completion_fixture.h"

#include "runtime/cq/cq.h"

#include <cstddef>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

namespace {

using ufi::runtime::cq::cq_of;

// Two pages, the second PROT_NONE; entry() returns a struct whose first `bytes` bytes end
// exactly at the guard page.
class GuardedEntry {
  public:
    GuardedEntry() {
        page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        mem_ = static_cast<char *>(
            mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        EXPECT_NE(mem_, MAP_FAILED);
        EXPECT_EQ(mprotect(mem_ + page_, page_, PROT_NONE), 0);
        memset(mem_, 0xA5, page_);
    }
    ~GuardedEntry() { munmap(mem_, 2 * page_); }
    fi_cq_err_entry *entry(size_t bytes) {
        return reinterpret_cast<fi_cq_err_entry *>(mem_ + page_ - bytes);
    }
    // The sentinel survives in [from, page end).
    bool untouched_after(const void *from) const {
        for (const char *p = static_cast<const char *>(from); p < mem_ + page_; ++p) {
            if (static_cast<unsigned char>(*p) != 0xA5) return false;
        }
        return true;
    }

  private:
    size_t page_;
    char *mem_;
};

struct VersionCase {
    uint32_t version;
    size_t written;  // bytes of fi_cq_err_entry the caller's version has
};

class CqReaderrVersion : public ::testing::TestWithParam<VersionCase> {
  protected:
    void SetUp() override { env_.open(GetParam().version); }
    void TearDown() override { env_.close(); }

    fid_cq *cq_with_error(const void *data, size_t size) {
        fi_cq_attr attr{};
        attr.format = FI_CQ_FORMAT_DATA;
        fid_cq *cq = nullptr;
        EXPECT_EQ(fi_cq_open(env_.domain, &attr, &cq, nullptr), 0);
        fi_cq_err_entry err{};
        err.op_context = this;
        err.flags = FI_RECV;
        err.err = FI_EIO;
        err.prov_errno = -3;
        err.err_data = const_cast<void *>(data);
        err.err_data_size = size;
        err.src_addr = 42;
        EXPECT_EQ(cq_of(cq)->write_error(err), 0);
        return cq;
    }

    ufi_test::FabricEnv env_;
};

TEST_P(CqReaderrVersion, WritesOnlyTheCallersEntry) {
    const VersionCase c = GetParam();
    EXPECT_EQ(cq_of(static_cast<fid_t>(nullptr)), nullptr);
    const char data[] = "ufi error data";
    fid_cq *cq = cq_with_error(data, sizeof data);
    GuardedEntry guard;
    fi_cq_err_entry *e = guard.entry(c.written);
    if (c.version >= FI_VERSION(1, 5)) e->err_data_size = 0;  // the caller asks for ufi's buffer
    // The op directly: the inline fi_cq_readerr of 2.x headers stores src_addr first, which a
    // program built against older headers does not do.
    ASSERT_EQ(cq->ops->readerr(cq, e, 0), 1);
    EXPECT_EQ(e->op_context, this);
    EXPECT_EQ(e->flags, FI_RECV);
    EXPECT_EQ(e->err, FI_EIO);
    EXPECT_EQ(e->prov_errno, -3);
    ASSERT_NE(e->err_data, nullptr) << "points at a CQ-owned buffer";
    EXPECT_STREQ(static_cast<const char *>(e->err_data), data);
    if (c.version >= FI_VERSION(1, 5)) {
        EXPECT_EQ(e->err_data_size, sizeof data);
    }
    if (c.version >= FI_VERSION(1, 20)) {
        EXPECT_EQ(e->src_addr, 42u);
    }
    EXPECT_TRUE(guard.untouched_after(reinterpret_cast<char *>(e) + c.written));
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_P(CqReaderrVersion, CallerBufferFromVersion15) {
    const VersionCase c = GetParam();
    const unsigned char data[8] = {9, 8, 7, 6, 5, 4, 3, 2};
    fid_cq *cq = cq_with_error(data, sizeof data);
    unsigned char mine[16];
    memset(mine, 0, sizeof mine);
    fi_cq_err_entry e;
    memset(&e, 0xA5, sizeof e);
    e.err_data = mine;
    if (c.version >= FI_VERSION(1, 5)) e.err_data_size = sizeof mine;
    ASSERT_EQ(cq->ops->readerr(cq, &e, 0), 1);
    if (c.version >= FI_VERSION(1, 5)) {
        EXPECT_EQ(e.err_data, mine) << "copied into the caller's buffer";
        EXPECT_EQ(e.err_data_size, sizeof data);
        EXPECT_EQ(memcmp(mine, data, sizeof data), 0);
    } else {
        EXPECT_NE(e.err_data, mine) << "below 1.5 the input buffer is ignored";
        EXPECT_EQ(memcmp(e.err_data, data, sizeof data), 0);
        EXPECT_EQ(mine[0], 0);
    }
    EXPECT_EQ(fi_close(&cq->fid), 0);
}

// The 1.0 entry ends before err_data_size; the 1.5 entry before src_addr.
INSTANTIATE_TEST_SUITE_P(
    Versions, CqReaderrVersion,
    ::testing::Values(VersionCase{FI_VERSION(1, 4), offsetof(fi_cq_err_entry, err_data_size)},
                      VersionCase{FI_VERSION(1, 10), offsetof(fi_cq_err_entry, src_addr)},
                      VersionCase{FI_VERSION(1, 20), sizeof(fi_cq_err_entry)},
                      VersionCase{FI_VERSION(2, 7), sizeof(fi_cq_err_entry)}),
    [](const auto &info) {
        // Appended, not "v" + std::string: GCC 12 at -O3 reports a false -Wrestrict there.
        std::string name = "v";
        name += std::to_string(FI_MAJOR(info.param.version));
        name += '_';
        name += std::to_string(FI_MINOR(info.param.version));
        return name;
    });

}  // namespace
