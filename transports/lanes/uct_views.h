// ufi's copies of UCT's structs (am_lane.h: Iov, Completion; ucx_fwd.h: UctRkeyBundle) seen as UCT's own, inside
// transports/ only: the protocols build them without UCX's headers and the lanes pass them
// to UCT as they are. The layouts are checked here, field by field.
#pragma once

#include "transports/lanes/am_lane.h"

#include <uct/api/uct.h>

#include <cstddef>

namespace ufi::transports {

// The protocols build UCT's structs as ufi's (am_lane.h); the lanes pass them on as they are.
static_assert(sizeof(Iov) == sizeof(uct_iov_t));
static_assert(offsetof(Iov, buffer) == offsetof(uct_iov_t, buffer));
static_assert(offsetof(Iov, length) == offsetof(uct_iov_t, length));
static_assert(offsetof(Iov, memh) == offsetof(uct_iov_t, memh));
static_assert(offsetof(Iov, stride) == offsetof(uct_iov_t, stride));
static_assert(offsetof(Iov, count) == offsetof(uct_iov_t, count));
static_assert(sizeof(Completion) == sizeof(uct_completion_t));
static_assert(offsetof(Completion, func) == offsetof(uct_completion_t, func));
static_assert(offsetof(Completion, count) == offsetof(uct_completion_t, count));
static_assert(offsetof(Completion, status) == offsetof(uct_completion_t, status));
static_assert(sizeof(UctRkeyBundle) == sizeof(uct_rkey_bundle_t));
static_assert(offsetof(UctRkeyBundle, rkey) == offsetof(uct_rkey_bundle_t, rkey));
static_assert(offsetof(UctRkeyBundle, handle) == offsetof(uct_rkey_bundle_t, handle));
static_assert(offsetof(UctRkeyBundle, type) == offsetof(uct_rkey_bundle_t, type));

inline const uct_iov_t *as_uct(const Iov *iov) noexcept {
    return reinterpret_cast<const uct_iov_t *>(iov);
}
inline uct_completion_t *as_uct(Completion *c) noexcept {
    return reinterpret_cast<uct_completion_t *>(c);
}
inline uct_rkey_bundle_t *as_uct(UctRkeyBundle &b) noexcept {
    return reinterpret_cast<uct_rkey_bundle_t *>(&b);
}

}  // namespace ufi::transports
