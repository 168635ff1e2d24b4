// Registry: the environment snapshot parsed against the table, plus run-time definitions.
#include <cassert>
#include <cerrno>
#include <functional>
#include <map>
#include <mutex>
#include <new>

#include "base/config/config.h"
#include "base/config/parse.h"
#include "base/config/suggest.h"
#include "base/config/variables.h"

namespace ufi::config {

namespace {

// A variable with its environment value, parsed once.
struct Entry {
    std::string name;
    VarType type = VarType::String;
    std::string default_value;
    std::string doc;
    std::string choices;  // Enum only
    bool is_dynamic = false;
    std::optional<std::string> raw;  // the environment's value, if set
    std::string value;               // in effect, as a string

    bool b = false;
    int64_t i = 0;
    size_t size = 0;
    double d = 0;
    std::string s;  // String, Enum
    std::vector<std::string> list;
};

// Parses `text` into `entry`'s typed fields; leaves them untouched and returns false if
// `text` is not a valid value.
bool assign(Entry &entry, std::string_view text) {
    switch (entry.type) {
        case VarType::Bool: {
            auto v = parse_bool(text);
            if (!v) return false;
            entry.b = *v;
            break;
        }
        case VarType::Int: {
            auto v = parse_int(text);
            if (!v) return false;
            entry.i = *v;
            break;
        }
        case VarType::Size: {
            auto v = parse_size(text);
            if (!v) return false;
            entry.size = *v;
            break;
        }
        case VarType::Double: {
            auto v = parse_double(text);
            if (!v) return false;
            entry.d = *v;
            break;
        }
        case VarType::String:
            entry.s = text;
            break;
        case VarType::List:
            entry.list = parse_list(text);
            break;
        case VarType::Enum: {
            // Empty means "not chosen", valid only where that is the default.
            if (trim(text).empty() && entry.default_value.empty()) {
                entry.s.clear();
                entry.value.clear();
                return true;
            }
            auto v = parse_enum(text, entry.choices);
            if (!v) return false;
            entry.s = *v;
            entry.value = *v;
            return true;
        }
    }
    entry.value = text;
    return true;
}

std::string syntax_of(VarType type, std::string_view choices) {
    switch (type) {
        case VarType::Bool:
            return "y|n (also yes|no, 1|0, true|false, on|off)";
        case VarType::Int:
            return "integer (decimal, or hexadecimal with 0x)";
        case VarType::Size:
            return "bytes: <n>[K|M|G|T][B] (multiples of 1024) or inf";
        case VarType::Double:
            return "number";
        case VarType::String:
            return "string";
        case VarType::List:
            return "comma-separated list";
        case VarType::Enum: {
            std::string text = "one of ";
            for (char c : choices) text += c == ',' ? '|' : c;
            return text;
        }
    }
    return {};
}

std::string describe_default(const Entry &entry) {
    return entry.default_value.empty() ? std::string("(unset)") : "'" + entry.default_value + "'";
}

// The zero values returned for programming errors.
const std::string empty_string;
const std::vector<std::string> empty_list;

}  // namespace

std::string_view type_name(VarType type) noexcept {
    switch (type) {
        case VarType::Bool:
            return "bool";
        case VarType::Int:
            return "int";
        case VarType::Size:
            return "size";
        case VarType::Double:
            return "double";
        case VarType::String:
            return "string";
        case VarType::List:
            return "list";
        case VarType::Enum:
            return "enum";
    }
    return "unknown";
}

struct Registry::State {
    std::map<std::string, std::string, std::less<>> env;  // snapshot, first occurrence wins
    std::vector<Entry> fixed;                             // table order; immutable
    std::map<std::string_view, size_t, std::less<>> fixed_index;
    std::vector<std::string> diagnostics;  // immutable after construction

    mutable std::mutex dynamic_mutex;  // guards the two below
    std::vector<std::unique_ptr<Entry>> dynamic;
    std::map<std::string_view, const Entry *, std::less<>> dynamic_index;

    std::optional<std::string> env_value(std::string_view name) const {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
    }

    const Entry *find(std::string_view name) const noexcept {
        if (auto it = fixed_index.find(name); it != fixed_index.end()) return &fixed[it->second];
        std::lock_guard lock(dynamic_mutex);
        auto it = dynamic_index.find(name);
        return it == dynamic_index.end() ? nullptr : it->second;
    }

    // The entry for a typed getter; nullptr (after a debug assertion) if unknown or if the
    // getter does not fit its type.
    const Entry *find_typed(std::string_view name, VarType type) const noexcept {
        const Entry *entry = find(name);
        assert(entry != nullptr && "unknown configuration variable");
        if (entry == nullptr) return nullptr;
        const bool fits =
            entry->type == type || (type == VarType::String && entry->type == VarType::Enum);
        assert(fits && "configuration variable read with a getter of another type");
        return fits ? entry : nullptr;
    }

    void add_fixed(const VarDef &def) {
        Entry entry;
        entry.name = def.name;
        entry.type = def.type;
        entry.default_value = def.default_value;
        entry.doc = def.doc;
        entry.choices = def.choices;
        [[maybe_unused]] const bool default_ok = assign(entry, entry.default_value);
        assert(default_ok && "a default in variables.cpp does not parse as its type");
        entry.raw = env_value(entry.name);
        if (entry.raw && !assign(entry, *entry.raw)) {
            diagnostics.push_back("invalid value '" + *entry.raw + "' for " + entry.name +
                                  ": expected " + syntax_of(entry.type, entry.choices) +
                                  "; using the default " + describe_default(entry));
        }
        fixed.push_back(std::move(entry));
    }

    void check_unknown(std::string_view name, std::string_view value) {
        if (!name.starts_with("UFI_") || fixed_index.contains(name)) return;
        std::vector<std::string_view> known;
        known.reserve(fixed.size());
        for (const Entry &entry : fixed) known.emplace_back(entry.name);
        const std::string_view closest = closest_name(name, known);
        std::string text = "unknown environment variable ";
        text.append(name).append("=").append(value);
        if (closest.empty()) {
            text += " (no similar variable)";
        } else {
            text.append("; did you mean ").append(closest).append("?");
        }
        diagnostics.push_back(std::move(text));
    }
};

Registry::Registry(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
Registry::Registry(Registry &&) noexcept = default;
Registry &Registry::operator=(Registry &&) noexcept = default;
Registry::~Registry() = default;

Registry Registry::from_environment(std::span<const char *const> env) {
    return from_environment(env, variables());
}

Registry Registry::from_environment(std::span<const char *const> env,
                                    std::span<const VarDef> table) {
    auto state = std::make_unique<State>();
    std::vector<std::pair<std::string_view, std::string_view>> assignments;
    for (const char *item : env) {
        if (item == nullptr) break;
        const std::string_view text = item;
        const size_t eq = text.find('=');
        if (eq == std::string_view::npos || eq == 0) continue;
        // The first occurrence of a name wins, as for getenv.
        if (state->env.emplace(text.substr(0, eq), text.substr(eq + 1)).second) {
            assignments.emplace_back(text.substr(0, eq), text.substr(eq + 1));
        }
    }
    state->fixed.reserve(table.size());  // fixed_index points into the entries' names
    for (const VarDef &def : table) state->add_fixed(def);
    for (size_t i = 0; i < state->fixed.size(); ++i) {
        state->fixed_index.emplace(state->fixed[i].name, i);
    }
    for (const auto &[name, value] : assignments) state->check_unknown(name, value);
    return Registry(std::move(state));
}

Registry Registry::from_environ(const char *const *envp) {
    size_t count = 0;
    while (envp != nullptr && envp[count] != nullptr) ++count;
    return from_environment(std::span<const char *const>(envp, count));
}

bool Registry::get_bool(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find_typed(name, VarType::Bool) : nullptr;
    return entry ? entry->b : false;
}

int64_t Registry::get_int(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find_typed(name, VarType::Int) : nullptr;
    return entry ? entry->i : 0;
}

size_t Registry::get_size(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find_typed(name, VarType::Size) : nullptr;
    return entry ? entry->size : 0;
}

double Registry::get_double(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find_typed(name, VarType::Double) : nullptr;
    return entry ? entry->d : 0.0;
}

const std::string &Registry::get_string(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find_typed(name, VarType::String) : nullptr;
    return entry ? entry->s : empty_string;
}

const std::vector<std::string> &Registry::get_list(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find_typed(name, VarType::List) : nullptr;
    return entry ? entry->list : empty_list;
}

bool Registry::is_defined(std::string_view name) const noexcept {
    return state_ && state_->find(name) != nullptr;
}

std::optional<VarType> Registry::type_of(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find(name) : nullptr;
    return entry ? std::optional<VarType>(entry->type) : std::nullopt;
}

bool Registry::is_set(std::string_view name) const noexcept {
    const Entry *entry = state_ ? state_->find(name) : nullptr;
    return entry != nullptr && entry->raw.has_value();
}

std::optional<std::string> Registry::raw_value(std::string_view name) const noexcept {
    try {
        const Entry *entry = state_ ? state_->find(name) : nullptr;
        return entry ? entry->raw : std::nullopt;
    } catch (const std::bad_alloc &) {
        return std::nullopt;
    }
}

std::vector<VarInfo> Registry::list() const noexcept {
    if (!state_) return {};
    try {
        auto info = [](const Entry &entry) {
            return VarInfo{.name = entry.name,
                           .type_name = std::string(type_name(entry.type)),
                           .default_value = entry.default_value,
                           .value = entry.value,
                           .doc = entry.doc,
                           .is_set = entry.raw.has_value(),
                           .is_dynamic = entry.is_dynamic,
                           .type = entry.type,
                           .syntax = syntax_of(entry.type, entry.choices)};
        };
        std::vector<VarInfo> result;
        for (const Entry &entry : state_->fixed) result.push_back(info(entry));
        std::lock_guard lock(state_->dynamic_mutex);
        for (const auto &entry : state_->dynamic) result.push_back(info(*entry));
        return result;
    } catch (const std::bad_alloc &) {
        return {};
    }
}

const std::vector<std::string> &Registry::diagnostics() const noexcept {
    return state_ ? state_->diagnostics : empty_list;
}

int Registry::define_dynamic(std::string name, VarType type, std::string doc) noexcept {
    if (!state_ || name.empty() || name.find('=') != std::string::npos || type == VarType::Enum) {
        return -EINVAL;
    }
    State &state = *state_;
    if (auto it = state.fixed_index.find(name); it != state.fixed_index.end()) {
        return state.fixed[it->second].type == type ? 0 : -EEXIST;
    }
    try {
        std::lock_guard lock(state.dynamic_mutex);
        if (auto it = state.dynamic_index.find(name); it != state.dynamic_index.end()) {
            return it->second->type == type ? 0 : -EEXIST;
        }
        auto entry = std::make_unique<Entry>();
        entry->name = std::move(name);
        entry->type = type;
        entry->doc = std::move(doc);
        entry->is_dynamic = true;
        entry->raw = state.env_value(entry->name);
        if (entry->raw && !assign(*entry, *entry->raw)) entry->value = *entry->raw;
        state.dynamic.reserve(state.dynamic.size() + 1);
        state.dynamic_index.emplace(entry->name, entry.get());
        state.dynamic.push_back(std::move(entry));  // cannot throw: reserved
        return 0;
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    }
}

}  // namespace ufi::config
