#include "base/config/suggest.h"

#include <algorithm>
#include <limits>

namespace ufi::config {

namespace {

char lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) noexcept {
    // Variable names are short; three rows of a small fixed buffer suffice.
    constexpr size_t max_len = 127;
    if (a.size() > max_len || b.size() > max_len) return std::numeric_limits<size_t>::max();
    size_t rows[3][max_len + 1];
    size_t *before = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1])) {
                cur[j] = std::min(cur[j], before[j - 2] + 1);
            }
        }
        std::swap(before, prev);
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string_view closest_name(std::string_view name,
                              std::span<const std::string_view> candidates) noexcept {
    std::string_view best;
    size_t best_distance = std::numeric_limits<size_t>::max();
    for (std::string_view candidate : candidates) {
        const size_t limit = std::max<size_t>(2, std::max(name.size(), candidate.size()) / 5);
        const size_t distance = edit_distance(name, candidate);
        if (distance <= limit && distance < best_distance) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best;
}

}  // namespace ufi::config
