// Named AVs within one process (two opens behave as two processes would: each has its own
// mapping, lock and flock): sharing, FI_READ, map_addr, file lifetime, stale tables. The
// two-process tests are in tests/integration/av.
#include "av_fixture.h"

#include "runtime/av/backing.h"
#include "runtime/av/table.h"
#include "runtime/av/binding.h"

#include "base/config/config.h"
#include "base/log/log.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace ufi::av_test {
namespace {

bool file_exists(const std::string &name) {
    struct stat st;
    return stat(("/dev/shm/" + runtime::av::shm_file_name(name)).c_str(), &st) == 0;
}

fi_av_attr named(const std::string &name, uint64_t flags = 0) {
    fi_av_attr a{};
    a.type = FI_AV_TABLE;
    a.name = name.c_str();
    a.flags = flags;
    return a;
}

std::vector<uint8_t> lookup(fid_av *av, fi_addr_t a, int expect = 0) {
    std::vector<uint8_t> buf(1024);
    size_t len = buf.size();
    EXPECT_EQ(fi_av_lookup(av, a, buf.data(), &len), expect);
    buf.resize(expect == 0 ? len : 0);
    return buf;
}

TEST(AvSharedName, Encoding) {
    EXPECT_EQ(runtime::av::shm_file_name("job-1.x_y"), "ufi-av-job-1.x_y");
    EXPECT_EQ(runtime::av::shm_file_name("a/b c"), "ufi-av-a%2Fb%20c");
    EXPECT_EQ(runtime::av::shm_file_name(""), "");
    EXPECT_EQ(runtime::av::shm_file_name(std::string(201, 'x')), "");
    EXPECT_EQ(runtime::av::shm_file_name(std::string(200, 'x')).size(), 207u);
}

TEST_F(AvTest, TwoOpensShareEntriesAndIndices) {
    open_domain();
    const std::string name = unique_name("share");
    fi_av_attr a1 = named(name);
    a1.count = 4;  // small first chunks: the inserts below create more
    fid_av *av1 = open_av_ref(a1);
    ASSERT_NE(av1, nullptr);
    ASSERT_NE(a1.map_addr, nullptr) << "map_addr 0 in: an fi_addr_t per slot out";
    EXPECT_TRUE(file_exists(name));
    fi_av_attr a2 = named(name);
    int hint = 0;
    a2.map_addr = &hint;  // accepted; fi_addr_t values do not depend on it
    fid_av *av2 = open_av_ref(a2);
    ASSERT_NE(av2, nullptr);
    EXPECT_EQ(a2.map_addr, &hint) << "a given map_addr is left as is";

    const size_t n = 70000;
    std::vector<size_t> sizes;
    const auto blobs = make_blobs(0, n, &sizes);
    std::vector<fi_addr_t> out(n);
    ASSERT_EQ(fi_av_insert(av1, blobs.data(), n, out.data(), 0, nullptr), static_cast<int>(n));
    // As fabtests' fi_rdm_shared_av reads it (the sockets and psm providers' convention): the
    // array map_addr points to gives each slot's fi_addr_t, for the count opened with.
    const auto *slots = static_cast<const fi_addr_t *>(a1.map_addr);
    for (size_t i = 0; i < a1.count; ++i) EXPECT_EQ(slots[i], out[i]) << i;
    for (size_t i = 0; i < n; ++i) {
        if (i % 1009 == 0 || i == n - 1) {
            const auto got = lookup(av2, out[i]);
            ASSERT_EQ(got.size(), addr_len()) << i;
            EXPECT_EQ(std::memcmp(got.data(), blobs.data() + i * addr_len(), addr_len()), 0) << i;
            EXPECT_EQ(address::content_size(got.data(), got.size()), sizes[i]) << i;
        }
    }
    // Either side inserts and removes; indices stay consistent.
    fi_addr_t r = 5;
    ASSERT_EQ(fi_av_remove(av2, &r, 1, 0), 0);
    lookup(av1, 5, -FI_EINVAL);
    const auto b = make_blob(999);
    fi_addr_t x = 0;
    ASSERT_EQ(fi_av_insert(av1, b.data(), 1, &x, 0, nullptr), 1);
    EXPECT_EQ(x, 5u);
    EXPECT_EQ(lookup(av2, 5), b);
    // The data path of the other opener sees it too.
    runtime::av::PeerEntry pe;
    ASSERT_EQ(runtime::av::resolve(runtime::av::av_of(av2), n - 1, pe), 0);
    EXPECT_EQ(pe.len, sizes[n - 1]);

    close_av(av1);
    EXPECT_TRUE(file_exists(name)) << "av2 still has it open";
    EXPECT_EQ(lookup(av2, 5), b);
    close_av(av2);
    EXPECT_FALSE(file_exists(name)) << "the last close removes the files";
}

TEST_F(AvTest, UserIdsStayPerProcessObject) {
    open_domain();
    const std::string name = unique_name("uid");
    fid_av *av1 = open_av(named(name, FI_AV_USER_ID));
    fid_av *av2 = open_av(named(name, FI_AV_USER_ID));
    const auto b = make_blob(1);
    fi_addr_t x = 0;
    ASSERT_EQ(fi_av_insert(av1, b.data(), 1, &x, 0, nullptr), 1);
    ASSERT_EQ(fi_av_set_user_id(av1, x, 42, 0), 0);
    runtime::av::PeerEntry p1, p2;
    ASSERT_EQ(runtime::av::resolve(runtime::av::av_of(av1), x, p1), 0);
    ASSERT_EQ(runtime::av::resolve(runtime::av::av_of(av2), x, p2), 0);
    EXPECT_EQ(p1.user_id, 42u);
    EXPECT_EQ(p2.user_id, FI_ADDR_NOTAVAIL) << "user IDs name this process's own structures";
}

TEST_F(AvTest, ReadOnlyOpen) {
    open_domain();
    const std::string name = unique_name("ro");
    fid_av *av = nullptr;
    fi_av_attr ro = named(name, FI_READ);
    {
        // A question, not an error (MPICH asks for "FI_NAMED_AV_0" to learn whether another
        // process made it): no warning; the reason at info level.
        WarnCapture w;
        EXPECT_EQ(fi_av_open(domain_, &ro, &av, nullptr), -FI_ENOENT)
            << "FI_READ of an AV that does not exist";
        EXPECT_EQ(w.count(), 0u) << w.text();
        const log::Level saved = log::level();
        log::set_level(log::Level::Info);
        EXPECT_EQ(fi_av_open(domain_, &ro, &av, nullptr), -FI_ENOENT);
        log::set_level(saved);
        EXPECT_TRUE(w.contains(name)) << w.text();
        EXPECT_TRUE(w.contains("no shared AV of this name exists")) << w.text();
    }
    EXPECT_FALSE(file_exists(name)) << "FI_READ creates nothing";
    fid_av *writer = open_av(named(name));
    const auto blobs = make_blobs(0, 3);
    ASSERT_EQ(fi_av_insert(writer, blobs.data(), 3, nullptr, 0, nullptr), 3);
    fi_av_attr ro2 = named(name, FI_READ);
    fid_av *reader = open_av(ro2);
    ASSERT_NE(reader, nullptr);
    EXPECT_EQ(lookup(reader, 2), lookup(writer, 2));
    fi_addr_t out = 0;
    int status = 1;
    WarnCapture w;
    EXPECT_EQ(fi_av_insert(reader, blobs.data(), 1, &out, FI_SYNC_ERR, &status), -FI_EACCES);
    fi_addr_t zero = 0;
    EXPECT_EQ(fi_av_remove(reader, &zero, 1, 0), -FI_EACCES);
    EXPECT_EQ(fi_av_insertsvc(reader, "10.0.0.1", "1", &out, 0, nullptr), -FI_EACCES);
    EXPECT_EQ(w.count(), 3u);
    lookup(reader, 0);
}

TEST_F(AvTest, StaleTableOfDeadProcessesIsReplaced) {
    open_domain();
    const std::string name = unique_name("stale");
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // A process that creates the AV, fills it and dies without closing.
        using namespace runtime::av;
        std::unique_ptr<Backing> backing;
        bool created = false;
        const auto g = Table::geometry_for(0, true, layout::kSharedKeyCapacity);
        bool ok =
            open_shm_backing("/dev/shm", name, false, g, backing, created, nullptr) == 0 && created;
        if (ok) {
            auto *t = new Table(std::move(backing));  // never destroyed: the process dies
            Table::Guard guard(*t);
            const auto b = make_blob(1);
            uint64_t index = 0;
            for (int i = 0; i < 3; ++i)
                ok = ok &&
                     t->insert_locked(b.data(), static_cast<uint32_t>(b.size()), 0, 0, index) == 0;
        }
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    ASSERT_EQ(waitpid(child, &st, 0), child);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    EXPECT_TRUE(file_exists(name)) << "left behind";
    fid_av *ro = nullptr;
    fi_av_attr ro_attr = named(name, FI_READ);
    EXPECT_EQ(fi_av_open(domain_, &ro_attr, &ro, nullptr), -FI_ENOENT) << "nobody uses it any more";
    fid_av *av = open_av(named(name));
    ASSERT_NE(av, nullptr);
    lookup(av, 0, -FI_EINVAL);  // a fresh table
    close_av(av);
    EXPECT_FALSE(file_exists(name));
}

TEST_F(AvTest, ForeignFileIsNotAnAv) {
    open_domain();
    const std::string name = unique_name("foreign");
    const std::string path = "/dev/shm/" + runtime::av::shm_file_name(name);
    FILE *f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs(
        "this is not an address vector, but long enough to have a header of some size..........."
        "..................................................................................\n",
        f);
    fclose(f);
    // Somebody holds it (as a live user would): it is not stale, and not a table.
    const int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(flock(fd, LOCK_SH), 0);
    fid_av *av = nullptr;
    fi_av_attr attr = named(name);
    WarnCapture w;
    EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
    EXPECT_EQ(w.count(), 1u);
    close(fd);
    // Nobody holds it: ufi may not take it for a stale table of its own either. One WARN line,
    // -FI_EINVAL, the file left alone (it used to retry 100 times, warning each time).
    {
        WarnCapture w2;
        EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
        EXPECT_EQ(w2.count(), 1u) << w2.text();
        EXPECT_TRUE(w2.contains("not a ufi address vector")) << w2.text();
    }
    struct stat st;
    EXPECT_EQ(stat(path.c_str(), &st), 0) << "a foreign file is never deleted";
    unlink(path.c_str());
}

TEST_F(AvTest, LongNamesAreNotEchoedWhole) {
    open_domain();
    const std::string name(70 * 1024, 'n');
    fid_av *av = nullptr;
    fi_av_attr attr = named(name);
    WarnCapture w;
    EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
    EXPECT_EQ(w.count(), 1u);
    EXPECT_LT(w.text().size(), 1024u) << "the name is shortened in the log";
    EXPECT_TRUE(w.contains("(71680 bytes)")) << w.text();
}

// A process that keeps a named AV's file locked exclusively (stuck, or hostile) makes
// fi_av_open fail after UFI_AV_SHM_LOCK_TIMEOUT with -FI_EBUSY naming it, never hang. The
// meson test "av_lock_timeout" runs this with a short timeout.
TEST_F(AvTest, ExclusiveLockHolderIsNamedNotWaitedForever) {
    open_domain();
    const std::string name = unique_name("locked");
    const std::string path = "/dev/shm/" + runtime::av::shm_file_name(name);
    fi_av_attr attr = named(name);
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t holder = fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {
        alarm(60);  // never outlives a broken test
        const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
        if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
        if (write(ready[1], "x", 1) != 1) _exit(2);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c = 0;
    pollfd pfd{ready[0], POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 20000), 1) << "the holder took the lock";
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    const auto start = std::chrono::steady_clock::now();
    fid_av *second = nullptr;
    WarnCapture w;
    const int rc = fi_av_open(domain_, &attr, &second, nullptr);
    const auto waited = std::chrono::steady_clock::now() - start;
    kill(holder, SIGKILL);
    int st = 0;
    waitpid(holder, &st, 0);
    close(ready[0]);
    unlink(path.c_str());
    EXPECT_EQ(rc, -FI_EBUSY);
    EXPECT_EQ(w.count(), 1u) << w.text();
    EXPECT_TRUE(w.contains("process " + std::to_string(holder))) << w.text();
    EXPECT_TRUE(w.contains("UFI_AV_SHM_LOCK_TIMEOUT")) << w.text();
    const auto limit = config::registry().get_int("UFI_AV_SHM_LOCK_TIMEOUT");
    EXPECT_GE(waited, std::chrono::milliseconds(limit));
    EXPECT_LT(waited, std::chrono::milliseconds(limit + 5000));
}

}  // namespace
}  // namespace ufi::av_test
