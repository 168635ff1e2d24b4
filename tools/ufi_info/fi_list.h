// ufi_info -f: fi_getinfo with the hints given on the command line, printed like fi_info
// (or as JSON), and, when nothing matches, why (ufi's getinfo explanation).
#pragma once

#include "tools/ufi_info/reports.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace ufi_info {

struct FiListOptions {
    std::string provider;  // -p
    std::string ep_type;   // -e, e.g. FI_EP_RDM
    std::string caps;      // -c, e.g. FI_MSG|FI_TAGGED
    bool long_format = false;  // -l: every attribute (fi_tostr)
};

// Parses FI_* names through fi_tostr's own tables. false with an error message on stderr.
bool parse_caps(const std::string &text, uint64_t &caps);
bool parse_ep_type(const std::string &text, int &ep_type);

// Exit status: 0 when entries were found, 1 when fi_getinfo found none, 2 on bad options.
int print_fi_list(FILE *out, const FiListOptions &opts);
// The same as a JSON object {"status", "entries", "reasons"} in `out`.
int fi_list_json(const FiListOptions &opts, Json &out);

}  // namespace ufi_info
