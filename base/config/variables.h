// The table of environment variables ufi knows (defined in variables.cpp, one line each).
#pragma once

#include <span>
#include <string_view>

#include "base/config/config.h"

namespace ufi::config {

struct VarDef {
    std::string_view name;  // environment variable
    VarType type;
    std::string_view default_value;  // must parse as `type`; empty = unset
    std::string_view doc;            // one line, for ufi_info -c
    std::string_view choices = {};   // Enum only: comma-separated, no blanks
};

std::span<const VarDef> variables() noexcept;

}  // namespace ufi::config
