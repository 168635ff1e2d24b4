// libFuzzer harness: ufi's address parsers on arbitrary bytes (what fi_av_insert, fi_setname
// and the handshake hand them): the blob parser and its validator, the printable form, and
// scalable endpoints' names. Each must refuse or accept without reading past the input, and
// what it accepts must pack back to the same content.
#include "transports/address.h"
#include "transports/scalable_name.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace address = ufi::transports::address;
namespace scalable = ufi::transports::scalable;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // A copy of exactly `size` bytes: an overread is ASan's to find.
    const std::vector<uint8_t> blob(data, data + size);
    address::EndpointAddress a;
    const bool ok = address::unpack(blob.data(), blob.size(), a);
    if (ok != address::is_valid(blob.data(), blob.size())) std::abort();
    if (ok) {
        if (address::content_size(blob.data(), blob.size()) == 0) std::abort();
        // What parses packs into an address that parses to the same thing (the bytes may
        // differ: a known transport given by name packs as its code).
        const std::vector<uint8_t> again = address::pack(a);
        address::EndpointAddress b;
        if (again.empty() || !address::unpack(again.data(), again.size(), b) || !(a == b)) std::abort();
        (void)address::describe(a);
    }
    std::vector<uint8_t> decoded;
    (void)address::from_string(std::string_view(reinterpret_cast<const char *>(blob.data()), blob.size()),
                               decoded);
    scalable::View v;
    if (scalable::parse(blob.data(), blob.size(), v)) {
        for (uint32_t j = 0; j < v.rx_count; ++j) (void)address::is_valid(v.rx(j), v.name_len);
    }
    return 0;
}
