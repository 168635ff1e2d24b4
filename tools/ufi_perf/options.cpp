#include "options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>

namespace ufi::perf {

const char *test_name(Test t) {
    switch (t) {
        case Test::TagLat: return "tag_lat";
        case Test::TagBw: return "tag_bw";
        case Test::MsgLat: return "msg_lat";
        case Test::MsgBw: return "msg_bw";
        case Test::PutLat: return "put_lat";
        case Test::PutBw: return "put_bw";
        case Test::GetLat: return "get_lat";
        case Test::GetBw: return "get_bw";
        case Test::FaddLat: return "fadd_lat";
        case Test::FaddRate: return "fadd_rate";
    }
    return "?";
}

const char *ep_type_name(EpType t) { return t == EpType::Msg ? "msg" : "rdm"; }

bool is_latency(Test t) {
    return t == Test::TagLat || t == Test::MsgLat || t == Test::PutLat || t == Test::GetLat ||
           t == Test::FaddLat;
}
bool is_rma(Test t) {
    return t == Test::PutLat || t == Test::PutBw || t == Test::GetLat || t == Test::GetBw ||
           t == Test::FaddLat || t == Test::FaddRate;
}
bool is_tagged(Test t) { return t == Test::TagLat || t == Test::TagBw; }

namespace {

// libfabric's names without the FI_ prefix, lower case (fi_atomic(3)).
constexpr const char *kOpNames[] = {"min",   "max",      "sum",      "prod",     "lor",
                                    "land",  "bor",      "band",     "lxor",     "bxor",
                                    "read",  "write",    "cswap",    "cswap_ne", "cswap_le",
                                    "cswap_lt", "cswap_ge", "cswap_gt", "mswap", "diff"};
constexpr const char *kDatatypeNames[] = {
    "int8",   "uint8",  "int16",  "uint16", "int32",          "uint32",
    "int64",  "uint64", "float",  "double", "float_complex",  "double_complex",
    "long_double", "long_double_complex", "int128", "uint128", "float16", "bfloat16",
    "float8_e4m3", "float8_e5m2"};
constexpr size_t kDatatypeSizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16,
                                     sizeof(long double), 2 * sizeof(long double), 16, 16, 2, 2,
                                     1, 1};

int index_of(const char *name, const char *const *names, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        if (!std::strcmp(name, names[i])) return static_cast<int>(i);
    }
    return -1;
}

}  // namespace

size_t atomic_size(const Options &o) {
    return kDatatypeSizes[o.atomic_datatype];
}

const char *usage() {
    return "usage: ufi_perf [options]           (server)\n"
           "       ufi_perf [options] SERVER    (client)\n"
           "  -t TEST    tag_lat, tag_bw, msg_lat, msg_bw, put_lat, put_bw, get_lat, get_bw,\n"
           "             fadd_lat, fadd_rate (a fetching atomic, one element; -s is ignored)\n"
           "  -o OP      fadd tests: the atomic, as libfabric names it without FI_ (sum, min,\n"
           "             max, prod, bor, band, bxor, lor, land, lxor, read, write, diff,\n"
           "             cswap, cswap_ne/le/lt/ge/gt, mswap; default sum)\n"
           "  -D TYPE    fadd tests: its datatype (int8 ... uint128, float, double, the complex\n"
           "             types, long_double, float16, bfloat16, float8_e4m3/e5m2; default uint64)\n"
           "             (default tag_lat; put_lat is a ping-pong of writes polled in memory,\n"
           "             get_lat one read at a time; the *_bw tests keep -W operations in flight)\n"
           "  -s SIZES   message sizes, comma separated, K/M/G suffixes (default 8)\n"
           "  -n ITERS   measured iterations per size (default 10000)\n"
           "  -w WARMUP  warm-up iterations per size (default 1000)\n"
           "  -W WINDOW  bandwidth tests: messages in flight (default 64)\n"
           "  -p PORT    TCP port of the address exchange (default 13337)\n"
           "  -e TYPE    endpoint type: rdm (default) or msg (connected endpoints: the\n"
           "             server listens on a passive endpoint, the client connects)\n"
           "  --csv      comma-separated output\n"
           "  --json     one JSON object per result per line\n"
           "  --procs N  N processes of this host (2 to 64), started by ufi_perf, measure\n"
           "             together: 8 B latency of every pair in turn, 8 B message rate with\n"
           "             one peer each and with every peer, bandwidth of pairs (the largest\n"
           "             -s, 1 MiB by default); -n scales each; no SERVER\n"
           "  --ucp      with --procs or under mpirun: the same processes then measure the\n"
           "             same over UCP's tag API (UCX_TLS, UCX_NET_DEVICES choose its\n"
           "             transports), printed beside ufi's with the ratios ufi/UCP\n"
           "Under mpirun (`mpirun -np N ufi_perf [options]`, any PMIx launcher) the\n"
           "processes it started, on any hosts, run the --procs group: names and figures\n"
           "go through PMIx, rank 0 prints.\n"
           "Transports: UFI_TLS, UFI_NET_DEVICES (as for every ufi program).\n";
}

namespace {

bool parse_u64(const char *s, uint64_t &out) {
    if (s == nullptr || *s == '\0') return false;
    char *end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s, &end, 10);
    if (errno != 0 || end == s || s[0] == '-') return false;
    uint64_t mult = 1;
    if (*end == 'k' || *end == 'K') mult = 1024, ++end;
    else if (*end == 'm' || *end == 'M') mult = 1024 * 1024, ++end;
    else if (*end == 'g' || *end == 'G') mult = 1024ULL * 1024 * 1024, ++end;
    if (*end != '\0') return false;
    if (v > std::numeric_limits<uint64_t>::max() / mult) return false;
    out = v * mult;
    return true;
}

bool parse_sizes(const char *s, std::vector<size_t> &out) {
    out.clear();
    std::string text(s);
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = text.find(',', pos);
        const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        uint64_t v = 0;
        if (!parse_u64(item.c_str(), v)) return false;
        out.push_back(static_cast<size_t>(v));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return !out.empty();
}

}  // namespace

bool parse_options(int argc, char **argv, Options &o, std::string &error, bool &help) {
    help = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        auto value = [&](const char *name) -> const char * {
            if (i + 1 >= argc) {
                error = std::string(name) + " needs a value";
                return nullptr;
            }
            return argv[++i];
        };
        uint64_t v = 0;
        if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
            help = true;
            return false;
        } else if (!std::strcmp(a, "--csv")) {
            o.format = Format::Csv;
        } else if (!std::strcmp(a, "--json")) {
            o.format = Format::Json;
        } else if (!std::strcmp(a, "--ucp")) {
            o.ucp = true;
        } else if (!std::strcmp(a, "--procs")) {
            const char *n = value("--procs");
            if (n == nullptr) return false;
            if (!parse_u64(n, v) || v < 2 || v > 64) {
                error = "--procs takes 2 to 64 processes";
                return false;
            }
            o.procs = static_cast<uint32_t>(v);
        } else if (!std::strcmp(a, "-e")) {
            const char *t = value("-e");
            if (t == nullptr) return false;
            if (!std::strcmp(t, "rdm")) o.ep_type = EpType::Rdm;
            else if (!std::strcmp(t, "msg")) o.ep_type = EpType::Msg;
            else {
                error = std::string("unknown endpoint type \"") + t + "\" (rdm, msg)";
                return false;
            }
        } else if (!std::strcmp(a, "-t")) {
            const char *t = value("-t");
            if (t == nullptr) return false;
            if (!std::strcmp(t, "tag_lat")) o.test = Test::TagLat;
            else if (!std::strcmp(t, "tag_bw")) o.test = Test::TagBw;
            else if (!std::strcmp(t, "msg_lat")) o.test = Test::MsgLat;
            else if (!std::strcmp(t, "msg_bw")) o.test = Test::MsgBw;
            else if (!std::strcmp(t, "put_lat")) o.test = Test::PutLat;
            else if (!std::strcmp(t, "put_bw")) o.test = Test::PutBw;
            else if (!std::strcmp(t, "get_lat")) o.test = Test::GetLat;
            else if (!std::strcmp(t, "get_bw")) o.test = Test::GetBw;
            else if (!std::strcmp(t, "fadd_lat")) o.test = Test::FaddLat;
            else if (!std::strcmp(t, "fadd_rate")) o.test = Test::FaddRate;
            else {
                error = std::string("unknown test \"") + t +
                        "\" (tag_lat, tag_bw, msg_lat, msg_bw, put_lat, put_bw, get_lat, get_bw, "
                        "fadd_lat, fadd_rate)";
                return false;
            }
        } else if (!std::strcmp(a, "-o") || !std::strcmp(a, "-D")) {
            const char *s = value(a);
            if (s == nullptr) return false;
            const bool op = !std::strcmp(a, "-o");
            const int i = op ? index_of(s, kOpNames, std::size(kOpNames))
                             : index_of(s, kDatatypeNames, std::size(kDatatypeNames));
            if (i < 0) {
                error = std::string("unknown ") + (op ? "atomic op" : "datatype") + " \"" + s + "\"";
                return false;
            }
            (op ? o.atomic_op : o.atomic_datatype) = i;
        } else if (!std::strcmp(a, "-s")) {
            const char *s = value("-s");
            if (s == nullptr) return false;
            if (!parse_sizes(s, o.sizes)) {
                error = std::string("bad size list \"") + s + "\"";
                return false;
            }
        } else if (!std::strcmp(a, "-n") || !std::strcmp(a, "-w") || !std::strcmp(a, "-W") ||
                   !std::strcmp(a, "-p")) {
            const char *s = value(a);
            if (s == nullptr) return false;
            if (!parse_u64(s, v)) {
                error = std::string("bad number for ") + a + ": \"" + s + "\"";
                return false;
            }
            if (!std::strcmp(a, "-n")) o.iters = v;
            else if (!std::strcmp(a, "-w")) o.warmup = v;
            else if (!std::strcmp(a, "-W")) {
                if (v == 0 || v > 4096) {
                    error = "-W takes 1 to 4096";
                    return false;
                }
                o.window = static_cast<uint32_t>(v);
            } else {
                if (v == 0 || v > 65535) {
                    error = "-p takes a port, 1 to 65535";
                    return false;
                }
                o.port = static_cast<uint16_t>(v);
            }
        } else if (a[0] == '-') {
            error = std::string("unknown option ") + a;
            return false;
        } else if (o.server.empty()) {
            o.server = a;
        } else {
            error = std::string("unexpected argument ") + a;
            return false;
        }
    }
    if (o.procs != 0 && o.ep_type != EpType::Rdm) {
        error = "--procs measures RDM endpoints only";
        return false;
    }
    if (o.iters == 0) {
        error = "-n must be at least 1";
        return false;
    }
    if (o.test == Test::FaddLat || o.test == Test::FaddRate) o.sizes = {atomic_size(o)};  // one
    if (o.test == Test::PutLat) {
        for (size_t n : o.sizes) {
            if (n == 0) {
                error = "put_lat polls the last byte written: sizes start at 1";
                return false;
            }
        }
    }
    return true;
}

}  // namespace ufi::perf
