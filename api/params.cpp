// libfabric's run-time parameters (fi_param_define, fi_param_get, fi_getparams,
// fi_freeparams) over ufi's config registry, the only reader of the environment.
// fi_getparams lists ufi's own variables too, so `fi_info -e` shows everything ufi reads.
#include "api/export.h"
#include "api/provider_abi.h"
#include "base/config/config.h"
#include "base/config/parse.h"
#include "runtime/c_enum.h"
#include "base/log/log.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>

namespace {

using ufi::config::VarType;

// libfabric's naming: FI_<PROVIDER>_<PARAM> (FI_<PARAM> for the core), upper case.
std::string env_name(const fi_provider *provider, const char *param) {
    std::string name = "FI_";
    if (provider != nullptr && provider->name != nullptr && strcmp(provider->name, "core") != 0) {
        name += provider->name;
        name += '_';
    }
    name += param;
    for (char &c : name) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
    return name;
}

// `type` as the caller passed it: C callers may pass any int, so it is never loaded as the enum.
VarType to_var_type(int type) {
    switch (type) {
        case FI_PARAM_INT: return VarType::Int;
        case FI_PARAM_BOOL: return VarType::Bool;
        case FI_PARAM_SIZE_T: return VarType::Size;
        default: return VarType::String;
    }
}

bool is_param_type(int type) { return type >= FI_PARAM_STRING && type <= FI_PARAM_SIZE_T; }

// Names that make an environment variable: letters, digits and '_' (what libfabric's own
// parameters use); a space or a '/' would define a variable no shell can set.
bool is_param_name(const char *name) {
    if (*name == '\0') return false;
    for (const char *c = name; *c != '\0'; ++c) {
        if (!isalnum(static_cast<unsigned char>(*c)) && *c != '_') return false;
    }
    return true;
}

fi_param_type to_param_type(VarType type) {
    switch (type) {
        case VarType::Int: return FI_PARAM_INT;
        case VarType::Bool: return FI_PARAM_BOOL;
        case VarType::Size: return FI_PARAM_SIZE_T;
        default: return FI_PARAM_STRING;
    }
}

// fi_param_get hands out char* values that must stay valid: keep each distinct string for
// the life of the process (a handful of parameters, read at setup time).
const char *intern(const std::string &value) {
    static std::mutex mutex;
    static std::deque<std::string> pool;
    std::lock_guard<std::mutex> lock(mutex);
    for (const std::string &s : pool) {
        if (s == value) return s.c_str();
    }
    pool.push_back(value);
    return pool.back().c_str();
}

int param_get(const fi_provider *provider, const char *param_name, void *value) {
    if (param_name == nullptr || value == nullptr) {
        UFI_LOG_WARN(ufi::log::Subsys::Core, "fi_param_get: {} is NULL",
                     param_name == nullptr ? "param_name" : "value");
        return -FI_EINVAL;
    }
    const std::string name = env_name(provider, param_name);
    const auto &reg = ufi::config::registry();
    if (!reg.is_defined(name)) {
        UFI_LOG_WARN(ufi::log::Subsys::Core, "fi_param_get: {} was never defined (fi_param_define)", name);
        return -FI_ENOENT;
    }
    const std::optional<std::string> raw = reg.raw_value(name);
    if (!raw) return -FI_ENODATA;
    switch (reg.type_of(name).value_or(VarType::String)) {
        case VarType::Bool: {
            auto b = ufi::config::parse_bool(*raw);
            if (!b) {
                UFI_LOG_WARN(ufi::log::Subsys::Core, "{}={} is not a boolean (0/1, on/off, true/false, yes/no)", name, *raw);
                return -FI_EINVAL;
            }
            *static_cast<int *>(value) = *b ? 1 : 0;
            return 0;
        }
        case VarType::Int: {
            auto i = ufi::config::parse_int(*raw);
            if (!i || *i < INT_MIN || *i > INT_MAX) {
                UFI_LOG_WARN(ufi::log::Subsys::Core, "{}={} is not an int", name, *raw);
                return -FI_EINVAL;
            }
            *static_cast<int *>(value) = static_cast<int>(*i);
            return 0;
        }
        case VarType::Size: {
            auto s = ufi::config::parse_size(*raw);
            if (!s) {
                UFI_LOG_WARN(ufi::log::Subsys::Core, "{}={} is not a size", name, *raw);
                return -FI_EINVAL;
            }
            *static_cast<size_t *>(value) = *s;
            return 0;
        }
        default:
            *static_cast<const char **>(value) = intern(*raw);
            return 0;
    }
}

void free_params(fi_param *params) {
    if (params == nullptr) return;
    for (fi_param *p = params; p->name != nullptr; ++p) {
        free(const_cast<char *>(p->name));
        free(const_cast<char *>(p->help_string));
        free(const_cast<char *>(p->value));
    }
    free(params);
}

int param_define(const fi_provider *provider, const char *param_name, int type,
                 const char *help) {
    const std::string name = env_name(provider, param_name);
    const auto &reg = ufi::config::registry();
    // A variable ufi already knows (its table, or an earlier definition) is defined again by
    // anyone who asks for the fi_param_type fi_param_get serves it as.
    if (const auto existing = reg.type_of(name)) {
        if (static_cast<int>(to_param_type(*existing)) == type) return 0;
        UFI_LOG_WARN(ufi::log::Subsys::Core, "fi_param_define: {} is already defined with another type", name);
        return -FI_EALREADY;
    }
    const int rc = ufi::config::registry_mutable().define_dynamic(name, to_var_type(type), help);
    if (rc == -EEXIST) {
        UFI_LOG_WARN(ufi::log::Subsys::Core, "fi_param_define: {} is already defined with another type", name);
        return -FI_EALREADY;
    }
    if (rc == -ENOMEM) return -FI_ENOMEM;
    return rc < 0 ? -FI_EINVAL : 0;
}

}  // namespace

UFI_EXPORT int fi_param_define(const struct fi_provider *provider, const char *param_name,
                               enum fi_param_type type_arg, const char *help_string_fmt, ...) {
    const int type = ufi::runtime::raw_enum(type_arg);
    if (param_name == nullptr || help_string_fmt == nullptr || *help_string_fmt == '\0') {
        UFI_LOG_WARN(ufi::log::Subsys::Core, "fi_param_define: {} is NULL{}",
                     param_name == nullptr ? "param_name" : "help_string_fmt",
                     param_name == nullptr ? "" : " or empty");
        return -FI_EINVAL;
    }
    if (!is_param_type(type)) {
        UFI_LOG_WARN(ufi::log::Subsys::Core, "fi_param_define({}): type {} is not an fi_param_type",
                     param_name, type);
        return -FI_EINVAL;
    }
    if (!is_param_name(param_name)) {
        UFI_LOG_WARN(ufi::log::Subsys::Core,
                     "fi_param_define: param_name \"{}\" must be letters, digits and '_' only",
                     param_name);
        return -FI_EINVAL;
    }
    char help[1024];
    va_list ap;
    va_start(ap, help_string_fmt);
    vsnprintf(help, sizeof(help), help_string_fmt, ap);
    va_end(ap);
    return ufi::api::guarded([&] { return param_define(provider, param_name, type, help); });
}

UFI_EXPORT int fi_param_get(struct fi_provider *provider, const char *param_name, void *value) {
    return ufi::api::guarded([&] { return param_get(provider, param_name, value); });
}

UFI_EXPORT int fi_getparams(struct fi_param **params, int *count) {
    if (params == nullptr || count == nullptr) return -FI_EINVAL;
    return ufi::api::guarded([&] {
        const auto &reg = ufi::config::registry();
        const auto vars = reg.list();
        auto *out = static_cast<fi_param *>(calloc(vars.size() + 1, sizeof(fi_param)));
        if (out == nullptr) return -FI_ENOMEM;
        size_t n = 0;
        for (const auto &v : vars) {
            fi_param &p = out[n];
            p.type = to_param_type(v.type);
            p.name = strdup(v.name.c_str());
            std::string help = v.doc;
            if (!v.default_value.empty()) help += " (default: " + v.default_value + ")";
            p.help_string = strdup(help.c_str());
            const auto raw = reg.raw_value(v.name);
            p.value = raw ? strdup(raw->c_str()) : nullptr;
            if (p.name == nullptr || p.help_string == nullptr || (raw && p.value == nullptr)) {
                free_params(out);
                return -FI_ENOMEM;
            }
            ++n;
        }
        *params = out;
        *count = static_cast<int>(n);
        return 0;
    });
}

UFI_EXPORT void fi_freeparams(struct fi_param *params) { free_params(params); }
