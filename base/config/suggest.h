// "Did you mean ...?" for mistyped UFI_* variables, as UCX does for UCX_*.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace ufi::config {

// Edit distance ignoring ASCII case: insertions, deletions, substitutions and transpositions
// of adjacent characters each cost 1 (optimal string alignment).
size_t edit_distance(std::string_view a, std::string_view b) noexcept;

// The candidate closest to `name` among those close enough to be a plausible typo: at most
// max(2, longer length / 5) edits. Empty when none is.
std::string_view closest_name(std::string_view name,
                              std::span<const std::string_view> candidates) noexcept;

}  // namespace ufi::config
