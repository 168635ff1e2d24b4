// Rendezvous GET (wire.h kRndvGet), the receiver's side: it reads the sender's buffers, which
// RTS named with their keys, straight into the matched receive (cma here, RDMA elsewhere), then
// tells the sender with ATS. The sender does nothing between RTS and ATS (rndv_protocol.h
// finishes it on ATS). The gets themselves are the zero-copy engine's (zcopy_transfers.cpp).
#pragma once

#include "runtime/proto/requests.h"

namespace ufi::runtime::proto {

class DataPath;
struct Peer;

class RndvGet {
  public:
    explicit RndvGet(DataPath &dp) noexcept : dp_(dp) {}
    RndvGet(const RndvGet &) = delete;
    RndvGet &operator=(const RndvGet &) = delete;

    // Whether this side can read what `info` offers (its transport is ours, the keys unpack,
    // the receive buffers register where the transport needs it); if so, the read starts (or
    // SPLIT, rndv_split.h, takes it) and r is the protocol's. false: nothing was sent, the
    // caller asks the sender to write or stream instead.
    bool start(Peer &p, RecvReq *r, RtsInfo &info) noexcept;

  private:
    DataPath &dp_;
};

}  // namespace ufi::runtime::proto
