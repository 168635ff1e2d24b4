// The group of group.h as mpirun (or any PMIx launcher) started it: names and figures go
// through the launcher's PMIx server (put, commit, a collecting fence, get), barriers are
// fences; every wait progresses this process's endpoint. Rank 0 prints.
#include "group.h"
#include "group_channel.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#if UFI_PERF_HAVE_PMIX
#include <pmix.h>

#include <atomic>
#include <cstring>
#endif

namespace ufi::perf {

#if UFI_PERF_HAVE_PMIX

namespace {

constexpr int kTimeoutMs = 120000;

// A fence's completion, set by PMIx's progress thread. Heap-held: a fence that times out
// leaves it to a callback that may still come.
struct FenceState {
    std::atomic<bool> done{false};
    std::atomic<pmix_status_t> status{PMIX_SUCCESS};
};

void fence_done(pmix_status_t status, void *cbdata) {
    auto *s = static_cast<FenceState *>(cbdata);
    s->status.store(status);
    s->done.store(true, std::memory_order_release);
}

std::string pmix_error(const char *what, pmix_status_t rc) {
    return std::string(what) + ": " + PMIx_Error_string(rc);
}

class PmixChannel final : public GroupChannel {
  public:
    ~PmixChannel() override {
        if (initialized_) PMIx_Finalize(nullptr, 0);
    }

    // Whether a PMIx server (the launcher's) answers; no error when none does.
    bool connect() {
        initialized_ = PMIx_Init(&me_, nullptr, 0) == PMIX_SUCCESS;
        return initialized_;
    }

    // After connect(): the job's size (2 or more for a group).
    bool init(std::string &error) {
        pmix_proc_t job;
        PMIX_LOAD_PROCID(&job, me_.nspace, PMIX_RANK_WILDCARD);
        pmix_value_t *v = nullptr;
        const pmix_status_t rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &v);
        if (rc != PMIX_SUCCESS || v == nullptr) {
            error = pmix_error("PMIx_Get(PMIX_JOB_SIZE)", rc);
            return false;
        }
        size_ = v->type == PMIX_UINT32 ? static_cast<int>(v->data.uint32) : 0;
        PMIX_VALUE_RELEASE(v);
        if (size_ < 2 || size_ > 4096) {
            error = "the job has " + std::to_string(size_) + " processes: a group needs 2 or more";
            return false;
        }
        return true;
    }

    int rank() const override { return static_cast<int>(me_.rank); }
    int size() const override { return size_; }

    bool exchange_names(const std::vector<uint8_t> &mine, std::vector<std::vector<uint8_t>> &all,
                        std::string &error) override {
        if (!put_bytes("ufi_perf.name", mine.data(), mine.size(), error)) return false;
        if (!fence(true, [] { return true; }, error)) return false;
        all.assign(size_, {});
        for (int r = 0; r < size_; ++r) {
            if (!get_bytes(r, "ufi_perf.name", all[r], error)) return false;
        }
        return true;
    }

    bool barrier(const std::function<bool()> &progress, std::string &error) override {
        return fence(false, progress, error);
    }

    bool report(double value, const std::function<bool()> &progress, std::vector<double> &all,
                std::string &error) override {
        const std::string key = "ufi_perf.r" + std::to_string(reports_++);
        all.clear();
        if (!put_bytes(key.c_str(), &value, sizeof value, error)) return false;
        if (!fence(true, progress, error)) return false;
        if (rank() != 0) return true;
        all.resize(size_);
        for (int r = 0; r < size_; ++r) {
            std::vector<uint8_t> b;
            if (!get_bytes(r, key.c_str(), b, error)) return false;
            if (b.size() != sizeof(double)) {
                error = "rank " + std::to_string(r) + "'s figure has " + std::to_string(b.size()) + " bytes";
                return false;
            }
            std::memcpy(&all[r], b.data(), sizeof(double));
        }
        return true;
    }

  private:
    bool put_bytes(const char *key, const void *data, size_t len, std::string &error) {
        pmix_value_t v;
        PMIX_VALUE_CONSTRUCT(&v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = static_cast<char *>(const_cast<void *>(data));  // (PMIx_Put copies)
        v.data.bo.size = len;
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        if (rc != PMIX_SUCCESS) {
            error = pmix_error("PMIx_Put", rc);
            return false;
        }
        rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) {
            error = pmix_error("PMIx_Commit", rc);
            return false;
        }
        return true;
    }

    bool get_bytes(int rank, const char *key, std::vector<uint8_t> &out, std::string &error) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me_.nspace, static_cast<pmix_rank_t>(rank));
        pmix_value_t *v = nullptr;
        const pmix_status_t rc = PMIx_Get(&p, key, nullptr, 0, &v);
        if (rc != PMIX_SUCCESS || v == nullptr) {
            error = pmix_error(("PMIx_Get(" + std::string(key) + " of rank " + std::to_string(rank) + ")").c_str(), rc);
            return false;
        }
        const bool ok = v->type == PMIX_BYTE_OBJECT;
        if (ok) out.assign(v->data.bo.bytes, v->data.bo.bytes + v->data.bo.size);
        PMIX_VALUE_RELEASE(v);
        if (!ok) error = std::string(key) + " of rank " + std::to_string(rank) + " is not bytes";
        return ok;
    }

    // A fence of every process of the job, progressing the endpoint while it runs and
    // sleeping a millisecond between progress calls (processes waiting here leave the cores
    // to the pair being measured).
    bool fence(bool collect, const std::function<bool()> &progress, std::string &error) {
        auto *state = new FenceState;
        pmix_info_t info;
        PMIX_INFO_CONSTRUCT(&info);
        bool c = collect;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &c, PMIX_BOOL);
        const pmix_status_t rc = PMIx_Fence_nb(nullptr, 0, &info, 1, fence_done, state);
        if (rc != PMIX_SUCCESS) {
            PMIX_INFO_DESTRUCT(&info);
            delete state;
            error = pmix_error("PMIx_Fence_nb", rc);
            return false;
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
        while (!state->done.load(std::memory_order_acquire)) {
            if (!progress()) return false;  // (state and info left to the callback)
            if (std::chrono::steady_clock::now() > deadline) {
                error = "the job's processes did not meet within " + std::to_string(kTimeoutMs / 1000) + " s";
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        PMIX_INFO_DESTRUCT(&info);
        const pmix_status_t status = state->status.load();
        delete state;
        if (status != PMIX_SUCCESS) {
            error = pmix_error("PMIx_Fence", status);
            return false;
        }
        return true;
    }

    pmix_proc_t me_{};
    bool initialized_ = false;
    int size_ = 0;
    uint64_t reports_ = 0;
};

}  // namespace

bool run_pmix_group_if_launched(const Options &o, int &status) {
    PmixChannel ch;
    if (!ch.connect()) return false;  // no launcher's server: a pair
    if (o.ep_type != EpType::Rdm) {
        std::fprintf(stderr, "ufi_perf: under mpirun the processes measure as a group of RDM "
                             "endpoints: give no SERVER and no -e msg\n");
        status = 2;
        return true;
    }
    std::string error;
    if (!ch.init(error)) {
        std::fprintf(stderr, "ufi_perf under a PMIx launcher: %s\n", error.c_str());
        status = 1;
        return true;
    }
    status = run_member(ch, o, "started by a PMIx launcher (mpirun), names through PMIx");
    return true;
}

#else

bool run_pmix_group_if_launched(const Options &, int &) {
    return false;  // (built without PMIx, libpmix-dev: under mpirun each process is a pair server)
}

#endif

}  // namespace ufi::perf
