#include "report.h"

#include <cstdio>

namespace ufi::perf {

void print_header(const Options &o, const std::string &domain) {
    if (o.format == Format::Table) {
        std::printf("# ufi_perf %s, %s endpoints, domain %s, %s\n", test_name(o.test),
                    ep_type_name(o.ep_type), domain.c_str(),
                    o.test == Test::GetLat || o.test == Test::FaddLat
                                           ? "latency is per operation (a round trip)"
                    : is_latency(o.test)   ? "latency is one-way (half the round trip)"
                                           : "bandwidth in MiB/s");
        std::printf("%12s %10s %12s %12s %14s %12s\n", "size", "iters", "lat_us", "bw_MBps", "msg_rate",
                    "typical_us");
    } else if (o.format == Format::Csv) {
        std::printf("test,domain,size,iters,lat_us,bw_MBps,msg_rate,typical_lat_us,ep\n");
    }
    std::fflush(stdout);
}

void print_result(const Options &o, const std::string &domain, const Result &r) {
    switch (o.format) {
        case Format::Table:
            std::printf("%12zu %10llu %12.3f %12.2f %14.0f %12.3f\n", r.size,
                        static_cast<unsigned long long>(r.iters), r.lat_us, r.bw_MBps, r.msg_rate,
                        r.typical_lat_us);
            break;
        case Format::Csv:
            std::printf("%s,%s,%zu,%llu,%.4f,%.3f,%.1f,%.4f,%s\n", test_name(o.test),
                        domain.c_str(), r.size, static_cast<unsigned long long>(r.iters), r.lat_us,
                        r.bw_MBps, r.msg_rate, r.typical_lat_us, ep_type_name(o.ep_type));
            break;
        case Format::Json:
            std::printf("{\"test\": \"%s\", \"domain\": \"%s\", \"size\": %zu, \"iters\": %llu, "
                        "\"lat_us\": %.4f, \"bw_MBps\": %.3f, \"msg_rate\": %.1f, "
                        "\"typical_lat_us\": %.4f, \"ep\": \"%s\"}\n",
                        test_name(o.test), domain.c_str(), r.size,
                        static_cast<unsigned long long>(r.iters), r.lat_us, r.bw_MBps, r.msg_rate,
                        r.typical_lat_us, ep_type_name(o.ep_type));
            break;
    }
    std::fflush(stdout);
}

}  // namespace ufi::perf
