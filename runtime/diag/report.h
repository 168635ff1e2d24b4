// Diagnostic reports (what ufi_info prints): plain records of key/value fields built from
// discovery, topology, selection, the config registry and getinfo's explanations. The api
// layer hands them out through ufi_ext_get_report (include/ufi/ufi_ext.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ufi::runtime::diag {

enum class ValueKind { String, Number, Bool, List };

struct Field {
    std::string key;
    std::string value;
    ValueKind kind = ValueKind::String;
};

struct Record {
    std::string kind;  // "version", "component", "md", "transport", "variable", ...
    std::string name;
    std::vector<Field> fields;

    Record &str(std::string key, std::string value);
    Record &num(std::string key, uint64_t value);
    Record &num(std::string key, double value);
    Record &boolean(std::string key, bool value);
    Record &list(std::string key, const std::vector<std::string> &items);
};

using Report = std::vector<Record>;

Report versions_report();
Report transports_report();
Report config_report();
Report topology_report();
Report domains_report();
Report getinfo_explain_report();

}  // namespace ufi::runtime::diag
