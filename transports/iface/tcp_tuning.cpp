#include "transports/iface/tcp_tuning.h"

#include "base/config/config.h"
#include "base/log/log.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>

#include <cstdint>
#include <mutex>
#include <string>

namespace ufi::transports {

void tune_tcp_events(uct_iface_config_t *config, const std::string &tl) {
    if (tl != "tcp") return;
    const int64_t want = config::registry().get_int("UFI_TCP_MAX_POLL");
    if (want == 0) return;
    ucs_status_t s = UCS_ERR_INVALID_PARAM;
    if (want > 0 && want <= INT32_MAX) {
        s = uct_config_modify(config, "MAX_POLL", std::to_string(want).c_str());
    }
    if (s != UCS_OK) {
        static std::once_flag warned;
        std::call_once(warned, [&] {
            UFI_LOG_WARN(log::Subsys::Core,
                         "UFI_TCP_MAX_POLL={}: not an event count tcp takes ({}); UCX's setting "
                         "is used",
                         want, to_string(s));
        });
    }
}

}  // namespace ufi::transports
