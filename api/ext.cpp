// ufi_ext_*: ufi's diagnostic reports (include/ufi/ufi_ext.h) for ufi_info.
#include "api/export.h"
#include "runtime/diag/report.h"
#include "runtime/c_enum.h"

#include <ufi/ufi_ext.h>

#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace {

using ufi::runtime::diag::Report;
using ufi::runtime::diag::ValueKind;

// Owns the strings the C view points into; the C view is the first member so the handle
// the caller frees converts back.
struct ReportHolder {
    ufi_ext_report view{};
    Report data;
    std::vector<ufi_ext_record> records;
    std::vector<std::vector<ufi_ext_field>> fields;
};

ufi_ext_value_kind to_c(ValueKind k) {
    switch (k) {
        case ValueKind::Number: return UFI_EXT_NUMBER;
        case ValueKind::Bool: return UFI_EXT_BOOL;
        case ValueKind::List: return UFI_EXT_LIST;
        case ValueKind::String: default: return UFI_EXT_STRING;
    }
}

Report build(ufi_ext_topic topic) {
    namespace diag = ufi::runtime::diag;
    switch (topic) {
        case UFI_EXT_VERSIONS: return diag::versions_report();
        case UFI_EXT_TRANSPORTS: return diag::transports_report();
        case UFI_EXT_CONFIG: return diag::config_report();
        case UFI_EXT_TOPOLOGY: return diag::topology_report();
        case UFI_EXT_DOMAINS: return diag::domains_report();
        case UFI_EXT_GETINFO_EXPLAIN: return diag::getinfo_explain_report();
    }
    return {};
}

bool valid_topic(int topic) { return topic >= UFI_EXT_VERSIONS && topic <= UFI_EXT_GETINFO_EXPLAIN; }

}  // namespace

UFI_EXPORT int ufi_ext_get_report(enum ufi_ext_topic topic_arg, struct ufi_ext_report **report) {
    // Read as int: a C caller may pass any value (see runtime/c_enum.h).
    const int topic_value = ufi::runtime::raw_enum(topic_arg);
    if (report == nullptr || !valid_topic(topic_value)) return -FI_EINVAL;
    const auto topic = static_cast<ufi_ext_topic>(topic_value);
    return ufi::api::guarded([&] {
        auto *h = new ReportHolder;
        h->data = build(topic);
        h->fields.resize(h->data.size());
        h->records.resize(h->data.size());
        for (size_t i = 0; i < h->data.size(); ++i) {
            const auto &rec = h->data[i];
            for (const auto &f : rec.fields) {
                h->fields[i].push_back({f.key.c_str(), f.value.c_str(), to_c(f.kind)});
            }
            h->records[i] = {rec.kind.c_str(), rec.name.c_str(), h->fields[i].size(), h->fields[i].data()};
        }
        h->view.nrecords = h->records.size();
        h->view.records = h->records.data();
        *report = &h->view;
        return 0;
    });
}

UFI_EXPORT void ufi_ext_free_report(struct ufi_ext_report *report) {
    delete reinterpret_cast<ReportHolder *>(report);
}

UFI_EXPORT const char *ufi_ext_field_value(const struct ufi_ext_record *record, const char *key) {
    if (record == nullptr || key == nullptr) return nullptr;
    for (size_t i = 0; i < record->nfields; ++i) {
        if (strcmp(record->fields[i].key, key) == 0) return record->fields[i].value;
    }
    return nullptr;
}
