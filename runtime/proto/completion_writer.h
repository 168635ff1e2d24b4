// Completions as the data path writes them: a success or an error entry for a CQ, written at
// once, or, when that CQ is full, kept in order and written by progress (a full CQ is never
// overrun and no completion overtakes an earlier one). One service every protocol module uses.
#pragma once

#include <rdma/fabric.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace ufi::runtime::cq {
class Cq;
}

namespace ufi::runtime::proto {

// One completion to write.
struct Completion {
    cq::Cq *cq;
    void *context;
    uint64_t flags;
    size_t len;
    uint64_t data;
    uint64_t tag;
    fi_addr_t src;
    int err;      // 0, or a positive fi errno (an error completion)
    size_t olen;  // FI_ETRUNC: bytes that did not fit
    void *buf;    // FI_MULTI_RECV: where the message starts in the buffer
    std::vector<uint8_t> err_data;  // FI_EADDRNOTAVAIL: the sender's address
};

class CompletionWriter {
  public:
    // Writes c now, or keeps it (in order behind those kept) while its CQ is full.
    void write(const Completion &c) noexcept {
        if (overflow_.empty() && write_now(c)) return;
        keep(c);
    }
    // Whether completions wait for room (the inline common cases write straight to the CQ
    // only when none does, so that none overtakes them).
    bool waiting() const noexcept { return !overflow_.empty(); }
    // Progress: writes what waited, in order, while the CQs take it; the number written.
    unsigned flush() noexcept;

  private:
    bool write_now(const Completion &c) noexcept;  // false: the CQ is full
    void keep(const Completion &c) noexcept;

    std::deque<Completion> overflow_;  // completions a full CQ refused, in order
};

}  // namespace ufi::runtime::proto
