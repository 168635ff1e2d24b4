#include "base/config/parse.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace ufi::config {

namespace {

char lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t';
}

// Parses all of `text` as an unsigned integer in `base`.
std::optional<uint64_t> parse_unsigned(std::string_view text, int base) noexcept {
    if (text.empty()) return std::nullopt;
    uint64_t value = 0;
    const char *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value, base);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    return value;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

std::string_view trim(std::string_view text) noexcept {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
}

std::optional<bool> parse_bool(std::string_view text) noexcept {
    text = trim(text);
    for (std::string_view yes : {"y", "yes", "1", "true", "on"}) {
        if (iequals(text, yes)) return true;
    }
    for (std::string_view no : {"n", "no", "0", "false", "off"}) {
        if (iequals(text, no)) return false;
    }
    return std::nullopt;
}

std::optional<int64_t> parse_int(std::string_view text) noexcept {
    text = trim(text);
    bool negative = false;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && lower(text[1]) == 'x') {
        base = 16;
        text.remove_prefix(2);
    }
    auto magnitude = parse_unsigned(text, base);
    if (!magnitude) return std::nullopt;
    constexpr uint64_t max_positive = std::numeric_limits<int64_t>::max();
    if (negative) {
        if (*magnitude > max_positive + 1) return std::nullopt;
        return static_cast<int64_t>(0 - *magnitude);  // two's complement; -2^63 included
    }
    if (*magnitude > max_positive) return std::nullopt;
    return static_cast<int64_t>(*magnitude);
}

std::optional<size_t> parse_size(std::string_view text) noexcept {
    text = trim(text);
    if (iequals(text, "inf") || iequals(text, "unlimited")) {
        return std::numeric_limits<size_t>::max();
    }
    size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    auto number = parse_unsigned(text.substr(0, digits), 10);
    if (!number) return std::nullopt;
    const std::string_view suffix = trim(text.substr(digits));
    struct Unit {
        std::string_view short_name, long_name;
        unsigned shift;
    };
    static constexpr Unit units[] = {
        {"", "b", 0}, {"k", "kb", 10}, {"m", "mb", 20}, {"g", "gb", 30}, {"t", "tb", 40},
    };
    for (const Unit &unit : units) {
        if (!iequals(suffix, unit.short_name) && !iequals(suffix, unit.long_name)) continue;
        const uint64_t limit = std::numeric_limits<size_t>::max() >> unit.shift;
        if (*number > limit) return std::nullopt;
        return static_cast<size_t>(*number << unit.shift);
    }
    return std::nullopt;
}

std::optional<double> parse_double(std::string_view text) noexcept {
    text = trim(text);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    if (text.empty()) return std::nullopt;
    double value = 0;
    const char *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
    return value;
}

std::vector<std::string> parse_list(std::string_view text) {
    std::vector<std::string> items;
    while (true) {
        const size_t comma = text.find(',');
        const std::string_view item = trim(text.substr(0, comma));
        if (!item.empty()) items.emplace_back(item);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return items;
}

std::optional<std::string_view> parse_enum(std::string_view text,
                                           std::string_view choices) noexcept {
    text = trim(text);
    while (true) {
        const size_t comma = choices.find(',');
        const std::string_view choice = choices.substr(0, comma);
        if (iequals(text, choice)) return choice;
        if (comma == std::string_view::npos) return std::nullopt;
        choices.remove_prefix(comma + 1);
    }
}

}  // namespace ufi::config
