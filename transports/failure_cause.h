// Why a connection to a peer failed, named as libfabric programs expect (reset, refused, timed
// out, unreachable). UCT's tcp transport reports every failure of an endpoint as
// UCS_ERR_ENDPOINT_TIMEOUT (its tcp_ep.c says the error is translated so), and a connect that
// fails at once as UCS_ERR_UNREACHABLE, whatever the socket said: the cause is lost below.
// ufi asks the peer's tcp listener once more, with one non-blocking connect bounded in time,
// and names what that answer shows.
#pragma once

#include "base/status.h"

namespace ufi::transports {

namespace address {
struct EndpointAddress;
}
struct Resource;

// How long a failed tcp peer's listener is asked: an answer on a working network comes in
// well under a millisecond; a host that does not answer within this is called timed out.
inline constexpr int kCauseProbeMs = 100;

enum class FailureCause {
    kAsReported,  // nothing better known: the transport's status stands
    kReset,       // a working connection broke: the peer closed it or its process is gone
    kRefused,     // nothing listens at the peer's address (no connection was ever made)
    kTimedOut,    // the peer's host did not answer within the bound
    kUnreachable, // no route to the peer's host
};

// The cause of `status`, reported for a tcp lane to `peer` (`over_loopback`: the lane's
// device is lo, so the peer's loopback record is the one it used); `was_connected`: the
// connection had worked (a handshake completed over it). Statuses that already name a cause
// (kConnectionReset, kRejected, ...) are taken as they are; the two that hide
// it are checked with a connect to the peer's listener, at most `bound_ms` long (none when
// `bound_ms` is 0: kAsReported).
FailureCause tcp_failure_cause(const address::EndpointAddress &peer, bool over_loopback,
                               base::Status status, bool was_connected, int bound_ms) noexcept;

// The cause of `status`, reported for a lane over `local` to `peer`: tcp_failure_cause for tcp;
// a shared-memory peer that had been connected and is found gone (uct_ep_check's
// kEndpointTimeout) is a reset too: its process exited.
FailureCause failure_cause(const Resource &local, const address::EndpointAddress &peer,
                           base::Status status, bool was_connected, int bound_ms) noexcept;

// A few words for a log line ("connection reset by the peer", ...); "" for kAsReported.
const char *describe(FailureCause cause) noexcept;

}  // namespace ufi::transports
