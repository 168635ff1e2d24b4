// One row of the table of active messages a data path receives: the message's id, the function
// that hands it to its module's handler (messages held while their peer was connecting, and the
// tests, go through it), and the function UCT calls, a trampoline into the same handler. Each
// protocol module owns the rows of its messages (handlers()); DataPath::create installs them all.
#pragma once

#include "transports/iface/endpoint_worker.h"

#include <cstddef>
#include <cstdint>

namespace ufi::runtime::proto {

class DataPath;

struct MessageHandler {
    using Handle = void (*)(DataPath &dp, const uint8_t *data, size_t length) noexcept;
    uint8_t id;
    Handle handle;
    transports::AmHandlerFn am;
};

}  // namespace ufi::runtime::proto
