// fi_tostr / fi_tostr_r: libfabric's YAML-like rendering of fi_info, its attribute structs,
// enum values and flag sets, in the layout libfabric 2.x prints (`fi_info -v` shows it), so
// that tools and people that read libfabric's output read ufi's the same way.
//
// Layout notes (libfabric 2.x, which differs from 1.x in these places):
//  - fi_tx_attr/fi_rx_attr print no comp_order and fi_rx_attr no total_buffered_recv;
//  - fi_domain_attr prints one "progress:" (the 2.x field) instead of control_progress and
//    data_progress;
//  - ufi appends the fields 2.x added to fi_domain_attr (max_ep_auth_key ... max_xpu_ctx_cnt)
//    after tclass, which libfabric does not print yet - only for structs ufi allocated
//    (fi_getinfo, fi_allocinfo, fi_dupinfo), since a 1.x caller's own struct is shorter;
//  - unknown flag bits print as 0x... (libfabric drops them), unknown enum values as
//    "Unknown" (as libfabric does);
//  - an address libfabric cannot print (FI_ADDR_UCX, FI_FORMAT_UNSPEC, ...) prints as a hex
//    dump "fi_addr_ucx://0x..." of its src/dest_addrlen bytes.
// Rendering allocates and throws nothing; the output is cut to the caller's buffer and is
// always NUL-terminated.
#include "api/export.h"
#include "runtime/c_enum.h"
#include "runtime/info/info_alloc.h"
#include "runtime/info/names.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>

namespace {

namespace names = ufi::runtime::info::names;
using names::FlagSet;

constexpr std::string_view kTab = "    ";
// fi_tostr's own buffer: libfabric's size.
constexpr size_t kTostrBufSize = 8192;
// Address bytes a hex dump shows before it stops with "...".
constexpr size_t kMaxDumpBytes = 128;

// Appends into a fixed buffer: never writes past it, keeps it NUL-terminated, drops what
// does not fit.
class Out {
  public:
    Out(char *buf, size_t cap) : buf_(buf), cap_(cap) { buf_[0] = '\0'; }

    void put(std::string_view s) {
        const size_t n = std::min(s.size(), room());
        std::memcpy(buf_ + used_, s.data(), n);
        used_ += n;
        buf_[used_] = '\0';
    }
    // A C string from the caller's structs: NULL prints as glibc's printf prints it.
    void put_cstr(const char *s) { put(s != nullptr ? std::string_view(s) : "(null)"); }

    __attribute__((format(printf, 2, 3))) void fmt(const char *format, ...) {
        va_list ap;
        va_start(ap, format);
        const int n = std::vsnprintf(buf_ + used_, cap_ - used_, format, ap);
        va_end(ap);
        if (n > 0) used_ += std::min(static_cast<size_t>(n), room());
        buf_[used_] = '\0';
    }

    // The unwritten tail, for a callback that writes on its own (a fid's tostr op);
    // sync() takes in what it wrote.
    char *tail() { return buf_ + used_; }
    size_t tail_size() const { return cap_ - used_; }
    void sync() {
        buf_[cap_ - 1] = '\0';
        used_ += std::strlen(buf_ + used_);
    }

  private:
    size_t room() const { return cap_ - 1 - used_; }

    char *buf_;
    size_t cap_;
    size_t used_ = 0;
};

// Reads a value of type T from a caller pointer of unknown alignment.
template <typename T>
T load(const void *p) {
    T v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

// An enum member of a caller's struct as an int: the caller may have stored any value there
// (and a load through the enum type of a value it does not list is undefined).
template <typename E>
int enum_value(const E &field) {
    static_assert(sizeof(E) == sizeof(int));
    return load<int>(&field);
}

// "NAME, NAME" as libfabric lists flags inside [ ]; bits without a name as 0x....
void put_flag_list(Out &o, uint64_t bits, FlagSet set) {
    bool first = true;
    auto emit = [&](std::string_view name) {
        if (!first) o.put(", ");
        o.put(name);
        first = false;
    };
    const uint64_t unknown = names::for_each_flag(bits, set, emit);
    if (unknown != 0) {
        char hex[2 + 16 + 1];
        std::snprintf(hex, sizeof(hex), "0x%" PRIx64, unknown);
        emit(hex);
    }
}

// "<prefix><TAB>key: " (a member line of a struct printed at `prefix`).
void key(Out &o, std::string_view prefix, std::string_view k) {
    o.put(prefix);
    o.put(kTab);
    o.put(k);
    o.put(": ");
}

void line(Out &o, std::string_view prefix, std::string_view k, std::string_view value) {
    key(o, prefix, k);
    o.put(value);
    o.put("\n");
}

void line_size(Out &o, std::string_view prefix, std::string_view k, uint64_t value) {
    key(o, prefix, k);
    o.fmt("%" PRIu64 "\n", value);
}

void line_hex(Out &o, std::string_view prefix, std::string_view k, uint64_t value) {
    key(o, prefix, k);
    o.fmt("0x%" PRIx64 "\n", value);
}

void line_ptr(Out &o, std::string_view prefix, std::string_view k, const void *value) {
    key(o, prefix, k);
    o.fmt("%p\n", value);
}

void line_cstr(Out &o, std::string_view prefix, std::string_view k, const char *value) {
    key(o, prefix, k);
    o.put_cstr(value);
    o.put("\n");
}

void line_flags(Out &o, std::string_view prefix, std::string_view k, uint64_t bits, FlagSet set) {
    key(o, prefix, k);
    o.put("[ ");
    put_flag_list(o, bits, set);
    o.put(" ]\n");
}

// "<prefix>name:\n", or "<prefix>name: (null)\n" (then false) for a missing struct.
bool header(Out &o, std::string_view prefix, std::string_view name, const void *attr) {
    o.put(prefix);
    o.put(name);
    o.put(attr != nullptr ? ":\n" : ": (null)\n");
    return attr != nullptr;
}

// ---------------------------------------------------------------------------------------
// Addresses
// ---------------------------------------------------------------------------------------

// The address fits a fixed layout of `need` bytes. A zero length is trusted, as libfabric
// trusts it (the caller filled the address without its length).
bool fits(size_t addrlen, size_t need) {
    return addrlen == 0 || addrlen >= need;
}

// "fi_addr_ucx://0x0123..." (scheme: the format's name in lower case).
void put_hex_dump(Out &o, uint32_t format, const void *addr, size_t addrlen) {
    char scheme[32];
    const std::string_view fname = names::addr_format(format);
    const std::string_view base = fname == names::kUnknown ? "fi_addr_unknown" : fname;
    const size_t n = std::min(base.size(), sizeof(scheme) - 1);
    for (size_t i = 0; i < n; ++i) {
        const char c = base[i];
        scheme[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    scheme[n] = '\0';
    o.fmt("%s://0x", scheme);

    const auto *bytes = static_cast<const unsigned char *>(addr);
    const size_t shown = std::min(addrlen, kMaxDumpBytes);
    for (size_t i = 0; i < shown; ++i) o.fmt("%02x", bytes[i]);
    if (shown < addrlen) o.put("...");
}

bool put_sin(Out &o, const void *addr) {
    const auto sin = load<sockaddr_in>(addr);
    char ip[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip)) == nullptr) return false;
    o.fmt("fi_sockaddr_in://%s:%u", ip, static_cast<unsigned>(ntohs(sin.sin_port)));
    return true;
}

bool put_sin6(Out &o, const void *addr) {
    const auto sin6 = load<sockaddr_in6>(addr);
    char ip[INET6_ADDRSTRLEN];
    if (inet_ntop(AF_INET6, &sin6.sin6_addr, ip, sizeof(ip)) == nullptr) return false;
    o.fmt("fi_sockaddr_in6://[%s]:%u", ip, static_cast<unsigned>(ntohs(sin6.sin6_port)));
    return true;
}

// An IPv6-style GID at the start of an address, as text.
bool gid_str(const void *addr, char (&out)[INET6_ADDRSTRLEN]) {
    unsigned char gid[16];
    std::memcpy(gid, addr, sizeof(gid));
    return inet_ntop(AF_INET6, gid, out, sizeof(out)) != nullptr;
}

// The address printed as libfabric's ofi_straddr prints it, for the formats whose layout is
// fixed; false where it has no such form (the caller dumps the bytes).
bool put_known_addr(Out &o, uint32_t format, const void *addr, size_t addrlen) {
    const auto *b = static_cast<const unsigned char *>(addr);
    switch (format) {
        case FI_SOCKADDR:
        case FI_SOCKADDR_IP: {
            if (!fits(addrlen, sizeof(sockaddr))) return false;
            const auto family = load<sa_family_t>(b + offsetof(sockaddr, sa_family));
            if (family == AF_INET && fits(addrlen, sizeof(sockaddr_in))) return put_sin(o, addr);
            if (family == AF_INET6 && fits(addrlen, sizeof(sockaddr_in6))) return put_sin6(o, addr);
            return false;
        }
        case FI_SOCKADDR_IN:
            return fits(addrlen, sizeof(sockaddr_in)) && put_sin(o, addr);
        case FI_SOCKADDR_IN6:
            return fits(addrlen, sizeof(sockaddr_in6)) && put_sin6(o, addr);
        case FI_ADDR_STR: {
            const auto *s = static_cast<const char *>(addr);
            o.put(std::string_view(s, addrlen != 0 ? strnlen(s, addrlen) : std::strlen(s)));
            return true;
        }
        case FI_ADDR_PSMX:
        case FI_ADDR_GNI:
            if (!fits(addrlen, 8)) return false;
            o.fmt("%s://%" PRIx64, format == FI_ADDR_PSMX ? "fi_addr_psmx" : "fi_addr_gni",
                  load<uint64_t>(b));
            return true;
        case FI_ADDR_PSMX2:
            if (!fits(addrlen, 16)) return false;
            o.fmt("fi_addr_psmx2://%" PRIx64 ":%" PRIx64, load<uint64_t>(b), load<uint64_t>(b + 8));
            return true;
        case FI_ADDR_OPX:
            if (!fits(addrlen, 8)) return false;
            o.fmt("fi_addr_opx://%016" PRIx64, load<uint64_t>(b));
            return true;
        case FI_ADDR_CXI:
            if (!fits(addrlen, 4)) return false;
            o.fmt("fi_addr_cxi://0x%08" PRIx32, load<uint32_t>(b));
            return true;
        case FI_ADDR_EFA: {
            char gid[INET6_ADDRSTRLEN];
            if (!fits(addrlen, 24) || !gid_str(addr, gid)) return false;
            o.fmt("fi_addr_efa://[%s]:%u:%" PRIu32, gid,
                  static_cast<unsigned>(load<uint16_t>(b + 16)), load<uint32_t>(b + 20));
            return true;
        }
        case FI_ADDR_IB_UD: {
            char gid[INET6_ADDRSTRLEN];
            if (!fits(addrlen, 27) || !gid_str(addr, gid)) return false;
            o.fmt("fi_addr_ib_ud://%s:%" PRIx32 "/%x/%x/%x", gid, load<uint32_t>(b + 16),
                  static_cast<unsigned>(load<uint16_t>(b + 20)),
                  static_cast<unsigned>(load<uint16_t>(b + 22)), static_cast<unsigned>(b[26]));
            return true;
        }
        default:
            return false;
    }
}

void put_addr(Out &o, uint32_t format, const void *addr, size_t addrlen) {
    if (addr == nullptr) {
        o.put("(null)");
        return;
    }
    if (!put_known_addr(o, format, addr, addrlen)) put_hex_dump(o, format, addr, addrlen);
}

// ---------------------------------------------------------------------------------------
// Objects (fid) and the NIC
// ---------------------------------------------------------------------------------------

void put_nic_attrs(Out &o, const fid_nic &nic) {
    const std::string_view p2 = "        ";
    const std::string_view p3 = "            ";
    o.put(kTab);
    o.put("nic:\n");

    if (header(o, p2, "fi_device_attr", nic.device_attr)) {
        const fi_device_attr &d = *nic.device_attr;
        line_cstr(o, p2, "name", d.name);
        line_cstr(o, p2, "device_id", d.device_id);
        line_cstr(o, p2, "device_version", d.device_version);
        line_cstr(o, p2, "vendor_id", d.vendor_id);
        line_cstr(o, p2, "driver", d.driver);
        line_cstr(o, p2, "firmware", d.firmware);
    }
    if (header(o, p2, "fi_bus_attr", nic.bus_attr)) {
        const fi_bus_attr &bus = *nic.bus_attr;
        line(o, p2, "bus_type", names::bus_type(enum_value(bus.bus_type)));
        if (enum_value(bus.bus_type) == FI_BUS_PCI) {
            header(o, p3, "fi_pci_attr", &bus.attr.pci);
            const fi_pci_attr &pci = bus.attr.pci;
            line_size(o, p3, "domain_id", pci.domain_id);
            line_size(o, p3, "bus_id", pci.bus_id);
            line_size(o, p3, "device_id", pci.device_id);
            line_size(o, p3, "function_id", pci.function_id);
        }
    }
    if (header(o, p2, "fi_link_attr", nic.link_attr)) {
        const fi_link_attr &l = *nic.link_attr;
        line_cstr(o, p2, "address", l.address);
        line_size(o, p2, "mtu", l.mtu);
        line_size(o, p2, "speed", l.speed);
        line(o, p2, "state", names::link_state(enum_value(l.state)));
        line_cstr(o, p2, "network_type", l.network_type);
    }
}

// As libfabric: the object's own tostr op where it has one, else `label` and the pointer.
// A NIC without a tostr op prints its attributes (what libfabric's NICs print).
void put_fid(Out &o, std::string_view label, const fid *f) {
    if (f != nullptr && FI_CHECK_OP(f->ops, struct fi_ops, tostr)) {
        if (o.tail_size() > 1) {
            f->ops->tostr(f, o.tail(), o.tail_size());
            o.sync();
        }
        return;
    }
    if (f != nullptr && f->fclass == FI_CLASS_NIC) {
        put_nic_attrs(o, *reinterpret_cast<const fid_nic *>(f));
        return;
    }
    o.put(label);
    o.fmt("%p\n", static_cast<const void *>(f));
}

// ---------------------------------------------------------------------------------------
// fi_info and its attributes
// ---------------------------------------------------------------------------------------

void put_tx_attr(Out &o, const fi_tx_attr *attr, std::string_view prefix) {
    if (!header(o, prefix, "fi_tx_attr", attr)) return;
    line_flags(o, prefix, "caps", attr->caps, FlagSet::Caps);
    line_flags(o, prefix, "mode", attr->mode, FlagSet::Mode);
    line_flags(o, prefix, "op_flags", attr->op_flags, FlagSet::OpFlags);
    line_flags(o, prefix, "msg_order", attr->msg_order, FlagSet::MsgOrder);
    line_size(o, prefix, "inject_size", attr->inject_size);
    line_size(o, prefix, "size", attr->size);
    line_size(o, prefix, "iov_limit", attr->iov_limit);
    line_size(o, prefix, "rma_iov_limit", attr->rma_iov_limit);
    line_hex(o, prefix, "tclass", attr->tclass);
}

void put_rx_attr(Out &o, const fi_rx_attr *attr, std::string_view prefix) {
    if (!header(o, prefix, "fi_rx_attr", attr)) return;
    line_flags(o, prefix, "caps", attr->caps, FlagSet::Caps);
    line_flags(o, prefix, "mode", attr->mode, FlagSet::Mode);
    line_flags(o, prefix, "op_flags", attr->op_flags, FlagSet::OpFlags);
    line_flags(o, prefix, "msg_order", attr->msg_order, FlagSet::MsgOrder);
    line_size(o, prefix, "size", attr->size);
    line_size(o, prefix, "iov_limit", attr->iov_limit);
}

void line_ctx_cnt(Out &o, std::string_view prefix, std::string_view k, size_t cnt) {
    if (cnt == FI_SHARED_CONTEXT) {
        line(o, prefix, k, "FI_SHARED_CONTEXT");
    } else {
        line_size(o, prefix, k, cnt);
    }
}

void put_ep_attr(Out &o, const fi_ep_attr *attr, std::string_view prefix) {
    if (!header(o, prefix, "fi_ep_attr", attr)) return;
    line(o, prefix, "type", names::ep_type(enum_value(attr->type)));
    line(o, prefix, "protocol", names::protocol(attr->protocol));
    line_size(o, prefix, "protocol_version", attr->protocol_version);
    line_size(o, prefix, "max_msg_size", attr->max_msg_size);
    line_size(o, prefix, "msg_prefix_size", attr->msg_prefix_size);
    line_size(o, prefix, "max_order_raw_size", attr->max_order_raw_size);
    line_size(o, prefix, "max_order_war_size", attr->max_order_war_size);
    line_size(o, prefix, "max_order_waw_size", attr->max_order_waw_size);
    key(o, prefix, "mem_tag_format");
    o.fmt("0x%016" PRIx64 "\n", attr->mem_tag_format);
    line_ctx_cnt(o, prefix, "tx_ctx_cnt", attr->tx_ctx_cnt);
    line_ctx_cnt(o, prefix, "rx_ctx_cnt", attr->rx_ctx_cnt);
    line_size(o, prefix, "auth_key_size", attr->auth_key_size);
}

void put_domain_attr(Out &o, const fi_domain_attr *attr, std::string_view prefix) {
    if (!header(o, prefix, "fi_domain_attr", attr)) return;
    line_hex(o, prefix, "domain", reinterpret_cast<uintptr_t>(attr->domain));
    line_cstr(o, prefix, "name", attr->name);
    line(o, prefix, "threading", names::threading(enum_value(attr->threading)));
    line(o, prefix, "progress", names::progress(enum_value(attr->progress)));
    line(o, prefix, "resource_mgmt", names::resource_mgmt(enum_value(attr->resource_mgmt)));
    line(o, prefix, "av_type", names::av_type(enum_value(attr->av_type)));
    line_flags(o, prefix, "mr_mode", static_cast<unsigned>(attr->mr_mode), FlagSet::MrMode);
    line_size(o, prefix, "mr_key_size", attr->mr_key_size);
    line_size(o, prefix, "cq_data_size", attr->cq_data_size);
    line_size(o, prefix, "cq_cnt", attr->cq_cnt);
    line_size(o, prefix, "ep_cnt", attr->ep_cnt);
    line_size(o, prefix, "tx_ctx_cnt", attr->tx_ctx_cnt);
    line_size(o, prefix, "rx_ctx_cnt", attr->rx_ctx_cnt);
    line_size(o, prefix, "max_ep_tx_ctx", attr->max_ep_tx_ctx);
    line_size(o, prefix, "max_ep_rx_ctx", attr->max_ep_rx_ctx);
    line_size(o, prefix, "max_ep_stx_ctx", attr->max_ep_stx_ctx);
    line_size(o, prefix, "max_ep_srx_ctx", attr->max_ep_srx_ctx);
    line_size(o, prefix, "cntr_cnt", attr->cntr_cnt);
    line_size(o, prefix, "mr_iov_limit", attr->mr_iov_limit);
    line_flags(o, prefix, "caps", attr->caps, FlagSet::Caps);
    line_flags(o, prefix, "mode", attr->mode, FlagSet::Mode);
    line_size(o, prefix, "auth_key_size", attr->auth_key_size);
    line_size(o, prefix, "max_err_data", attr->max_err_data);
    line_size(o, prefix, "mr_cnt", attr->mr_cnt);
    line_hex(o, prefix, "tclass", attr->tclass);
    // Fields 2.x appended (libfabric does not print them yet). Only for structs ufi allocated:
    // a 1.x program's own fi_domain_attr ends at tclass, and fi_tostr has one symbol version.
    if (!ufi::runtime::info::has_current_layout(attr)) return;
    line_size(o, prefix, "max_ep_auth_key", attr->max_ep_auth_key);
    line_size(o, prefix, "max_group_id", attr->max_group_id);
    line_size(o, prefix, "max_cntr_value", attr->max_cntr_value);
    line_size(o, prefix, "max_err_cntr_value", attr->max_err_cntr_value);
    line_size(o, prefix, "max_xpu_ctx_cnt", attr->max_xpu_ctx_cnt);
}

void line_version(Out &o, std::string_view prefix, std::string_view k, uint32_t version) {
    key(o, prefix, k);
    o.fmt("%u.%u\n", static_cast<unsigned>(FI_MAJOR(version)),
          static_cast<unsigned>(FI_MINOR(version)));
}

void put_fabric_attr(Out &o, const fi_fabric_attr *attr, std::string_view prefix) {
    if (!header(o, prefix, "fi_fabric_attr", attr)) return;
    line_cstr(o, prefix, "name", attr->name);
    line_cstr(o, prefix, "prov_name", attr->prov_name);
    line_version(o, prefix, "prov_version", attr->prov_version);
    line_version(o, prefix, "api_version", attr->api_version);
}

void put_info(Out &o, const fi_info &info) {
    // The members of fi_info sit one TAB in; its attribute structs print at that prefix.
    const std::string_view p = "";
    o.put("fi_info:\n");
    line_flags(o, p, "caps", info.caps, FlagSet::Caps);
    line_flags(o, p, "mode", info.mode, FlagSet::Mode);
    line(o, p, "addr_format", names::addr_format(info.addr_format));
    line_size(o, p, "src_addrlen", info.src_addrlen);
    line_size(o, p, "dest_addrlen", info.dest_addrlen);
    key(o, p, "src_addr");
    put_addr(o, info.addr_format, info.src_addr, info.src_addrlen);
    o.put("\n");
    key(o, p, "dest_addr");
    put_addr(o, info.addr_format, info.dest_addr, info.dest_addrlen);
    o.put("\n");
    put_fid(o, "    handle: ", info.handle);
    put_tx_attr(o, info.tx_attr, kTab);
    put_rx_attr(o, info.rx_attr, kTab);
    put_ep_attr(o, info.ep_attr, kTab);
    put_domain_attr(o, info.domain_attr, kTab);
    put_fabric_attr(o, info.fabric_attr, kTab);
    put_fid(o, "    nic: ", info.nic != nullptr ? &info.nic->fid : nullptr);
}

// ---------------------------------------------------------------------------------------
// Other objects' attributes (each printed at the top level)
// ---------------------------------------------------------------------------------------

void put_av_attr(Out &o, const fi_av_attr &attr) {
    const std::string_view p = "";
    o.put("fi_av_attr:\n");
    line(o, p, "type", names::av_type(enum_value(attr.type)));
    line_size(o, p, "count", attr.count);
    line_size(o, p, "ep_per_node", attr.ep_per_node);
    line_cstr(o, p, "name", attr.name);
    line_flags(o, p, "flags", attr.flags, FlagSet::AvFlags);
}

void put_cq_attr(Out &o, const fi_cq_attr &attr) {
    const std::string_view p = "";
    o.put("fi_cq_attr:\n");
    line_size(o, p, "size", attr.size);
    line_flags(o, p, "flags", attr.flags, FlagSet::CqFlags);
    line(o, p, "format", names::cq_format(enum_value(attr.format)));
    line(o, p, "wait_obj", names::wait_obj(enum_value(attr.wait_obj)));
    key(o, p, "signaling_vector");
    o.fmt("%d\n", attr.signaling_vector);
    line(o, p, "wait_cond", names::cq_wait_cond(enum_value(attr.wait_cond)));
}

void put_mr_attr(Out &o, const fi_mr_attr &attr) {
    const std::string_view p = "";
    o.put("fi_mr_attr:\n");
    line_ptr(o, p, "mr_iov", attr.mr_iov);
    line_size(o, p, "iov_count", attr.iov_count);
    line_flags(o, p, "access", attr.access, FlagSet::MrAccess);
    line_hex(o, p, "offset", attr.offset);
    line_hex(o, p, "requested_key", attr.requested_key);
    line_ptr(o, p, "context", attr.context);
    line_size(o, p, "auth_key_size", attr.auth_key_size);
    line(o, p, "iface", names::hmem_iface(enum_value(attr.iface)));
}

void put_cntr_attr(Out &o, const fi_cntr_attr &attr) {
    const std::string_view p = "";
    o.put("fi_cntr_attr:\n");
    line(o, p, "events", names::cntr_events(enum_value(attr.events)));
    line(o, p, "wait_obj", names::wait_obj(enum_value(attr.wait_obj)));
    line_hex(o, p, "flags", attr.flags);
}

void put_cq_err_entry(Out &o, const fi_cq_err_entry &e) {
    const std::string_view p = "";
    o.put("fi_cq_err_entry:\n");
    line_ptr(o, p, "op_context", e.op_context);
    line_hex(o, p, "flags", e.flags);
    line_size(o, p, "len", e.len);
    line_ptr(o, p, "buf", e.buf);
    line_size(o, p, "data", e.data);
    line_hex(o, p, "tag", e.tag);
    line_size(o, p, "olen", e.olen);
    key(o, p, "err");
    o.fmt("%d\n", e.err);
    key(o, p, "prov_errno");  // libfabric prints err here by mistake; ufi the real value
    o.fmt("%d\n", e.prov_errno);
    line_ptr(o, p, "err_data", e.err_data);
    line_size(o, p, "err_data_size", e.err_data_size);
}

void put_version(Out &o) {
    o.fmt("%d.%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION, FI_REVISION_VERSION);
}

void render(Out &o, const void *data, int type) {
    // Scalars are read as libfabric reads them: enums as int, addr_format and protocol as
    // uint32_t, flag sets as uint64_t (mr_mode as int).
    const auto as_int = [&] { return load<int>(data); };
    const auto as_u32 = [&] { return load<uint32_t>(data); };
    const auto as_u64 = [&] { return load<uint64_t>(data); };

    switch (type) {
        case FI_TYPE_INFO:
            put_info(o, *static_cast<const fi_info *>(data));
            break;
        case FI_TYPE_EP_TYPE:
            o.put(names::ep_type(as_int()));
            break;
        case FI_TYPE_CAPS:
            put_flag_list(o, as_u64(), FlagSet::Caps);
            break;
        case FI_TYPE_OP_FLAGS:
            put_flag_list(o, as_u64(), FlagSet::OpFlags);
            break;
        case FI_TYPE_ADDR_FORMAT:
            o.put(names::addr_format(as_u32()));
            break;
        case FI_TYPE_TX_ATTR:
            put_tx_attr(o, static_cast<const fi_tx_attr *>(data), "");
            break;
        case FI_TYPE_RX_ATTR:
            put_rx_attr(o, static_cast<const fi_rx_attr *>(data), "");
            break;
        case FI_TYPE_EP_ATTR:
            put_ep_attr(o, static_cast<const fi_ep_attr *>(data), "");
            break;
        case FI_TYPE_DOMAIN_ATTR:
            put_domain_attr(o, static_cast<const fi_domain_attr *>(data), "");
            break;
        case FI_TYPE_FABRIC_ATTR:
            put_fabric_attr(o, static_cast<const fi_fabric_attr *>(data), "");
            break;
        case FI_TYPE_THREADING:
            o.put(names::threading(as_int()));
            break;
        case FI_TYPE_PROGRESS:
            o.put(names::progress(as_int()));
            break;
        case FI_TYPE_PROTOCOL:
            o.put(names::protocol(as_u32()));
            break;
        case FI_TYPE_MSG_ORDER:
            put_flag_list(o, as_u64(), FlagSet::MsgOrder);
            break;
        case FI_TYPE_MODE:
            put_flag_list(o, as_u64(), FlagSet::Mode);
            break;
        case FI_TYPE_AV_TYPE:
            o.put(names::av_type(as_int()));
            break;
        case FI_TYPE_ATOMIC_TYPE:
            o.put(names::datatype(as_int()));
            break;
        case FI_TYPE_ATOMIC_OP:
            o.put(names::op(as_int()));
            break;
        case FI_TYPE_VERSION:
            put_version(o);
            break;
        case FI_TYPE_EQ_EVENT:
            o.put(names::eq_event(as_int()));
            break;
        case FI_TYPE_CQ_EVENT_FLAGS:
            put_flag_list(o, as_u64(), FlagSet::CqEventFlags);
            break;
        case FI_TYPE_MR_MODE:
            put_flag_list(o, static_cast<unsigned>(as_int()), FlagSet::MrMode);
            break;
        case FI_TYPE_OP_TYPE:
            o.put(names::op_type(as_int()));
            break;
        case FI_TYPE_FID:
            put_fid(o, "fid: ", static_cast<const fid *>(data));
            break;
        case FI_TYPE_COLLECTIVE_OP:
            o.put(names::collective_op(as_int()));
            break;
        case FI_TYPE_HMEM_IFACE:
            o.put(names::hmem_iface(as_int()));
            break;
        case FI_TYPE_CQ_FORMAT:
            o.put(names::cq_format(as_int()));
            break;
        case FI_TYPE_LOG_LEVEL:
            o.put(names::log_level(as_int()));
            break;
        case FI_TYPE_LOG_SUBSYS:
            o.put(names::log_subsys(as_int()));
            break;
        case FI_TYPE_AV_ATTR:
            put_av_attr(o, *static_cast<const fi_av_attr *>(data));
            break;
        case FI_TYPE_CQ_ATTR:
            put_cq_attr(o, *static_cast<const fi_cq_attr *>(data));
            break;
        case FI_TYPE_MR_ATTR:
            put_mr_attr(o, *static_cast<const fi_mr_attr *>(data));
            break;
        case FI_TYPE_CNTR_ATTR:
            put_cntr_attr(o, *static_cast<const fi_cntr_attr *>(data));
            break;
        case FI_TYPE_CQ_ERR_ENTRY:
            put_cq_err_entry(o, *static_cast<const fi_cq_err_entry *>(data));
            break;
        case FI_TYPE_CQ_WAIT_COND:
            o.put(names::cq_wait_cond(as_int()));
            break;
        case FI_TYPE_WAIT_OBJ:
            o.put(names::wait_obj(as_int()));
            break;
        default:
            o.put("Unknown type");
            break;
    }
}

char *tostr_into(char *buf, size_t len, const void *data, int type) noexcept {
    if (buf == nullptr || len == 0 || data == nullptr) return nullptr;
    try {
        Out o(buf, len);
        render(o, data, type);
    } catch (...) {
        buf[0] = '\0';  // nothing above throws; this only keeps the C boundary noexcept
    }
    return buf;
}

}  // namespace

UFI_EXPORT char *fi_tostr_r(char *buf, size_t len, const void *data, enum fi_type datatype) {
    return tostr_into(buf, len, data, ufi::runtime::raw_enum(datatype));
}

// libfabric's buffer is one static 8 KiB block; ufi's is one per thread, so concurrent
// callers do not overwrite each other's text (valid until the thread's next call).
UFI_EXPORT char *fi_tostr(const void *data, enum fi_type datatype) {
    thread_local std::unique_ptr<char[]> buf;
    if (!buf) {
        buf.reset(new (std::nothrow) char[kTostrBufSize]);
        if (!buf) return nullptr;
    }
    return tostr_into(buf.get(), kTostrBufSize, data, ufi::runtime::raw_enum(datatype));
}
