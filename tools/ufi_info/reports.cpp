#include "tools/ufi_info/reports.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

namespace ufi_info {

ReportHandle::ReportHandle(ufi_ext_topic topic) { error_ = ufi_ext_get_report(topic, &report_); }

ReportHandle::~ReportHandle() {
    if (report_ != nullptr) ufi_ext_free_report(report_);
}

std::string field(const ufi_ext_record &rec, const char *key) {
    const char *v = ufi_ext_field_value(&rec, key);
    return v ? v : "";
}

std::vector<std::string> split_list(const std::string &value) {
    std::vector<std::string> items;
    size_t pos = 0;
    while (pos < value.size()) {
        size_t next = value.find(", ", pos);
        if (next == std::string::npos) next = value.size();
        if (next > pos) items.push_back(value.substr(pos, next - pos));
        pos = next + 2;
    }
    return items;
}

namespace {

// A typed field value: numbers and booleans as JSON literals, lists as arrays of strings.
Json field_json(const ufi_ext_field &fld) {
    switch (fld.kind) {
        case UFI_EXT_NUMBER: {
            Json n = Json::parse(fld.value, nullptr, /*allow_exceptions=*/false);
            return n.is_number() ? n : Json(fld.value);
        }
        case UFI_EXT_BOOL:
            return Json(strcmp(fld.value, "true") == 0);
        case UFI_EXT_LIST:
            return Json(split_list(fld.value));
        default:
            return Json(fld.value);
    }
}

}  // namespace

Json report_json(const ReportHandle &report) {
    Json records = Json::array();
    for (size_t i = 0; i < report.size(); ++i) {
        const ufi_ext_record &rec = report[i];
        Json obj = Json::object();
        obj["kind"] = rec.kind;
        obj["name"] = rec.name;
        for (size_t f = 0; f < rec.nfields; ++f) {
            const ufi_ext_field &fld = rec.fields[f];
            if (obj.contains(fld.key)) {
                fprintf(stderr, "ufi_info: %s record %s repeats the key \"%s\": left out of the JSON\n",
                        rec.kind, rec.name, fld.key);
                continue;
            }
            obj[fld.key] = field_json(fld);
        }
        records.push_back(std::move(obj));
    }
    return records;
}

namespace {

int report_error(FILE *out, const ReportHandle &r) {
    fprintf(out, "ufi_info: cannot read the report: %s\n", fi_strerror(-r.error()));
    return r.error();
}

// "#   key: value" lines with keys right-aligned, ucx_info style.
void print_fields(FILE *out, const ufi_ext_record &rec, int width, const char *skip[] = nullptr) {
    for (size_t f = 0; f < rec.nfields; ++f) {
        const ufi_ext_field &fld = rec.fields[f];
        bool skipped = false;
        for (const char **s = skip; s && *s; ++s) skipped |= strcmp(*s, fld.key) == 0;
        if (skipped) continue;
        fprintf(out, "#  %*s: %s\n", width, fld.key, fld.value[0] ? fld.value : "-");
    }
}

}  // namespace

int print_versions(FILE *out) {
    ReportHandle r(UFI_EXT_VERSIONS);
    if (r.error()) return report_error(out, r);
    for (size_t i = 0; i < r.size(); ++i) {
        const auto &rec = r[i];
        std::string name = rec.name;
        if (name == "libfabric_api") name = "libfabric API";
        fprintf(out, "%-14s %s", name.c_str(), field(rec, "version").c_str());
        const std::string prov = field(rec, "provider_version");
        if (!prov.empty()) fprintf(out, " (provider version %s)", prov.c_str());
        fprintf(out, "\n");
    }
    return 0;
}

int print_transports(FILE *out) {
    ReportHandle r(UFI_EXT_TRANSPORTS);
    if (r.error()) return report_error(out, r);
    // Memory domains with their transports beneath, as ucx_info -d prints them.
    for (size_t i = 0; i < r.size(); ++i) {
        const auto &md = r[i];
        if (strcmp(md.kind, "md") != 0) continue;
        fprintf(out, "#\n# Memory domain: %s\n", md.name);
        const char *skip_md[] = {nullptr};
        print_fields(out, md, 22, skip_md);
        for (size_t j = 0; j < r.size(); ++j) {
            const auto &tl = r[j];
            if (strcmp(tl.kind, "transport") != 0 || field(tl, "md") != md.name) continue;
            fprintf(out, "#\n#      Transport: %s\n#         Device: %s\n", field(tl, "transport").c_str(),
                    field(tl, "device").c_str());
            const char *skip_tl[] = {"transport", "device", "md", nullptr};
            print_fields(out, tl, 22, skip_tl);
        }
    }
    bool header = false;
    for (size_t i = 0; i < r.size(); ++i) {
        const auto &rec = r[i];
        if (strcmp(rec.kind, "component") == 0) {
            if (!header) fprintf(out, "#\n# Components\n");
            header = true;
            fprintf(out, "#  %22s: mds [%s]%s%s\n", rec.name, field(rec, "mds").c_str(),
                    field(rec, "flags").empty() ? "" : " flags ", field(rec, "flags").c_str());
            if (field(rec, "cm_usable") == "false") {
                fprintf(out, "#  %22s  connection manager unusable: %s\n", "", field(rec, "cm_error").c_str());
            }
        } else if (strcmp(rec.kind, "problem") == 0) {
            fprintf(out, "# problem: %s\n", field(rec, "text").c_str());
        }
    }
    fprintf(out, "#\n");
    return 0;
}

int print_config(FILE *out) {
    ReportHandle r(UFI_EXT_CONFIG);
    if (r.error()) return report_error(out, r);
    for (size_t i = 0; i < r.size(); ++i) {
        const auto &rec = r[i];
        const std::string def = field(rec, "default");
        fprintf(out, "#\n# %s\n#   %s; default: %s%s%s\n", field(rec, "doc").c_str(),
                field(rec, "syntax").empty() ? field(rec, "type").c_str() : field(rec, "syntax").c_str(),
                def.empty() ? "(unset)" : def.c_str(), field(rec, "set") == "true" ? "; set in the environment" : "",
                field(rec, "dynamic") == "true" ? "; defined at run time" : "");
        fprintf(out, "%s=%s\n", rec.name, field(rec, "value").c_str());
    }
    return 0;
}

int print_topology(FILE *out) {
    ReportHandle r(UFI_EXT_TOPOLOGY);
    if (r.error()) return report_error(out, r);
    for (size_t i = 0; i < r.size(); ++i) {
        const auto &rec = r[i];
        if (strcmp(rec.kind, "binding") != 0) continue;
        if (!field(rec, "error").empty()) {
            fprintf(out, "# hwloc topology unavailable: %s\n", field(rec, "error").c_str());
        } else {
            fprintf(out, "# Process bound to CPUs %s (%s package(s), %s NUMA node(s))\n",
                    field(rec, "cpus").c_str(), field(rec, "packages").c_str(),
                    field(rec, "numa_nodes").c_str());
        }
    }
    fprintf(out, "#\n# %-12s %-12s %-14s %-5s %-8s %-12s %s\n", "I/O device", "kind", "PCI", "NUMA",
            "package", "near CPUs", "distance");
    size_t ndev = 0;
    for (size_t i = 0; i < r.size(); ++i) {
        const auto &rec = r[i];
        if (strcmp(rec.kind, "device") != 0) continue;
        auto dash = [](const std::string &s) { return s.empty() ? std::string("-") : s; };
        fprintf(out, "  %-12s %-12s %-14s %-5s %-8s %-12s %s\n", rec.name, field(rec, "device_kind").c_str(),
                dash(field(rec, "pci_bus_id")).c_str(), dash(field(rec, "numa_node")).c_str(),
                dash(field(rec, "package")).c_str(), dash(field(rec, "near_cpus")).c_str(),
                field(rec, "distance").c_str());
        ++ndev;
    }
    if (ndev == 0) fprintf(out, "  (no network, RDMA or GPU device found by hwloc)\n");
    fprintf(out, "#\n# UCT network devices (distance in hwloc hops from the binding)\n");
    for (size_t i = 0; i < r.size(); ++i) {
        const auto &rec = r[i];
        if (strcmp(rec.kind, "uct_device") != 0) continue;
        fprintf(out, "  %-12s distance %-8s%s\n", rec.name, field(rec, "distance").c_str(),
                field(rec, "loopback") == "true" ? " (loopback)" : "");
    }
    return 0;
}

int print_summary(FILE *out) {
    ReportHandle v(UFI_EXT_VERSIONS);
    ReportHandle t(UFI_EXT_TRANSPORTS);
    ReportHandle d(UFI_EXT_DOMAINS);
    if (v.error()) return report_error(out, v);
    if (t.error()) return report_error(out, t);
    if (d.error()) return report_error(out, d);
    std::string ufi, api, ucx;
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string name = v[i].name;
        if (name == "ufi") ufi = field(v[i], "version");
        if (name == "libfabric_api") api = field(v[i], "version");
        if (name == "ucx") ucx = field(v[i], "version");
    }
    fprintf(out, "ufi %s (libfabric API %s, UCX %s)\n", ufi.c_str(), api.c_str(), ucx.c_str());
    std::string usable, unusable;
    for (size_t i = 0; i < t.size(); ++i) {
        if (strcmp(t[i].kind, "transport") != 0) continue;
        std::string &dst = field(t[i], "usable") == "true" ? usable : unusable;
        dst += (dst.empty() ? "" : " ") + std::string(t[i].name);
    }
    fprintf(out, "transports: %s\n", usable.empty() ? "(none)" : usable.c_str());
    if (!unusable.empty()) fprintf(out, "unusable:   %s\n", unusable.c_str());
    fprintf(out, "domains, in fi_getinfo order:\n");
    size_t n = 0;
    for (size_t i = 0; i < d.size(); ++i) {
        const auto &rec = d[i];
        if (strcmp(rec.kind, "domain") != 0) continue;
        std::string reach;
        if (field(rec, "reaches_local") == "true") reach = "same-host";
        if (field(rec, "reaches_remote") == "true") reach += reach.empty() ? "remote" : "+remote";
        fprintf(out, "  %zu. %-10s %-40s reaches %-16s inject_size %s\n", ++n, rec.name,
                field(rec, "transports").c_str(), reach.c_str(), field(rec, "inject_size").c_str());
    }
    if (n == 0) fprintf(out, "  (none: no usable transport; see ufi_info -d)\n");
    return 0;
}

}  // namespace ufi_info
