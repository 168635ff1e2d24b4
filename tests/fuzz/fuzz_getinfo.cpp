// libFuzzer harness: fi_getinfo with hints, node and service made of arbitrary bytes (what an
// application or its environment may pass): every attribute of the hints, strings included,
// with or without FI_SOURCE. It must answer or refuse with an error code, never crash, and
// every answer must be freeable.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

// Reads fixed-size fields off the input, zeros once it runs out.
struct Reader {
    const uint8_t *p;
    size_t left;
    template <typename T>
    T take() {
        T v{};
        const size_t n = left < sizeof v ? left : sizeof v;
        std::memcpy(&v, p, n);
        p += n;
        left -= n;
        return v;
    }
    std::string text() {
        const size_t n = take<uint8_t>() % 48;
        std::string s(reinterpret_cast<const char *>(p), n < left ? n : left);
        p += s.size();
        left -= s.size();
        return s;
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Reader r{data, size};
    const uint8_t shape = r.take<uint8_t>();
    fi_info *hints = (shape & 1) ? fi_allocinfo() : nullptr;
    std::string fabric_name, domain_name, prov_name;
    if (hints != nullptr) {
        hints->caps = r.take<uint64_t>();
        hints->mode = r.take<uint64_t>();
        hints->addr_format = r.take<uint32_t>() % 16;
        hints->ep_attr->type = static_cast<fi_ep_type>(r.take<uint8_t>() % 8);
        hints->ep_attr->protocol = r.take<uint8_t>() % 40;
        hints->ep_attr->tx_ctx_cnt = r.take<uint8_t>();
        hints->ep_attr->rx_ctx_cnt = r.take<uint8_t>();
        hints->ep_attr->max_msg_size = r.take<uint64_t>();
        hints->tx_attr->caps = r.take<uint64_t>();
        hints->tx_attr->op_flags = r.take<uint64_t>();
        hints->tx_attr->msg_order = r.take<uint64_t>();
        hints->tx_attr->size = r.take<uint32_t>();
        hints->tx_attr->iov_limit = r.take<uint16_t>();
        hints->tx_attr->inject_size = r.take<uint32_t>();
        hints->rx_attr->caps = r.take<uint64_t>();
        hints->rx_attr->op_flags = r.take<uint64_t>();
        hints->rx_attr->size = r.take<uint32_t>();
        hints->domain_attr->threading = static_cast<fi_threading>(r.take<uint8_t>() % 8);
        hints->domain_attr->control_progress = static_cast<fi_progress>(r.take<uint8_t>() % 4);
        hints->domain_attr->data_progress = static_cast<fi_progress>(r.take<uint8_t>() % 4);
        hints->domain_attr->resource_mgmt = static_cast<fi_resource_mgmt>(r.take<uint8_t>() % 4);
        hints->domain_attr->av_type = static_cast<fi_av_type>(r.take<uint8_t>() % 4);
        hints->domain_attr->mr_mode = r.take<int32_t>();
        hints->domain_attr->mr_key_size = r.take<uint8_t>();
        hints->domain_attr->caps = r.take<uint64_t>();
        hints->domain_attr->mode = r.take<uint64_t>();
        hints->domain_attr->max_ep_tx_ctx = r.take<uint8_t>();
        hints->domain_attr->max_ep_rx_ctx = r.take<uint8_t>();
        hints->fabric_attr->api_version = r.take<uint32_t>();
        if (shape & 2) {
            domain_name = r.text();
            hints->domain_attr->name = strdup(domain_name.c_str());
        }
        if (shape & 4) {
            fabric_name = r.text();
            hints->fabric_attr->name = strdup(fabric_name.c_str());
        }
        if (shape & 8) {
            prov_name = r.text();
            hints->fabric_attr->prov_name = strdup(prov_name.c_str());
        }
    }
    const std::string node = r.text(), service = r.text();
    const uint32_t version = (shape & 16) ? r.take<uint32_t>() : FI_VERSION(1, 17);
    const uint64_t flags = (shape & 32) ? FI_SOURCE : (shape & 64) ? r.take<uint64_t>() : 0;
    fi_info *out = nullptr;
    const int rc = fi_getinfo(version, (shape & 128) && !node.empty() ? node.c_str() : nullptr,
                              !service.empty() ? service.c_str() : nullptr, flags, hints, &out);
    if (rc == 0) {
        for (fi_info *i = out; i != nullptr; i = i->next) {
            fi_info *copy = fi_dupinfo(i);
            fi_freeinfo(copy);
        }
        fi_freeinfo(out);
    }
    fi_freeinfo(hints);
    return 0;
}
