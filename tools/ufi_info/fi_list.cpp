#include "tools/ufi_info/fi_list.h"

#include "tools/ufi_info/reports.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <strings.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace ufi_info {

namespace {

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
    size_t start = s.find_first_not_of(' ');
    return start == std::string::npos ? "" : s.substr(start);
}

std::vector<std::string> split(const std::string &s, const std::string &sep) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t next = s.find(sep, pos);
        if (next == std::string::npos) next = s.size();
        std::string item = trim(s.substr(pos, next - pos));
        if (!item.empty()) out.push_back(item);
        pos = next + sep.size();
    }
    return out;
}

std::string tostr(const void *data, fi_type type) {
    char buf[4096];
    fi_tostr_r(buf, sizeof(buf), data, type);
    return trim(buf);
}

std::vector<std::string> flag_names(uint64_t bits, fi_type type) { return split(tostr(&bits, type), "|"); }

struct InfoDeleter {
    void operator()(fi_info *i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// Runs fi_getinfo with the options as hints. rc is fi_getinfo's return.
int run_getinfo(const FiListOptions &opts, InfoPtr &result) {
    InfoPtr hints(fi_allocinfo());
    if (!hints) return -FI_ENOMEM;
    bool use_hints = false;
    if (!opts.provider.empty()) {
        hints->fabric_attr->prov_name = strdup(opts.provider.c_str());
        use_hints = true;
    }
    if (!opts.ep_type.empty()) {
        int type = 0;
        if (!parse_ep_type(opts.ep_type, type)) return -FI_EINVAL;
        hints->ep_attr->type = static_cast<fi_ep_type>(type);
        use_hints = true;
    }
    if (!opts.caps.empty()) {
        uint64_t caps = 0;
        if (!parse_caps(opts.caps, caps)) return -FI_EINVAL;
        hints->caps = caps;
        use_hints = true;
    }
    // As fi_info: an application that accepts every mode and mr_mode bit.
    hints->mode = ~0ULL;
    hints->domain_attr->mode = ~0ULL;
    hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
    fi_info *info = nullptr;
    const int rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), nullptr, nullptr, 0,
                              use_hints ? hints.get() : nullptr, &info);
    result.reset(info);
    return rc;
}

std::string domain_transports(const char *domain) {
    ReportHandle d(UFI_EXT_DOMAINS);
    for (size_t i = 0; i < d.size(); ++i) {
        if (strcmp(d[i].kind, "domain") == 0 && domain && strcmp(d[i].name, domain) == 0) {
            return field(d[i], "transports");
        }
    }
    return "";
}

std::vector<std::string> explanation() {
    std::vector<std::string> lines;
    ReportHandle r(UFI_EXT_GETINFO_EXPLAIN);
    for (size_t i = 0; i < r.size(); ++i) lines.push_back(field(r[i], "text"));
    return lines;
}

}  // namespace

bool parse_caps(const std::string &text, uint64_t &caps) {
    caps = 0;
    for (const std::string &name : split(text, "|")) {
        bool found = false;
        for (int bit = 0; bit < 64 && !found; ++bit) {
            const uint64_t flag = 1ULL << bit;
            if (strcasecmp(tostr(&flag, FI_TYPE_CAPS).c_str(), name.c_str()) == 0) {
                caps |= flag;
                found = true;
            }
        }
        if (!found) {
            fprintf(stderr, "ufi_info: unknown capability '%s' (expected FI_MSG, FI_TAGGED, ...)\n", name.c_str());
            return false;
        }
    }
    return true;
}

bool parse_ep_type(const std::string &text, int &ep_type) {
    for (int v = 0; v < 16; ++v) {
        const fi_ep_type t = static_cast<fi_ep_type>(v);
        if (strcasecmp(tostr(&t, FI_TYPE_EP_TYPE).c_str(), text.c_str()) == 0) {
            ep_type = v;
            return true;
        }
    }
    fprintf(stderr, "ufi_info: unknown endpoint type '%s' (expected FI_EP_RDM, FI_EP_MSG, FI_EP_DGRAM)\n",
            text.c_str());
    return false;
}

int print_fi_list(FILE *out, const FiListOptions &opts) {
    InfoPtr info;
    const int rc = run_getinfo(opts, info);
    if (rc == -FI_EINVAL && !info) return 2;
    if (rc != 0) {
        fprintf(out, "fi_getinfo: %d (%s)\n", rc, fi_strerror(-rc));
        const auto why = explanation();
        if (!why.empty()) fprintf(out, "why (ufi):\n");
        for (const auto &line : why) fprintf(out, "  %s\n", line.c_str());
        return 1;
    }
    for (fi_info *cur = info.get(); cur != nullptr; cur = cur->next) {
        if (opts.long_format) {
            char buf[16384];
            fi_tostr_r(buf, sizeof(buf), cur, FI_TYPE_INFO);
            fprintf(out, "---\n%s", buf);
            continue;
        }
        fprintf(out, "provider: %s\n", cur->fabric_attr->prov_name);
        fprintf(out, "    fabric: %s\n", cur->fabric_attr->name);
        fprintf(out, "    domain: %s\n", cur->domain_attr->name);
        fprintf(out, "    version: %u.%u\n", FI_MAJOR(cur->fabric_attr->prov_version),
                FI_MINOR(cur->fabric_attr->prov_version));
        fprintf(out, "    type: %s\n", tostr(&cur->ep_attr->type, FI_TYPE_EP_TYPE).c_str());
        fprintf(out, "    protocol: %s\n", tostr(&cur->ep_attr->protocol, FI_TYPE_PROTOCOL).c_str());
        const std::string tl = domain_transports(cur->domain_attr->name);
        if (!tl.empty()) fprintf(out, "    transports: %s\n", tl.c_str());
    }
    return 0;
}

int fi_list_json(const FiListOptions &opts, Json &out) {
    InfoPtr info;
    const int rc = run_getinfo(opts, info);
    if (rc == -FI_EINVAL && !info) return 2;
    Json entries = Json::array();
    for (fi_info *cur = info.get(); cur != nullptr; cur = cur->next) {
        Json e = Json::object();
        e["provider"] = cur->fabric_attr->prov_name;
        e["fabric"] = cur->fabric_attr->name;
        e["domain"] = cur->domain_attr->name;
        e["version"] = std::to_string(FI_MAJOR(cur->fabric_attr->prov_version)) + "." +
                       std::to_string(FI_MINOR(cur->fabric_attr->prov_version));
        e["type"] = tostr(&cur->ep_attr->type, FI_TYPE_EP_TYPE);
        e["protocol"] = tostr(&cur->ep_attr->protocol, FI_TYPE_PROTOCOL);
        e["transports"] = domain_transports(cur->domain_attr->name);
        e["caps"] = flag_names(cur->caps, FI_TYPE_CAPS);
        e["mode"] = flag_names(cur->mode, FI_TYPE_MODE);
        e["addr_format"] = tostr(&cur->addr_format, FI_TYPE_ADDR_FORMAT);
        e["mr_mode"] = flag_names(static_cast<uint64_t>(static_cast<unsigned>(cur->domain_attr->mr_mode)),
                                  FI_TYPE_MR_MODE);
        e["threading"] = tostr(&cur->domain_attr->threading, FI_TYPE_THREADING);
        e["data_progress"] = tostr(&cur->domain_attr->data_progress, FI_TYPE_PROGRESS);
        e["av_type"] = tostr(&cur->domain_attr->av_type, FI_TYPE_AV_TYPE);
        e["inject_size"] = cur->tx_attr->inject_size;
        e["max_msg_size"] = cur->ep_attr->max_msg_size;
        e["iov_limit"] = cur->tx_attr->iov_limit;
        e["rma_iov_limit"] = cur->tx_attr->rma_iov_limit;
        e["tx_size"] = cur->tx_attr->size;
        e["rx_size"] = cur->rx_attr->size;
        e["mr_key_size"] = cur->domain_attr->mr_key_size;
        e["cq_data_size"] = cur->domain_attr->cq_data_size;
        e["max_ep_auth_key"] = cur->domain_attr->max_ep_auth_key;
        entries.push_back(std::move(e));
    }
    out = Json::object();
    out["status"] = rc;
    out["entries"] = std::move(entries);
    out["reasons"] = rc == 0 ? std::vector<std::string>{} : explanation();
    return rc == 0 ? 0 : 1;
}

}  // namespace ufi_info
