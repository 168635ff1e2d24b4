// The registry of every environment variable ufi reads (UFI_* and the FI_* ones libfabric
// users expect): one typed, documented entry per variable, parsed once. Nothing else in ufi
// reads the environment; `ufi_info -c` prints Registry::list().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ufi::config {

enum class VarType { Bool, Int, Size, Double, String, List, Enum };

struct VarDef;  // a line of the table: variables.h

// "bool", "int", "size", "double", "string", "list", "enum".
std::string_view type_name(VarType type) noexcept;

// One variable as `ufi_info -c` shows it.
struct VarInfo {
    std::string name;           // the environment variable, e.g. "UFI_TLS"
    std::string type_name;      // see type_name()
    std::string default_value;  // as a string; empty = unset
    std::string value;          // the value in effect (the default when unset or invalid)
    std::string doc;            // one line
    bool is_set = false;        // the environment sets it (even to a bad value)
    bool is_dynamic = false;    // defined at run time (fi_param_define)
    VarType type = VarType::String;
    std::string syntax;  // what is accepted, e.g. "one of off|error|warn|info|debug|trace"
};

// A snapshot of the environment, parsed against the variable table (variables.cpp) plus
// variables defined at run time. Values are read once, at construction.
//
// Parsing rules (parse.h): bool y/n/yes/no/1/0/true/false/on/off; int decimal or 0x hex;
// size <n>[K|M|G|T][B] (binary multiples, any case) or inf/unlimited (= SIZE_MAX); double;
// enum one of the entry's choices (any case; stored as the choice); list: comma-separated,
// items trimmed, empty items dropped, a leading '^' stays on the first item ("^tcp,ib" ->
// {"^tcp", "ib"}; make_filter() in filter.h turns that into an exclusion). A bad value gives
// a diagnostic and the default. Set UFI_* variables that the table does not know give a
// diagnostic naming the closest known one; unknown FI_* variables are left alone.
//
// Asking for an unknown name, or with the wrong getter, is a programming error: it asserts
// in debug builds and returns the type's zero value. get_string() serves String and Enum.
// Getters and list() are safe to call while another thread calls define_dynamic().
class Registry {
  public:
    // Build from an environment array ("NAME=VALUE" strings, like environ); stops at the
    // first nullptr, if any. The first occurrence of a name wins (as getenv). Never reads
    // global state. May throw std::bad_alloc.
    static Registry from_environment(std::span<const char *const> env);
    // Same, against another table than variables(): for tests.
    static Registry from_environment(std::span<const char *const> env,
                                     std::span<const VarDef> table);
    // Same, from a NULL-terminated array (environ, or envp of main).
    static Registry from_environ(const char *const *envp);

    Registry(Registry &&) noexcept;
    Registry &operator=(Registry &&) noexcept;
    ~Registry();

    bool get_bool(std::string_view name) const noexcept;
    int64_t get_int(std::string_view name) const noexcept;
    size_t get_size(std::string_view name) const noexcept;
    double get_double(std::string_view name) const noexcept;
    const std::string &get_string(std::string_view name) const noexcept;  // String or Enum
    const std::vector<std::string> &get_list(std::string_view name) const noexcept;

    // The variable is known (from the table or defined at run time).
    bool is_defined(std::string_view name) const noexcept;
    // Its type; nullopt for an unknown name.
    std::optional<VarType> type_of(std::string_view name) const noexcept;
    // The environment sets it (even if the value was bad). False for unknown names.
    bool is_set(std::string_view name) const noexcept;
    // The environment's value of a known or run-time defined variable; nullopt when unset or
    // unknown. Not validated: a bad value is returned as is.
    std::optional<std::string> raw_value(std::string_view name) const noexcept;

    // Every variable, table order first, then run-time definitions in definition order.
    // Empty only if memory runs out.
    std::vector<VarInfo> list() const noexcept;

    // Warnings produced while parsing the environment (bad values, unknown UFI_* names), in
    // environment order for the latter. Fixed at construction.
    const std::vector<std::string> &diagnostics() const noexcept;

    // libfabric's fi_param_define: a variable known by its full environment name (e.g.
    // "FI_UFI_FOO"), read from the snapshot taken at construction. Types: Bool, Int, Size,
    // Double, String, List (Enum needs choices: -EINVAL). Thread-safe. The default is empty;
    // a bad value gives the zero value from the typed getters (no diagnostic: the caller of
    // fi_param_get judges raw_value()).
    // Returns 0 (also when the same name is already defined with the same type),
    // -EEXIST when it is defined with another type (in the table or at run time),
    // -EINVAL for an empty name, a name with '=' or type Enum, -ENOMEM.
    int define_dynamic(std::string name, VarType type, std::string doc) noexcept;

  private:
    struct State;
    explicit Registry(std::unique_ptr<State> state) noexcept;
    std::unique_ptr<State> state_;
};

// The process-wide registry, built from the real environment on first use (thread-safe).
// Every call also runs the first-use hook (below): the log installs ufi::log::init() there,
// which prints this registry's diagnostics once as WARN lines.
const Registry &registry() noexcept;
// The same object, for define_dynamic() (fi_param_define).
Registry &registry_mutable() noexcept;

namespace detail {
// The process-wide registry without running the first-use hook: for ufi::log::init() only.
Registry &raw_registry() noexcept;

// A function registry() and registry_mutable() call each time (it must be idempotent and
// cheap after its first run). The log sets it when it loads, so that the configuration layer
// needs nothing of the log above it; until then (code running in another library's static
// constructors) the log prints the diagnostics on its own first use instead.
using FirstUseHook = void (*)() noexcept;
void set_first_use_hook(FirstUseHook hook) noexcept;
}  // namespace detail

}  // namespace ufi::config
