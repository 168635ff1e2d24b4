// What every protocol does to hand a message to a lane: read a bcopy send's result as a
// status, and build a control message in a vector (appended field by field, packed by the
// lane's bcopy callback). Internal to runtime/proto.
#pragma once

#include "transports/lanes/am_lane.h"

#include <rdma/fi_errno.h>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ufi::runtime::proto {

// A bcopy send's result (the bytes sent, or a negative status) as a status.
inline transports::Status status_of_bcopy(ssize_t rc) noexcept {
    return rc >= 0 ? transports::kOk : static_cast<transports::Status>(rc);
}

// A status from the wire (an answer's): a negative fi errno, or it is taken as an I/O error.
inline int status_from_wire(int32_t status) noexcept {
    return status > 0 || status < -FI_ERRNO_MAX ? -FI_EIO : status;
}

// Appends raw bytes to a message being built.
inline void append_bytes(std::vector<uint8_t> &m, const void *p, size_t n) {
    const auto *b = static_cast<const uint8_t *>(p);
    m.insert(m.end(), b, b + n);
}

// The lane's pack callback for a control message built in a vector whose byte 0 is its AM
// id: the rest is the payload.
inline size_t pack_after_id(void *dest, void *arg) {
    const auto *m = static_cast<const std::vector<uint8_t> *>(arg);
    std::memcpy(dest, m->data() + 1, m->size() - 1);
    return m->size() - 1;
}

}  // namespace ufi::runtime::proto
