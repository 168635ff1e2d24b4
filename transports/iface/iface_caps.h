// What uct_iface_query reported, as ufi keeps it (IfaceCaps: the flags, limits, estimates and
// address lengths, and the questions the protocols ask answered once). Inside transports/ only:
// an endpoint's ifaces (endpoint_worker.cpp) and discovery's resources (discovery.cpp) are
// filled from it.
#pragma once

#include "transports/iface/endpoint_worker.h"

#include <uct/api/uct.h>

namespace ufi::transports {

IfaceCaps caps_of(const uct_iface_attr_t &attr);

}  // namespace ufi::transports
