// The slow path of the UFI_LOG_* macros: format, write.
#include <exception>
#include <string>

#include "base/log/log.h"

namespace ufi::log::detail {

void vemit(Level level, Subsys subsys, const char *func, int line, fmt::string_view format,
           fmt::format_args args) noexcept {
    try {
        const std::string message = fmt::vformat(format, args);
        write(level, subsys, provider_name, func, line, message);
    } catch (const std::exception &e) {
        try {
            write(level, subsys, provider_name, func, line,
                  std::string("log message lost, formatting failed: ") + e.what());
        } catch (...) {
        }
    } catch (...) {
    }
}

}  // namespace ufi::log::detail
