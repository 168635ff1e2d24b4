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

int write_fi_list_json(JsonWriter &json, const FiListOptions &opts) {
    InfoPtr info;
    const int rc = run_getinfo(opts, info);
    if (rc == -FI_EINVAL && !info) return 2;
    json.begin_object();
    json.key("status");
    json.raw(std::to_string(rc));
    json.key("entries");
    json.begin_array();
    for (fi_info *cur = info.get(); cur != nullptr; cur = cur->next) {
        json.begin_object();
        auto str = [&](const char *k, const std::string &v) { json.key(k); json.string(v); };
        auto num = [&](const char *k, uint64_t v) { json.key(k); json.raw(std::to_string(v)); };
        auto arr = [&](const char *k, const std::vector<std::string> &v) { json.key(k); json.string_array(v); };
        str("provider", cur->fabric_attr->prov_name);
        str("fabric", cur->fabric_attr->name);
        str("domain", cur->domain_attr->name);
        str("version", std::to_string(FI_MAJOR(cur->fabric_attr->prov_version)) + "." +
                           std::to_string(FI_MINOR(cur->fabric_attr->prov_version)));
        str("type", tostr(&cur->ep_attr->type, FI_TYPE_EP_TYPE));
        str("protocol", tostr(&cur->ep_attr->protocol, FI_TYPE_PROTOCOL));
        str("transports", domain_transports(cur->domain_attr->name));
        arr("caps", flag_names(cur->caps, FI_TYPE_CAPS));
        arr("mode", flag_names(cur->mode, FI_TYPE_MODE));
        str("addr_format", tostr(&cur->addr_format, FI_TYPE_ADDR_FORMAT));
        arr("mr_mode", flag_names(static_cast<uint64_t>(static_cast<unsigned>(cur->domain_attr->mr_mode)), FI_TYPE_MR_MODE));
        str("threading", tostr(&cur->domain_attr->threading, FI_TYPE_THREADING));
        str("data_progress", tostr(&cur->domain_attr->data_progress, FI_TYPE_PROGRESS));
        str("av_type", tostr(&cur->domain_attr->av_type, FI_TYPE_AV_TYPE));
        num("inject_size", cur->tx_attr->inject_size);
        num("max_msg_size", cur->ep_attr->max_msg_size);
        num("iov_limit", cur->tx_attr->iov_limit);
        num("rma_iov_limit", cur->tx_attr->rma_iov_limit);
        num("tx_size", cur->tx_attr->size);
        num("rx_size", cur->rx_attr->size);
        num("mr_key_size", cur->domain_attr->mr_key_size);
        num("cq_data_size", cur->domain_attr->cq_data_size);
        num("max_ep_auth_key", cur->domain_attr->max_ep_auth_key);
        json.end_object();
    }
    json.end_array();
    json.key("reasons");
    json.string_array(rc == 0 ? std::vector<std::string>{} : explanation());
    json.end_object();
    return rc == 0 ? 0 : 1;
}

}  // namespace ufi_info
