// A mutex that locks only when the application's threading model needs it: FI_THREAD_SAFE
// takes it, FI_THREAD_DOMAIN/COMPLETION/ENDPOINT (the application serializes) skip it.
// Data-path code uses this; control-path code (open, close, insert, register) may use a
// plain std::mutex, since setup calls are rare and their callers may be any thread.
#pragma once

#include <rdma/fi_domain.h>

#include <mutex>

namespace ufi::runtime {

class OptionalMutex {
public:
    explicit OptionalMutex(bool needed = true) : needed_(needed) {}
    void lock() {
        if (needed_) m_.lock();
    }
    void unlock() {
        if (needed_) m_.unlock();
    }
    bool needed() const { return needed_; }

private:
    std::mutex m_;
    bool needed_;
};

inline bool threading_needs_locks(int threading) {
    return threading == FI_THREAD_SAFE || threading == FI_THREAD_UNSPEC;
}

}  // namespace ufi::runtime
