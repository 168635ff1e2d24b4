// fi_getinfo over ufi's domain offers: provider filters, node/service/FI_SOURCE, hint
// matching per offer, and an explanation of every exclusion. The explanation is logged at
// info level, and kept per thread for `ufi_info -f`, because -FI_ENODATA alone tells a user
// nothing. When the application named ufi (FI_PROVIDER, prov_name), the first no-match of
// the process also gets one warn line; programs that probe in a loop do not flood the log.
#pragma once

#include "runtime/info/domain_offer.h"

#include <rdma/fabric.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ufi::runtime::info {

// Everything fi_getinfo depends on besides its arguments, as data (tests build it).
struct GetinfoEnv {
    std::vector<DomainOffer> offers;          // best first (transports/selection order)
    std::vector<std::string> provider_filter; // FI_PROVIDER (a leading "^" excludes)
    std::vector<std::string> provider_exclude;// FI_PROVIDER_EXCLUDE
    std::vector<std::string> local_addrs;     // every IP address of this host
    std::vector<std::string> selection_notes; // why transports were left out (UFI_TLS, ...)
};

struct Explanation {
    bool explicit_request = false;     // FI_PROVIDER or hints named ufi
    std::vector<std::string> lines;    // "domain eth0: caps FI_TAGGED not offered ..."
};

// Resolves a node name to its IP addresses (numeric only with FI_NUMERICHOST).
// Returns false with a reason when it does not resolve.
bool resolve_node(const char *node, uint64_t flags, std::vector<std::string> &addrs,
                  std::string &why);

// The pure core: no environment, no global state. `resolved` are node's addresses; `service`
// is validated (transports/address_svc.h parse_service: a port, 0 only with FI_SOURCE).
int getinfo_with_env(const GetinfoEnv &env, uint32_t version, const char *node,
                     const std::vector<std::string> &resolved, uint64_t flags,
                     const fi_info *hints, fi_info **info, Explanation &why,
                     const char *service = nullptr);

// The process-wide entry used by api/getinfo.cpp: builds the environment from discovery,
// selection and the config registry (once per process), logs exclusions and remembers them.
int getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
            const fi_info *hints, fi_info **info);

// What the calling thread's last getinfo() excluded and why.
const Explanation &last_explanation();

// The environment getinfo() uses (for ufi_info).
const GetinfoEnv &process_env();

}  // namespace ufi::runtime::info
