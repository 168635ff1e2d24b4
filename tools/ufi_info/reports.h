// ufi_info's views of ufi's diagnostic reports (ufi_ext_get_report): text for people,
// JSON for scripts. Each returns 0 or a negative fi errno.
#pragma once

#include <nlohmann/json.hpp>
#include <ufi/ufi_ext.h>

#include <cstdio>
#include <string>
#include <vector>

namespace ufi_info {

// A report fetched from the library, freed on destruction.
class ReportHandle {
public:
    explicit ReportHandle(ufi_ext_topic topic);
    ~ReportHandle();
    ReportHandle(const ReportHandle &) = delete;
    ReportHandle &operator=(const ReportHandle &) = delete;
    int error() const { return error_; }
    size_t size() const { return report_ ? report_->nrecords : 0; }
    const ufi_ext_record &operator[](size_t i) const { return report_->records[i]; }

private:
    ufi_ext_report *report_ = nullptr;
    int error_ = 0;
};

// "" when absent.
std::string field(const ufi_ext_record &rec, const char *key);
std::vector<std::string> split_list(const std::string &value);

// JSON documents keep their members in the order written.
using Json = nlohmann::ordered_json;

// A report as a JSON array of {"kind", "name", <fields with typed values>}. Keys are unique
// (a JSON parser keeps only the last of two): a field that repeats a key already written is
// left out, with a note on stderr.
Json report_json(const ReportHandle &report);

int print_versions(FILE *out);
int print_transports(FILE *out);
int print_config(FILE *out);
int print_topology(FILE *out);
int print_summary(FILE *out);

}  // namespace ufi_info
