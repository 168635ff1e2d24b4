// FI_EVENT AVs (deprecated asynchronous mode): inserts fail with -FI_ENOEQ until an EQ is
// bound, then complete through it: one error entry per failed address (data: its index), then
// one FI_AV_COMPLETE event (data: the number inserted), all with the insert's context.
#include "av_fixture.h"

namespace ufi::av_test {
namespace {

TEST_F(AvTest, EventAvNeedsAnEq) {
    open_domain();
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.flags = FI_EVENT;
    fid_av *av = open_av(attr);
    const auto b = make_blob(1);
    fi_addr_t out = 0;
    WarnCapture w;
    EXPECT_EQ(fi_av_insert(av, b.data(), 1, &out, 0, nullptr), -FI_ENOEQ);
    EXPECT_EQ(fi_av_insertsvc(av, "10.0.0.1", "1", &out, 0, nullptr), -FI_ENOEQ);
    EXPECT_EQ(w.count(), 2u);
    EXPECT_TRUE(w.contains("EQ"));
}

TEST_F(AvTest, EventAvCompletesThroughTheEq) {
    open_domain();
    fi_eq_attr eq_attr{};
    eq_attr.size = 32;
    fid_eq *eq = nullptr;
    const int rc = fi_eq_open(fabric_, &eq_attr, &eq, nullptr);
    ASSERT_EQ(rc, 0) << "fi_eq_open: " << fi_strerror(-rc);
    fi_av_attr attr{};
    attr.type = FI_AV_TABLE;
    attr.flags = FI_EVENT;
    fid_av *av = nullptr;
    ASSERT_EQ(fi_av_open(domain_, &attr, &av, nullptr), 0);
    ASSERT_EQ(av_bind(av, &eq->fid, 0), 0);
    auto blobs = make_blobs(0, 2);
    const auto bad = std::vector<uint8_t>(addr_len(), 0);
    std::vector<uint8_t> all = blobs;
    all.insert(all.end(), bad.begin(), bad.end());  // address 2 is malformed
    fi_addr_t out[3];
    int ctx = 0;
    EXPECT_EQ(fi_av_insert(av, all.data(), 3, out, FI_SYNC_ERR, &ctx), -FI_EINVAL)
        << "FI_SYNC_ERR is for synchronous AVs";
    ASSERT_EQ(fi_av_insert(av, all.data(), 3, out, 0, &ctx), 0) << "FI_EVENT: the EQ reports";
    EXPECT_EQ(out[0], 0u);
    EXPECT_EQ(out[1], 1u);
    EXPECT_EQ(out[2], FI_ADDR_NOTAVAIL);

    uint32_t event = 0;
    fi_eq_entry entry{};
    EXPECT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), -FI_EAVAIL)
        << "the error comes first";
    fi_eq_err_entry err{};
    ASSERT_EQ(fi_eq_readerr(eq, &err, 0), static_cast<ssize_t>(sizeof err));
    EXPECT_EQ(err.fid, &av->fid);
    EXPECT_EQ(err.context, &ctx);
    EXPECT_EQ(err.data, 2u) << "the index of the failed address";
    EXPECT_EQ(err.err, FI_EINVAL);
    ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof entry, 0), static_cast<ssize_t>(sizeof entry));
    EXPECT_EQ(event, static_cast<uint32_t>(FI_AV_COMPLETE));
    EXPECT_EQ(entry.fid, &av->fid);
    EXPECT_EQ(entry.context, &ctx);
    EXPECT_EQ(entry.data, 2u) << "addresses inserted";
    EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY) << "bound to the AV";
    EXPECT_EQ(fi_close(&av->fid), 0);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

// More failures than the EQ has room for: every error event and the FI_AV_COMPLETE arrive
// (it used to be dropped with a warning, and a waiter never finished).
TEST_F(AvTest, EventAvNeverLosesItsCompletion) {
    open_domain();
    fi_eq_attr eq_attr{};
    eq_attr.size = 1024;
    eq_attr.wait_obj = FI_WAIT_FD;
    fid_eq *eq = nullptr;
    ASSERT_EQ(fi_eq_open(fabric_, &eq_attr, &eq, nullptr), 0);
    fi_av_attr attr{};
    attr.flags = FI_EVENT;
    fid_av *av = nullptr;
    ASSERT_EQ(fi_av_open(domain_, &attr, &av, nullptr), 0);
    ASSERT_EQ(av_bind(av, &eq->fid, 0), 0);
    const size_t n = 1100;
    std::vector<uint8_t> all = make_blobs(0, n);
    for (size_t i = 0; i < n; ++i) {
        if (i % 50 != 0) all[i * addr_len()] = 'X';  // 1,078 bad ones: more than the EQ holds
    }
    std::vector<fi_addr_t> out(n);
    int ctx = 0;
    WarnCapture w;
    ASSERT_EQ(fi_av_insert(av, all.data(), n, out.data(), 0, &ctx), 0);
    EXPECT_FALSE(w.contains("lost")) << w.text();
    size_t errors = 0;
    bool complete = false;
    for (int spins = 0; spins < 100000 && !complete; ++spins) {
        uint32_t event = 0;
        fi_eq_entry entry{};
        const ssize_t rc = fi_eq_sread(eq, &event, &entry, sizeof entry, 1000, 0);
        if (rc == -FI_EAVAIL) {
            fi_eq_err_entry err{};
            ASSERT_EQ(fi_eq_readerr(eq, &err, 0), static_cast<ssize_t>(sizeof err));
            EXPECT_NE(err.data % 50, 0u);
            ++errors;
            continue;
        }
        ASSERT_EQ(rc, static_cast<ssize_t>(sizeof entry)) << "after " << errors << " errors";
        EXPECT_EQ(event, static_cast<uint32_t>(FI_AV_COMPLETE));
        EXPECT_EQ(entry.data, n / 50);
        EXPECT_EQ(entry.context, &ctx);
        complete = true;
    }
    EXPECT_EQ(errors, n - n / 50);
    EXPECT_GT(errors, eq_attr.size);
    EXPECT_TRUE(complete);
    EXPECT_EQ(fi_close(&av->fid), 0);
    EXPECT_EQ(fi_close(&eq->fid), 0);
}

}  // namespace
}  // namespace ufi::av_test
