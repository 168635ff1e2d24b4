// The passive endpoint (fi_passive_ep, fid_pep): a connection manager's listener on a socket
// address, whose connection requests become FI_CONNREQ events on its EQ. Each event's
// info->handle is a ConnRequest (FI_CLASS_CONNREQ) that fi_endpoint + fi_accept use, or
// fi_reject refuses (with the application's data, which the client's error event carries).
#pragma once

#include "runtime/object_close.h"
#include "transports/cm/connection_manager.h"

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace ufi::runtime {
struct Fabric;
namespace eq {
class Eq;
}
}  // namespace ufi::runtime

namespace ufi::runtime::ep {

class PassiveEndpoint;

// A client's request, from FI_CONNREQ until fi_accept or fi_reject uses it up. Its owner: the
// passive endpoint while pending (closing it refuses and frees the request), the endpoint
// fi_endpoint opened from it after that (fi_accept, or closing that endpoint, frees it). The
// application may fi_close a pending one (refused). A handle freed so is no longer recognised
// (conn_request_of: -FI_EINVAL from the calls that take it), never read.
struct ConnRequest : fid {
    PassiveEndpoint *pep = nullptr;
    std::shared_ptr<transports::cm::ConnectionManager> cm;
    std::shared_ptr<transports::cm::CmListener> listener;
    uct_conn_request_h request = nullptr;
    std::vector<uint8_t> peer_address;  // the client's data-path address
    sockaddr_storage peer{};            // the client's socket address
    bool used = false;   // accepted or refused at the CM
    bool taken = false;  // an endpoint was opened from it: that endpoint owns it now
};

// The live ConnRequest behind an info->handle, or nullptr when it is none (any more).
ConnRequest *conn_request_of(fid_t handle) noexcept;
// The live passive endpoint behind `handle` (info->handle, hints->handle), or nullptr: never
// reads a handle that is not one of ufi's live objects.
PassiveEndpoint *live_passive_endpoint(fid_t handle) noexcept;
// fi_endpoint from a request: the endpoint takes it over (off the passive endpoint's list).
// False when it is not pending (taken already, used up).
bool take_conn_request(ConnRequest *r) noexcept;
// Refuses `r` at the CM unless used up, and frees it (its owner's end).
void drop_conn_request(ConnRequest *r) noexcept;

// The api layer's tables for passive endpoints.
struct PassiveEndpointOps {
    fi_ops *fid = nullptr;
    fi_ops_ep *ep = nullptr;
    fi_ops_cm *cm = nullptr;
};

class PassiveEndpoint : public fid_pep {
  public:
    using CStruct = fid_pep;

    // fi_passive_ep. -FI_EINVAL for an info that is not ufi's FI_EP_MSG, -FI_ENOMEM.
    static int open(Fabric *fabric, const fi_info *info, void *context, const PassiveEndpointOps &ops,
                    PassiveEndpoint **out) noexcept;
    ~PassiveEndpoint();

    // fi_close, through close_object(): refuses the requests not taken yet, stops listening.
    Shut shut() noexcept;
    // fi_pep_bind: an EQ (flags 0), once.
    int bind(fid_t bfid, uint64_t flags) noexcept;
    // fi_listen: on the info's source address (or setname's), port 0 for one the kernel picks.
    // -FI_ENOEQ without an EQ, -FI_EOPBADSTATE when listening already, -FI_EADDRINUSE, or the
    // CM's error.
    int listen() noexcept;
    // fi_getname: the address it listens on (after fi_listen: its port), else the one it will.
    int getname(void *addr, size_t *addrlen) noexcept;
    // fi_setname: before fi_listen, the socket address to listen on.
    int setname(const void *addr, size_t addrlen) noexcept;
    // fi_control(FI_BACKLOG): before fi_listen.
    int set_backlog(int backlog) noexcept;
    // fi_reject: refuses `handle` (a ConnRequest of this endpoint) with `param` for the client.
    int reject(fid_t handle, const void *param, size_t paramlen) noexcept;
    // fi_getopt(FI_OPT_CM_DATA_SIZE) and the like.
    int getopt(int level, int optname, void *optval, size_t *optlen) noexcept;

    // A request taken by fi_accept (or refused) leaves the endpoint's list.
    void forget(ConnRequest *r) noexcept;

  private:
    PassiveEndpoint() = default;
    static void progress_cb(void *arg);  // (EQ reads)
    static void wake_cb(void *arg);      // (UCX's async thread)
    void progress() noexcept;

    Fabric *fabric_ = nullptr;
    fi_info *info_ = nullptr;  // (owned copy)
    eq::Eq *eq_ = nullptr;
    std::mutex mu_;
    sockaddr_storage addr_{};
    socklen_t addrlen_ = 0;
    int backlog_ = 0;
    std::shared_ptr<transports::cm::ConnectionManager> cm_;
    std::shared_ptr<transports::cm::CmListener> listener_;
    std::list<ConnRequest *> pending_;  // requests announced, not used up yet
    // Refusals with data: accepted at the CM with a refusal for an answer, kept until their
    // connection ends.
    std::list<std::unique_ptr<transports::cm::CmConnection>> refusing_;
};

}  // namespace ufi::runtime::ep
