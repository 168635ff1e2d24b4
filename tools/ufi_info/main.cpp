// ufi_info: diagnose a node, modelled on ucx_info and fi_info. Uses only libfabric's C API
// and ufi's small extension (ufi/ufi_ext.h), as any user could.
#include "tools/ufi_info/fi_list.h"
#include "tools/ufi_info/reports.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

void usage(FILE *out) {
    fprintf(out,
            "Usage: ufi_info [OPTIONS]\n"
            "Without options: a summary (versions, transports, the domains fi_getinfo offers).\n"
            "  -v, --version        ufi, libfabric API, UCX and hwloc versions\n"
            "  -d, --devices        UCT memory domains, transports and devices: capabilities,\n"
            "                       limits and performance estimates (like ucx_info -d)\n"
            "  -c, --config         every environment variable ufi reads, with value, default\n"
            "                       and doc (like ucx_info -c)\n"
            "  -t, --topology       I/O devices and their distance to this process (hwloc)\n"
            "  -f, --fi-info        the fi_info list (like fi_info), with hints:\n"
            "        -p, --provider PROV     provider name (e.g. ufi)\n"
            "        -e, --ep-type EPTYPE    FI_EP_RDM, FI_EP_MSG, FI_EP_DGRAM\n"
            "        -c, --caps CAP1|CAP2    capabilities, e.g. FI_MSG|FI_TAGGED\n"
            "        -l, --long              every attribute (fi_tostr), like fi_info -v\n"
            "      When fi_getinfo finds nothing, ufi says which hint excluded which domain.\n"
            "  --json               JSON output for the chosen reports\n"
            "  -h, --help           this text\n");
}

struct Options {
    bool version = false, devices = false, config = false, topology = false, fi_info = false;
    bool json = false;
    ufi_info::FiListOptions fi;
};

// -c means --config, except with -f, where it takes the capabilities (as fi_info's -c).
bool parse(int argc, char **argv, Options &o) {
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--fi-info") == 0) o.fi_info = true;
    }
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](std::string &dst) {
            if (i + 1 >= argc || argv[i + 1][0] == '-') {
                fprintf(stderr, "ufi_info: %s needs a value\n", a.c_str());
                return false;
            }
            dst = argv[++i];
            return true;
        };
        if (a == "-v" || a == "--version") o.version = true;
        else if (a == "-d" || a == "--devices") o.devices = true;
        else if (a == "-t" || a == "--topology") o.topology = true;
        else if (a == "-f" || a == "--fi-info") o.fi_info = true;
        else if (a == "--json") o.json = true;
        else if (a == "--config") o.config = true;
        else if (a == "-c" && !o.fi_info) o.config = true;
        else if (a == "-c" || a == "--caps") { if (!value(o.fi.caps)) return false; }
        else if (a == "-p" || a == "--provider") { if (!value(o.fi.provider)) return false; }
        else if (a == "-e" || a == "--ep-type") { if (!value(o.fi.ep_type)) return false; }
        else if (a == "-l" || a == "--long") o.fi.long_format = true;
        else if (a == "-h" || a == "--help") { usage(stdout); exit(0); }
        else {
            fprintf(stderr, "ufi_info: unknown option '%s'\n", a.c_str());
            return false;
        }
    }
    if (!o.fi_info && (!o.fi.caps.empty() || !o.fi.provider.empty() || !o.fi.ep_type.empty() ||
                       o.fi.long_format)) {
        fprintf(stderr, "ufi_info: -p, -e, --caps and -l refine -f\n");
        return false;
    }
    // Check the hint names now, before any output (JSON must stay whole).
    uint64_t caps = 0;
    int ep_type = 0;
    if (!o.fi.caps.empty() && !ufi_info::parse_caps(o.fi.caps, caps)) return false;
    if (!o.fi.ep_type.empty() && !ufi_info::parse_ep_type(o.fi.ep_type, ep_type)) return false;
    return true;
}

int run_json(const Options &o) {
    using namespace ufi_info;
    Json doc = Json::object();
    int status = 0;
    auto report = [&](const char *key, ufi_ext_topic topic) {
        ReportHandle r(topic);
        if (r.error()) {
            doc[key] = nullptr;
            status = 1;
        } else {
            doc[key] = report_json(r);
        }
    };
    const bool summary = !(o.version || o.devices || o.config || o.topology || o.fi_info);
    if (o.version || summary) report("versions", UFI_EXT_VERSIONS);
    if (o.devices) report("transports", UFI_EXT_TRANSPORTS);
    if (o.config) report("config", UFI_EXT_CONFIG);
    if (o.topology) report("topology", UFI_EXT_TOPOLOGY);
    if (summary) report("domains", UFI_EXT_DOMAINS);
    if (o.fi_info) {
        Json list;
        const int rc = fi_list_json(o.fi, list);
        if (rc == 2) return 2;
        doc["fi_info"] = std::move(list);
        status = status ? status : rc;
    }
    // Whole or nothing: the document is printed once it is complete. Bytes that are not UTF-8
    // (a device name, say) are replaced rather than making the output invalid.
    const std::string text = doc.dump(-1, ' ', false, Json::error_handler_t::replace);
    fprintf(stdout, "%s\n", text.c_str());
    return status;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        usage(stderr);
        return 2;
    }
    if (o.json) {
        try {
            return run_json(o);
        } catch (const std::exception &e) {
            fprintf(stderr, "ufi_info: cannot write the JSON: %s\n", e.what());
            return 1;
        }
    }
    using namespace ufi_info;
    int status = 0;
    if (!(o.version || o.devices || o.config || o.topology || o.fi_info)) return print_summary(stdout) ? 1 : 0;
    if (o.version && print_versions(stdout)) status = 1;
    if (o.devices && print_transports(stdout)) status = 1;
    if (o.config && print_config(stdout)) status = 1;
    if (o.topology && print_topology(stdout)) status = 1;
    if (o.fi_info) {
        const int rc = print_fi_list(stdout, o.fi);
        if (rc != 0) status = rc;
    }
    return status;
}
