// The one table of the active messages a data path receives: each protocol module's rows
// (handlers()), joined. UCT calls each row's trampoline (installed at fi_enable), and messages
// held while their peer was connecting, or given by the tests, go through the same rows
// (deliver()).
#include "runtime/proto/data_path.h"
#include "runtime/proto/wire.h"

#include <initializer_list>
#include <vector>

namespace ufi::runtime::proto {

namespace {

// The modules' rows in one table (built once: fi_enable installs them, deliver() searches
// them; UCT calls the trampolines directly).
std::vector<MessageHandler> joined(std::initializer_list<std::span<const MessageHandler>> parts) {
    std::vector<MessageHandler> all;
    for (std::span<const MessageHandler> p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
}

}  // namespace

std::span<const MessageHandler> DataPath::message_handlers() noexcept {
    static const std::vector<MessageHandler> kTable =
        joined({Wireup::handlers(), EagerProtocol::handlers(), RndvProtocol::handlers(),
                RmaProtocol::handlers(), RmaZcopyProtocol::handlers(),
                AtomicProtocol::handlers()});
    return kTable;
}

bool DataPath::deliver(uint8_t id, const uint8_t *data, size_t length) noexcept {
    for (const MessageHandler &h : message_handlers()) {
        if (h.id == id) {
            h.handle(*this, data, length);
            return true;
        }
    }
    ++stats_.dropped_unknown_id;
    return false;
}

}  // namespace ufi::runtime::proto
