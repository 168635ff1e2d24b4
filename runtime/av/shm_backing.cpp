// A named address table shared by the processes of a node: a header file and chunk files in
// UFI_AV_SHM_DIR (tmpfs, /dev/shm by default), mapped MAP_SHARED.
//
// Creation is atomic: the creator initialises a private temporary file, takes its shared flock
// and link()s it to the public name, so nobody ever maps a half-initialised header. Lifetime
// follows the flocks: each process holds a shared flock while it has the AV open (the kernel
// drops it if the process dies); a closer that can turn its lock exclusive is the last user: it
// marks the header dead and unlinks every file. An opener that gets an exclusive lock on an
// existing file finds a table whose users all died, and deletes it the same way. Chunk files
// carry the table's random generation in their name, so a new table never meets an old one's.
#include "runtime/av/backing.h"
#include "base/config/config.h"
#include "base/log/log.h"

#include <rdma/fi_errno.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <vector>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

namespace ufi::runtime::av {

namespace {

using layout::TableHeader;

std::string errno_text(int err) {
    char buf[128];
    const char *s = strerror_r(err, buf, sizeof buf);  // GNU variant
    return s;
}

size_t page_round(size_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return (n + page - 1) / page * page;
}

uint64_t random_u64() {
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof v)) v = 0;
    const auto t =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return v ^ (t * 0x9e3779b97f4a7c15ULL) ^ (static_cast<uint64_t>(getpid()) << 40);
}

void *map_shared(int fd, size_t bytes) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? nullptr : p;
}

// Sizes the file and reserves its pages, so that a full tmpfs is an error now rather than a
// SIGBUS on first touch.
int size_file(int fd, size_t bytes) {
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) return errno;
    const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    if (rc == EOPNOTSUPP || rc == EINVAL) return 0;  // a filesystem without fallocate
    return rc;
}

int errno_to_fi(int err) {
    switch (err) {
        case ENOMEM:
        case ENOSPC:
        case EFBIG:
        case EDQUOT:
            return -FI_ENOMEM;
        case EACCES:
        case EPERM:
            return -FI_EACCES;
        default:
            return -FI_EOTHER;
    }
}

std::string hex(uint64_t v) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
    return s;
}

class ShmBacking;

// Every open shared AV of this process, so that a forked child gets its own hold on each
// (see ShmBacking::before_fork). The prepare/parent/child handlers of pthread_atfork keep the
// list consistent across fork.
struct LiveBackings {
    std::mutex mutex;
    std::vector<ShmBacking *> list;
};
LiveBackings &live_backings() {
    static LiveBackings *l = new LiveBackings;  // never destroyed: used by atfork handlers
    return *l;
}
void fork_prepare();
void fork_parent();
void fork_child();

class ShmBacking final : public Backing {
  public:
    ShmBacking(std::string dir, std::string base, int fd, TableHeader *h, size_t header_len,
               ino_t ino)
        : dir_(std::move(dir)),
          base_(std::move(base)),
          fd_(fd),
          header_len_(header_len),
          ino_(ino) {
        header_ = h;
        shared_ = true;
        static std::once_flag atfork_once;
        std::call_once(atfork_once, [] { pthread_atfork(fork_prepare, fork_parent, fork_child); });
        std::lock_guard<std::mutex> lock(live_backings().mutex);
        live_backings().list.push_back(this);
    }

    ~ShmBacking() override {
        {
            std::lock_guard<std::mutex> lock(live_backings().mutex);
            auto &l = live_backings().list;
            l.erase(std::remove(l.begin(), l.end(), this), l.end());
        }
        // The last user turns its shared lock exclusive; everyone else keeps failing to. A
        // lock belongs to an open file description, so this is only a count of users when
        // this process holds its own description (see after_fork).
        if (own_description_ && flock(fd_, LOCK_EX | LOCK_NB) == 0) {
            std::atomic_ref<uint32_t>(header_->dead).store(1);
            unlink_files(dir_, base_, header_->generation, ino_);
        }
        munmap(header_, header_len_);
        close(fd_);
    }

    // Around fork. An inherited fd shares the parent's open file description, and a flock
    // belongs to the description: parent and child could not tell each other apart when
    // closing (the first to close would think it the last user). So, before fork, the parent
    // opens the table file again and takes a shared lock on that new description; the child
    // keeps it as its own hold and the parent closes its copy. Taken before fork, the child's
    // hold exists before either side can close.
    void before_fork() noexcept {
        pending_fd_ = -1;
        const std::string main = dir_ + "/" + base_;
        const int fd = open(main.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return;
        struct stat st{};
        if (fstat(fd, &st) != 0 || st.st_ino != ino_ || flock(fd, LOCK_SH | LOCK_NB) != 0) {
            close(fd);
            return;
        }
        pending_fd_ = fd;
    }
    void after_fork_in_parent() noexcept {
        if (pending_fd_ >= 0) close(pending_fd_);  // the child's copy keeps the lock
        pending_fd_ = -1;
    }
    void after_fork_in_child() noexcept {
        if (pending_fd_ >= 0) {
            close(fd_);  // the parent's description (its lock stays with the parent)
            fd_ = pending_fd_;
            own_description_ = true;
        } else {
            own_description_ = false;  // could not take a hold: never act as the last user
        }
        pending_fd_ = -1;
    }

    int create_chunk(ChunkKind kind, uint32_t k, size_t bytes, void *&out) noexcept override {
        const std::string path = chunk_path(dir_, base_, header_->generation, kind, k);
        int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST) {
            // Left by a process that died while creating it (we hold the table lock): stale.
            unlink(path.c_str());
            fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        }
        if (fd < 0) {
            const int err = errno;
            UFI_LOG_WARN(log::Subsys::Av, "shared AV: cannot create {}: {}", path, errno_text(err));
            return errno_to_fi(err);
        }
        const int err = size_file(fd, bytes);
        void *p = err == 0 ? map_shared(fd, bytes) : nullptr;
        const int map_err = errno;
        close(fd);
        if (p == nullptr) {
            UFI_LOG_WARN(log::Subsys::Av, "shared AV: cannot size or map {} ({} bytes): {}", path,
                         bytes, errno_text(err != 0 ? err : map_err));
            unlink(path.c_str());
            return errno_to_fi(err != 0 ? err : map_err);
        }
        out = p;
        return 0;
    }

    int map_chunk(ChunkKind kind, uint32_t k, size_t bytes, void *&out) noexcept override {
        const std::string path = chunk_path(dir_, base_, header_->generation, kind, k);
        const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            UFI_LOG_WARN(log::Subsys::Av, "shared AV: cannot open {}: {}", path, errno_text(errno));
            return errno_to_fi(errno);
        }
        struct stat st;
        void *p = nullptr;
        if (fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= bytes)
            p = map_shared(fd, bytes);
        close(fd);
        if (p == nullptr) {
            UFI_LOG_WARN(log::Subsys::Av,
                         "shared AV: {} is shorter than {} bytes or cannot be mapped", path, bytes);
            return -FI_EOTHER;
        }
        out = p;
        return 0;
    }

    void unmap_chunk(void *p, size_t bytes) noexcept override { munmap(p, bytes); }

    static std::string chunk_path(const std::string &dir, const std::string &base, uint64_t gen,
                                  ChunkKind kind, uint32_t k) {
        return dir + "/" + base + "." + hex(gen) + "." + static_cast<char>(kind) +
               std::to_string(k);
    }

    // Unlinks every chunk file of generation `gen` and the header file if it is still inode `ino`.
    static void unlink_files(const std::string &dir, const std::string &base, uint64_t gen,
                             ino_t ino) {
        for (uint32_t k = 0; k < layout::kMaxChunks; ++k) {
            unlink(chunk_path(dir, base, gen, ChunkKind::Entries, k).c_str());
            unlink(chunk_path(dir, base, gen, ChunkKind::Arena, k).c_str());
        }
        const std::string main = dir + "/" + base;
        struct stat st;
        if (stat(main.c_str(), &st) == 0 && st.st_ino == ino) unlink(main.c_str());
    }

  private:
    std::string dir_;
    std::string base_;
    int fd_;
    size_t header_len_;
    ino_t ino_;
    bool own_description_ = true;
    int pending_fd_ = -1;
};

void fork_prepare() {
    LiveBackings &l = live_backings();
    l.mutex.lock();
    for (ShmBacking *b : l.list) b->before_fork();
}

void fork_parent() {
    LiveBackings &l = live_backings();
    for (ShmBacking *b : l.list) b->after_fork_in_parent();
    l.mutex.unlock();
}

void fork_child() {
    LiveBackings &l = live_backings();
    for (ShmBacking *b : l.list) b->after_fork_in_child();
    l.mutex.unlock();
}

struct Ctx {
    const std::string &dir;
    const std::string &base;
    const std::string &main;
    std::string *why;
};

void say(std::string *why, std::string text) {
    if (why != nullptr) *why = std::move(text);
}

// Maps and checks the header of an open file. nullptr (with *why) if it is not a ufi AV table.
TableHeader *map_header(int fd, const std::string &path, size_t &len, std::string *why) {
    struct stat st;
    if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < sizeof(TableHeader)) {
        say(why, path + " is not a ufi address vector (too short)");
        return nullptr;
    }
    len = static_cast<size_t>(st.st_size);
    auto *h = static_cast<TableHeader *>(map_shared(fd, len));
    if (h == nullptr) {
        say(why, "cannot map " + path + ": " + errno_text(errno));
        return nullptr;
    }
    if (h->magic != layout::kMagic || h->layout_version != layout::kLayoutVersion ||
        len < layout::header_bytes(h->key_capacity) || h->entry_shift > 40 || h->arena_shift > 40) {
        munmap(h, len);
        say(why, path + " is not a ufi address vector of layout version " +
                     std::to_string(layout::kLayoutVersion));
        return nullptr;
    }
    return h;
}

// A table no live process holds: mark it dead and delete its files. We hold its exclusive lock.
// false (with *why) when the file is not a table at all: a foreign file is left alone.
bool remove_stale(int fd, const Ctx &c) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        say(c.why, "cannot stat " + c.main + ": " + errno_text(errno));
        return false;
    }
    size_t len = 0;
    TableHeader *h = map_header(fd, c.main, len, c.why);
    if (h == nullptr) return false;  // a creator never links an uninitialised file
    std::atomic_ref<uint32_t>(h->dead).store(1);
    UFI_LOG_INFO(log::Subsys::Av, "shared AV {}: every process using it has exited; starting afresh",
                 c.main);
    ShmBacking::unlink_files(c.dir, c.base, h->generation, st.st_ino);
    munmap(h, len);
    return true;
}

// The processes /proc/locks says hold a flock on inode `st` ("1234 (name)"), for messages.
std::string flock_holders(const struct stat &st) {
    FILE *f = fopen("/proc/locks", "re");
    if (f == nullptr) return "an unknown process";
    // "1: FLOCK  ADVISORY  WRITE 1234 00:19:5678 0 EOF": pid, then major:minor:inode.
    char line[256];
    std::string out;
    while (fgets(line, sizeof line, f) != nullptr) {
        char kind[16], mode[16], access[16];
        long pid = 0;
        unsigned maj = 0, min = 0;
        unsigned long ino = 0;
        if (sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%lu", kind, mode, access, &pid, &maj, &min,
                   &ino) != 7 ||
            strcmp(kind, "FLOCK") != 0 || ino != st.st_ino || maj != major(st.st_dev) ||
            min != minor(st.st_dev)) {
            continue;
        }
        std::string comm;
        if (FILE *c = fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "re")) {
            char name[64] = {};
            if (fgets(name, sizeof name, c) != nullptr) comm = name;
            fclose(c);
            while (!comm.empty() && comm.back() == '\n') comm.pop_back();
        }
        out += (out.empty() ? "" : ", ") + std::string("process ") + std::to_string(pid) +
               (comm.empty() ? "" : " (" + comm + ")") + " [" + access + "]";
    }
    fclose(f);
    return out.empty() ? "an unknown process" : out;
}

// Takes a shared flock, waiting at most UFI_AV_SHM_LOCK_TIMEOUT for an exclusive holder to let
// go. Exclusive holders are closers and stale-table removers, which keep it for a few system
// calls; one that keeps it longer is stuck or hostile, and fi_av_open must not hang on it.
int lock_shared_bounded(int fd, const Ctx &c) {
    const int64_t wait_ms = std::max<int64_t>(0, config::registry().get_int("UFI_AV_SHM_LOCK_TIMEOUT"));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    auto pause = std::chrono::microseconds(50);
    for (;;) {
        if (flock(fd, LOCK_SH | LOCK_NB) == 0) return 0;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            say(c.why, "cannot lock " + c.main + ": " + errno_text(errno));
            return -FI_EOTHER;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            struct stat st{};
            fstat(fd, &st);
            say(c.why, c.main + " stayed locked for " + std::to_string(wait_ms) +
                           " ms (UFI_AV_SHM_LOCK_TIMEOUT), held by " + flock_holders(st));
            return -FI_EBUSY;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(std::chrono::milliseconds(20)));
    }
}

// 0: created (out set); 1: somebody else created it first (retry); < 0: error.
int try_create(const Ctx &c, const layout::Geometry &g, std::unique_ptr<Backing> &out) {
    const std::string tmp = c.main + ".tmp." + std::to_string(getpid()) + "." + hex(random_u64());
    const int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        const int err = errno;
        say(c.why, "cannot create " + tmp + ": " + errno_text(err));
        return errno_to_fi(err);
    }
    const size_t len = page_round(layout::header_bytes(g.key_capacity));
    auto fail = [&](int err, const std::string &what) {
        say(c.why, what + " " + tmp + ": " + errno_text(err));
        close(fd);
        unlink(tmp.c_str());
        return errno_to_fi(err);
    };
    if (const int err = size_file(fd, len); err != 0) return fail(err, "cannot size");
    auto *h = static_cast<TableHeader *>(map_shared(fd, len));
    if (h == nullptr) return fail(errno, "cannot map");
    if (const int err = layout::init_header(h, g); err != 0) {
        munmap(h, len);
        return fail(-err, "cannot initialise the lock of");
    }
    h->generation = random_u64();
    struct stat st;
    if (flock(fd, LOCK_SH) != 0 || fstat(fd, &st) != 0) {
        munmap(h, len);
        return fail(errno, "cannot lock");
    }
    if (link(tmp.c_str(), c.main.c_str()) != 0) {
        const int err = errno;
        pthread_mutex_destroy(&h->mutex);
        munmap(h, len);
        close(fd);
        unlink(tmp.c_str());
        if (err == EEXIST) return 1;
        say(c.why, "cannot publish " + c.main + ": " + errno_text(err));
        return errno_to_fi(err);
    }
    unlink(tmp.c_str());
    auto *b = new (std::nothrow) ShmBacking(c.dir, c.base, fd, h, len, st.st_ino);
    if (b == nullptr) {
        // Nobody can have used it yet: take it down again.
        ShmBacking::unlink_files(c.dir, c.base, h->generation, st.st_ino);
        munmap(h, len);
        close(fd);
        return -FI_ENOMEM;
    }
    out.reset(b);
    return 0;
}

}  // namespace

std::string shm_file_name(const std::string &name) {
    static constexpr char digits[] = "0123456789ABCDEF";
    if (name.empty()) return {};
    std::string s = "ufi-av-";
    for (unsigned char ch : name) {
        const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                           (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        if (plain) {
            s += static_cast<char>(ch);
        } else {
            s += '%';
            s += digits[ch >> 4];
            s += digits[ch & 15];
        }
        if (s.size() > 207) return {};
    }
    return s;
}

int open_shm_backing(const std::string &dir, const std::string &name, bool read_only,
                     const layout::Geometry &g, std::unique_ptr<Backing> &out, bool &created,
                     std::string *why) noexcept {
    try {
        created = false;
        const std::string base = shm_file_name(name);
        if (base.empty()) {
            say(why, "name is empty or longer than 200 bytes once encoded");
            return -FI_EINVAL;
        }
        const std::string main = dir + "/" + base;
        const Ctx c{dir, base, main, why};
        for (int attempt = 0; attempt < 100; ++attempt) {
            const int fd = open(main.c_str(), O_RDWR | O_CLOEXEC);
            if (fd < 0) {
                const int err = errno;
                if (err != ENOENT) {
                    say(why, "cannot open " + main + ": " + errno_text(err));
                    return err == EACCES || err == EPERM ? -FI_EACCES : -FI_EOTHER;
                }
                if (read_only) {
                    say(why, "no shared AV of this name exists (" + main + ")");
                    return -FI_ENOENT;
                }
                const int rc = try_create(c, g, out);
                if (rc == 0) {
                    created = true;
                    return 0;
                }
                if (rc < 0) return rc;
                continue;  // lost the race to another creator: open theirs
            }
            if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
                if (!remove_stale(fd, c)) {
                    close(fd);
                    return -FI_EINVAL;  // a foreign file holds the name: nothing to retry
                }
                close(fd);
                if (read_only) {
                    say(why, "the shared AV has no live user (it was left by processes that exited)");
                    return -FI_ENOENT;
                }
                continue;
            }
            if (const int rc = lock_shared_bounded(fd, c); rc != 0) {
                close(fd);
                return rc;
            }
            size_t len = 0;
            TableHeader *h = map_header(fd, main, len, why);
            if (h == nullptr) {
                close(fd);
                return -FI_EINVAL;
            }
            if (std::atomic_ref<uint32_t>(h->dead).load() != 0) {  // its last user just closed it
                munmap(h, len);
                close(fd);
                continue;
            }
            struct stat st;
            fstat(fd, &st);
            auto *b = new (std::nothrow) ShmBacking(dir, base, fd, h, len, st.st_ino);
            if (b == nullptr) {
                munmap(h, len);
                close(fd);
                return -FI_ENOMEM;
            }
            out.reset(b);
            return 0;
        }
        say(why, "could not open or create " + main + " (it kept being replaced)");
        return -FI_EOTHER;
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
}

}  // namespace ufi::runtime::av
