// ufi_perf's command line, in ucx_perftest's vocabulary so the two line up:
//   server: ufi_perf [options]            client: ufi_perf [options] SERVER
//   -t TEST   tag_lat | tag_bw | msg_lat | msg_bw | put_lat | put_bw | get_lat | get_bw |
//             fadd_lat | fadd_rate
//             (tag_lat)
//   -s SIZES  message sizes, comma separated, K/M suffixes  (8)
//   -n ITERS  measured iterations per size                  (10000; bw: messages)
//   -w WARMUP iterations before measuring                   (1000)
//   -W WINDOW bandwidth tests: messages in flight           (64)
//   -p PORT   TCP port of the address exchange              (13337)
//   -e TYPE   rdm | msg: the endpoint type (msg: connected)  (rdm)
//   --csv / --json   output format (table by default)
//   --procs N        N processes of this host measure together (group.h), no SERVER
//   --ucp            with --procs or under mpirun: then the same over UCP, with ratios
// Transports are chosen by UFI_TLS / UFI_NET_DEVICES, as for any ufi program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ufi::perf {

enum class Test { TagLat, TagBw, MsgLat, MsgBw, PutLat, PutBw, GetLat, GetBw, FaddLat, FaddRate };
enum class Format { Table, Csv, Json };
enum class EpType { Rdm, Msg };

struct Options {
    Test test = Test::TagLat;
    std::vector<size_t> sizes{8};
    uint64_t iters = 10000;
    uint64_t warmup = 1000;
    uint32_t window = 64;
    uint16_t port = 13337;
    Format format = Format::Table;
    EpType ep_type = EpType::Rdm;
    std::string server;  // empty: this is the server
    bool ucp = false;    // --ucp: a group also measures UCP's figures (group_ucp.h)
    uint32_t procs = 0;  // --procs N: a group of N processes of this host (group.h); 0: a pair
    // fadd_lat / fadd_rate: the fetching atomic and its datatype (-o, -D; FI_SUM on FI_UINT64
    // by default, as ucx_perftest's ucp_fadd).
    int atomic_op = 2;        // FI_SUM
    int atomic_datatype = 7;  // FI_UINT64
};

const char *test_name(Test t);
const char *ep_type_name(EpType t);
// The element size of o's atomic datatype (fadd tests).
size_t atomic_size(const Options &o);
bool is_latency(Test t);
bool is_tagged(Test t);
bool is_rma(Test t);

// Parses argv; false with *error (or *help for -h) when the command line is not usable.
bool parse_options(int argc, char **argv, Options &out, std::string &error, bool &help);
const char *usage();

}  // namespace ufi::perf
