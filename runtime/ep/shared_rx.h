// A shared receive context (fi_srx_context, fi_endpoint(3) "Shared Contexts"): receives
// posted to it serve every endpoint bound to it, and each completes in the CQ of the endpoint
// whose message it took.
//
// How, without touching the data path's fast path: each bound endpoint keeps its own
// transports and matching queues (runtime/proto/data_path.h). A receive posted here waits in
// the context's own queue until one of its endpoints holds an unexpected message it matches;
// it is then posted to that endpoint, whose matching takes the message at once. Endpoints
// hand the context a turn after each progress call that saw a new unexpected message
// (dispatch()), and a new receive looks at every endpoint before it waits. So a message
// reaches its receive through the endpoint's unexpected queue (one copy more than a receive
// posted before the message on a private context), and receives are served in the order they
// were posted, each by the first endpoint found holding a match.
//
// Locks: the context's mutex, then an endpoint's worker lock (never the other way round: an
// endpoint's progress releases its worker lock before it calls dispatch(), which only
// try-locks the context, so a poster that holds it is never waited for).
#pragma once

#include "runtime/object_close.h"
#include "runtime/proto/requests.h"

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace ufi::runtime {
struct Domain;
namespace av {
class Av;
}
}  // namespace ufi::runtime

namespace ufi::runtime::ep {

class Endpoint;

// The api layer's tables for shared receive contexts (api/shared_ctx.cpp).
struct SharedRxOps {
    fi_ops *fid = nullptr;
    fi_ops_ep *ep = nullptr;
    fi_ops_msg *msg = nullptr;
    fi_ops_tagged *tagged = nullptr;
    fi_ops_rma *rma = nullptr;
    fi_ops_atomic *atomic = nullptr;
    fi_ops_cm *cm = nullptr;
};

class SharedRx : public fid_ep {
  public:
    using CStruct = fid_ep;

    // fi_srx_context. `attr` (may be NULL: the domain's defaults) is copied; its size bounds the
    // receives waiting here. -FI_ENOMEM.
    static int open(Domain *domain, const fi_rx_attr *attr, void *context, const SharedRxOps &ops,
                    SharedRx **out) noexcept;
    ~SharedRx();

    // fi_close through close_object(): kBusy while endpoints are bound; receives still waiting
    // here are dropped (no completion: the application closed what they were posted to).
    Shut shut() noexcept;

    // A receive (fi_recv* / fi_trecv* on the context). -FI_EAGAIN when `attr.size` receives
    // wait already; -FI_EINVAL for a directed source no bound endpoint knows.
    ssize_t post(const proto::IovList &iov, fi_addr_t src, void *context, uint64_t flags,
                 uint64_t tag, uint64_t ignore, bool tagged) noexcept;
    // fi_cancel: a receive waiting here completes with FI_ECANCELED in the CQ of the first bound
    // endpoint; one already handed to an endpoint is canceled there.
    ssize_t cancel(void *context) noexcept;

    // fi_ep_bind(ep, srx): an endpoint takes its receives from here (until it closes).
    void attach() noexcept { bound_.fetch_add(1, std::memory_order_relaxed); }
    void detach() noexcept { bound_.fetch_sub(1, std::memory_order_relaxed); }
    // fi_enable of a bound endpoint: it serves this context's receives from now on. -FI_EINVAL
    // (logged) when it is connectionless and its AV is not the one the others share (the page:
    // "endpoints sharing a receive context must share the AV").
    int join(Endpoint *ep, av::Av *av) noexcept;
    // The endpoint closes (before its data path goes).
    void leave(Endpoint *ep) noexcept;

    // Whether receives wait here (read by the endpoints' progress without the lock).
    bool has_waiting() const noexcept { return waiting_.load(std::memory_order_relaxed) != 0; }
    // After `ep`'s progress, with its worker lock released: `unexpected_seen` is the count of
    // unexpected messages its data path has seen. Hands waiting receives to the endpoints that
    // now hold a match; does nothing when another thread holds the context.
    void dispatch(Endpoint *ep, uint64_t unexpected_seen) noexcept;

    Domain *domain() const noexcept { return domain_; }
    // What fi_recv / fi_trecv take from the attributes it was opened with.
    size_t iov_limit() const noexcept { return attr_.iov_limit != 0 ? attr_.iov_limit : proto::kMaxIov; }
    uint64_t op_flags() const noexcept { return attr_.op_flags; }

  private:
    struct Waiting {
        proto::IovList iov;
        fi_addr_t src = FI_ADDR_UNSPEC;
        void *context = nullptr;
        uint64_t flags = 0;
        uint64_t tag = 0;
        uint64_t ignore = 0;
        bool tagged = false;
    };
    struct Member {
        Endpoint *ep = nullptr;
        uint64_t unexpected_seen = 0;  // its count at the last dispatch that looked at it
        uint64_t posted_seen = 0;      // posted_ then
    };

    SharedRx() = default;
    // Hands every waiting receive that a member can take now to that member. Lock held.
    void dispatch_locked() noexcept;
    // Posts `w` to the first member holding an unexpected message it matches: 1 posted, 0 none
    // holds one, or the endpoint's error.
    ssize_t place(const Waiting &w) noexcept;

    Domain *domain_ = nullptr;
    fi_rx_attr attr_{};
    std::mutex mutex_;
    std::atomic<int> bound_{0};
    std::vector<Member> members_;  // enabled endpoints bound to it
    av::Av *av_ = nullptr;         // the AV its connectionless members share
    std::deque<Waiting> waiting_queue_;
    std::atomic<size_t> waiting_{0};
    uint64_t posted_ = 0;  // receives posted here, ever
};

// The live SharedRx behind a fid of class FI_CLASS_SRX_CTX, or nullptr.
SharedRx *shared_rx_of(fid_t fid) noexcept;

}  // namespace ufi::runtime::ep
