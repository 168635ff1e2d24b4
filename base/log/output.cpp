// Where lines go (stderr, stdout or UFI_LOG_FILE through spdlog) and their libfabric format.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iterator>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "base/log/state.h"

namespace ufi::log {

namespace detail {

State &state() noexcept {
    static State *const instance = new State;
    return *instance;
}

std::shared_ptr<spdlog::logger> current_logger() noexcept {
    State &st = state();
    std::lock_guard lock(st.mutex);
    return st.test_logger ? st.test_logger : st.logger;
}

std::shared_ptr<spdlog::logger> make_logger(std::shared_ptr<spdlog::sinks::sink> sink) {
    // Not registered with spdlog's registry: the application may use spdlog too.
    auto logger = std::make_shared<spdlog::logger>("ufi", std::move(sink));
    logger->set_pattern("%v");
    logger->set_level(spdlog::level::trace);  // filtering happens before, in enabled()
    logger->flush_on(spdlog::level::trace);   // lines reach the file even if we crash
    return logger;
}

namespace {

// The folder a file path names ("." for a bare file name, "/" for a file at the root).
std::string parent_folder(const std::string &path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

}  // namespace

std::shared_ptr<spdlog::sinks::sink> make_sink(const std::string &spec,
                                               std::vector<std::string> &warnings) {
    if (spec.empty() || spec == "stderr") return std::make_shared<spdlog::sinks::stderr_sink_mt>();
    if (spec == "stdout") return std::make_shared<spdlog::sinks::stdout_sink_mt>();
    std::string path;
    for (size_t i = 0; i < spec.size(); ++i) {
        if (spec[i] == '%' && i + 1 < spec.size() && spec[i + 1] == 'p') {
            path += std::to_string(::getpid());
            ++i;
        } else {
            path += spec[i];
        }
    }
    // spdlog creates missing parent folders: a mistyped UFI_LOG_FILE would create folders
    // wherever the process may write. The file is opened only in a folder that exists.
    const std::string folder = parent_folder(path);
    struct stat st{};
    if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        warnings.push_back("cannot open UFI_LOG_FILE '" + path + "': '" + folder +
                           "' is not an existing folder (ufi creates none); logging to stderr");
        return std::make_shared<spdlog::sinks::stderr_sink_mt>();
    }
    try {
        return std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
    } catch (const spdlog::spdlog_ex &e) {
        warnings.push_back("cannot open UFI_LOG_FILE '" + path + "' (" + e.what() +
                           "); logging to stderr");
        return std::make_shared<spdlog::sinks::stderr_sink_mt>();
    }
}

namespace {

spdlog::level::level_enum to_spdlog(Level level) noexcept {
    switch (level) {
        case Level::Error:
            return spdlog::level::err;
        case Level::Warn:
            return spdlog::level::warn;
        case Level::Debug:
            return spdlog::level::debug;
        case Level::Trace:
            return spdlog::level::trace;
        default:
            return spdlog::level::info;
    }
}

}  // namespace

}  // namespace detail

void write(Level level, Subsys subsys, std::string_view prov_name, const char *func, int line,
           std::string_view message) noexcept {
    init();
    if (!message.empty() && message.back() == '\n') message.remove_suffix(1);
    try {
        fmt::memory_buffer text;
        fmt::format_to(std::back_inserter(text), "libfabric:{}:{}::{}:{}:{}():{}<{}> {}",
                       ::getpid(), static_cast<long>(::time(nullptr)), prov_name,
                       subsys_name(subsys), func != nullptr ? func : "", line, level_name(level),
                       message);
        if (auto logger = detail::current_logger()) {
            logger->log(detail::to_spdlog(level), spdlog::string_view_t(text.data(), text.size()));
        } else {
            text.push_back('\n');
            std::fwrite(text.data(), 1, text.size(), stderr);
        }
    } catch (...) {
        // Out of memory while logging: the line is lost, the caller goes on.
    }
}

}  // namespace ufi::log
