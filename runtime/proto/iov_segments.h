// A message's buffers as the zero-copy paths name them: a byte range of an IovList as UCT
// iovs (with their registrations), and as wire segments. Shared by the rendezvous protocol and
// the zero-copy transfers (zcopy_transfers.cpp).
#pragma once

#include "runtime/proto/requests.h"
#include "runtime/proto/wire.h"
#include "transports/lanes/rma_lane.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ufi::runtime::proto {

// The local buffers of `iov` between [at, at + len), as UCT iovs (at most `max` of them), each
// with its registration when `regions` has one; returns how many bytes they cover.
inline size_t slice(const IovList &iov, size_t at, size_t len,
             const std::vector<transports::LocalRegion> &regions, transports::Iov *out, size_t max, size_t &n) {
    n = 0;
    size_t covered = 0;
    for (size_t i = 0; i < iov.count && covered < len && n < max; ++i) {
        if (at >= iov.v[i].len) {
            at -= iov.v[i].len;
            continue;
        }
        const size_t take = std::min(iov.v[i].len - at, len - covered);
        out[n] = transports::make_iov(iov.v[i].base + at, take);
        if (i < regions.size()) out[n].memh = regions[i].memh();
        ++n;
        covered += take;
        at = 0;
    }
    return covered;
}

// The non-empty buffers of `iov` within its bytes [from, length), as wire segments, into
// `segs` (cleared first; its capacity kept).
inline void segments_into(const IovList &iov, size_t length, std::vector<wire::Segment> &segs,
                   size_t from = 0) {
    segs.clear();
    size_t at = 0;  // where iov.v[i] starts in the message
    for (size_t i = 0; i < iov.count && at < length; at += iov.v[i].len, ++i) {
        const size_t begin = std::max(at, from);
        const size_t end = std::min(at + iov.v[i].len, length);
        if (begin >= end) continue;
        segs.push_back({reinterpret_cast<uint64_t>(iov.v[i].base) + (begin - at), end - begin});
    }
}

// The segments of `iov`'s bytes [from, length) (segments_into) and, in their order, the
// packed keys of the buffers they lie in (`regions[i]` registered `iov.v[i]`), into
// `scratch.segs` and `scratch.keys`; `key_len` is one key's size. An error when a key does
// not pack. For the messages that name registered buffers: RTS, RTR, zero-copy RMA requests.
inline transports::Status segments_and_keys(const IovList &iov, size_t length, size_t from,
                                            const std::vector<transports::LocalRegion> &regions,
                                            SegmentMessageScratch &scratch, uint16_t &key_len) {
    segments_into(iov, length, scratch.segs, from);
    scratch.keys.clear();
    key_len = 0;
    size_t at = 0;  // where iov.v[i] starts in the message
    for (size_t i = 0; i < iov.count && at < length; at += iov.v[i].len, ++i) {
        if (iov.v[i].len == 0 || at + iov.v[i].len <= from) continue;
        const transports::Status s = regions[i].pack(scratch.one_key);
        if (s != transports::Status::kOk) return s;
        key_len = static_cast<uint16_t>(scratch.one_key.size());
        scratch.keys.insert(scratch.keys.end(), scratch.one_key.begin(), scratch.one_key.end());
    }
    return transports::Status::kOk;
}

}  // namespace ufi::runtime::proto
