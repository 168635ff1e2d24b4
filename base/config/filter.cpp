#include "base/config/filter.h"

#include "base/config/parse.h"

namespace ufi::config {

bool NameFilter::allows(std::string_view name) const noexcept {
    if (names.empty()) return true;
    for (const std::string &listed : names) {
        if (iequals(listed, name)) return !exclude;
    }
    return exclude;
}

NameFilter make_filter(const std::vector<std::string> &items) {
    NameFilter filter;
    filter.names.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        std::string_view name = items[i];
        if (i == 0 && !name.empty() && name.front() == '^') {
            filter.exclude = true;
            name = trim(name.substr(1));
        }
        if (!name.empty()) filter.names.emplace_back(name);
    }
    return filter;
}

NameFilter parse_filter(std::string_view text) {
    return make_filter(parse_list(text));
}

}  // namespace ufi::config
