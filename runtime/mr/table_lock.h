// The lock of the MR family's per-domain tables (keys, mapped raw keys). They are shared by
// every endpoint of the domain, so they need a lock whenever different threads may use the
// domain at once: every threading model but FI_THREAD_DOMAIN (FI_THREAD_ENDPOINT and
// FI_THREAD_COMPLETION serialize per endpoint or per CQ only). Readers (the data path:
// key lookups) share it; registration and close take it exclusively.
#pragma once

#include <rdma/fi_domain.h>

#include <shared_mutex>

namespace ufi::runtime::mr {

class TableLock {
  public:
    explicit TableLock(bool needed) : needed_(needed) {}
    void lock() {
        if (needed_) m_.lock();
    }
    void unlock() {
        if (needed_) m_.unlock();
    }
    void lock_shared() {
        if (needed_) m_.lock_shared();
    }
    void unlock_shared() {
        if (needed_) m_.unlock_shared();
    }

  private:
    std::shared_mutex m_;
    bool needed_;
};

inline bool tables_need_locks(int threading) {
    return threading != FI_THREAD_DOMAIN;
}

}  // namespace ufi::runtime::mr
