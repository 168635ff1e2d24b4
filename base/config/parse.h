// Value parsers for the configuration registry, public so that fi_param_get and tools
// parse exactly as the registry does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ufi::config {

// Strips spaces and tabs at both ends.
std::string_view trim(std::string_view text) noexcept;

// y/n, yes/no, 1/0, true/false, on/off; any case; surrounding blanks ignored.
std::optional<bool> parse_bool(std::string_view text) noexcept;

// Signed 64-bit decimal, or hexadecimal with 0x; optional sign. A leading 0 is decimal.
std::optional<int64_t> parse_int(std::string_view text) noexcept;

// Bytes: an unsigned integer with an optional suffix B, K/KB, M/MB, G/GB, T/TB (any case,
// multiples of 1024), or inf/unlimited (SIZE_MAX). Overflow is an error.
std::optional<size_t> parse_size(std::string_view text) noexcept;

// A finite floating-point number.
std::optional<double> parse_double(std::string_view text) noexcept;

// Comma-separated items, each trimmed; empty items dropped. A leading '^' is kept as part
// of the first item (see make_filter()). May throw std::bad_alloc.
std::vector<std::string> parse_list(std::string_view text);

// The choice in `choices` (comma-separated, no blanks) equal to `text` ignoring case and
// surrounding blanks; a view into `choices`.
std::optional<std::string_view> parse_enum(std::string_view text,
                                           std::string_view choices) noexcept;

// Case-insensitive ASCII comparison.
bool iequals(std::string_view a, std::string_view b) noexcept;

}  // namespace ufi::config
