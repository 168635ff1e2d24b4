// The AV object: open, close, EQ binding, removal, lookups, authorization keys, user IDs.
// Insertion is in insert.cpp.
#include "runtime/av/av.h"

#include "runtime/av/socket_format.h"

#include "runtime/av/addr_encoding.h"
#include "base/config/config.h"
#include "runtime/domain/domain.h"
#include "runtime/eq/binding.h"
#include "runtime/c_enum.h"
#include "runtime/lock.h"
#include "base/log/log.h"
#include "transports/address.h"
#include "transports/address_svc.h"
#include "transports/scalable_name.h"

#include <rdma/fi_errno.h>

#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>

namespace ufi::runtime::av {

namespace address = transports::address;
namespace scalable = transports::scalable;
using log::Subsys;

Av::Av(Domain *d, std::unique_ptr<Table> t) noexcept
    : domain(d), table(std::move(t)), user_ids(table->entry_shift()), key_user_ids(8) {}

namespace {

// The most slots the map_addr array of a named AV covers (512 KiB of fi_addr_t).
constexpr size_t kMaxMapSlots = size_t{1} << 16;

const char *type_name(int type) {
    switch (type) {
        case FI_AV_MAP:
            return "FI_AV_MAP";
        case FI_AV_TABLE:
            return "FI_AV_TABLE";
        case FI_AV_UNSPEC:
            return "FI_AV_UNSPEC";
        default:
            return "unknown";
    }
}

// Copies `n` bytes of `src` into a buffer of *len bytes, truncating; *len = n.
void copy_truncated(const void *src, size_t n, void *buf, size_t *len) {
    if (buf != nullptr && *len > 0) std::memcpy(buf, src, std::min(n, *len));
    *len = n;
}

// A caller's AV name for a log line: the first 64 bytes, then how long it really is.
std::string loggable_name(const char *name) {
    constexpr size_t kShown = 64;
    const size_t n = strnlen(name, kShown + 1);
    if (n <= kShown) return name;
    return std::string(name, kShown) + "... (" + std::to_string(std::strlen(name)) + " bytes)";
}

// -FI_EINVAL, with a WARN line, for an fi_addr_t with bits the AV gives no meaning.
int check_meaningful(const Av *av, const char *call, fi_addr_t addr) {
    const uint64_t extra = encoding::meaningless_bits(addr, av->rx_ctx_bits);
    if (extra == 0) return 0;
    UFI_LOG_WARN(Subsys::Av,
                 "{}: fi_addr {:#x} sets bits {:#x}, which mean nothing to this AV (rx_ctx_bits "
                 "{}; ufi has no peer groups)",
                 call, addr, extra, av->rx_ctx_bits);
    return -FI_EINVAL;
}

}  // namespace

int open_av(Domain *domain, fi_av_attr *attr, void *context, fi_ops *ops, fi_ops_av *av_ops,
            Av **out) noexcept {
    try {
        const int type = raw_enum(attr->type);
        if (type != FI_AV_MAP && type != FI_AV_TABLE && type != FI_AV_UNSPEC) {
            UFI_LOG_WARN(Subsys::Av, "fi_av_open: attr->type {} is not an AV type", type);
            return -FI_EINVAL;
        }
        // fi_domain(3): a domain whose av_type is FI_AV_MAP was asked for map AVs only (an
        // unspecified av_type is answered FI_AV_UNSPEC: either), and FI_AV_MAP behaves as a
        // table: a map AV on a table domain is accepted.
        if (domain->av_type == FI_AV_MAP && type == FI_AV_TABLE) {
            UFI_LOG_WARN(
                Subsys::Av,
                "fi_av_open: attr->type FI_AV_TABLE on a domain opened with av_type FI_AV_MAP");
            return -FI_EINVAL;
        }
        if (attr->rx_ctx_bits < 0 || attr->rx_ctx_bits > encoding::kMaxRxCtxBits) {
            UFI_LOG_WARN(Subsys::Av,
                         "fi_av_open: attr->rx_ctx_bits {} is out of range: ufi keeps AV indices "
                         "in the low 32 "
                         "bits of an fi_addr_t, so 0 to 32 bits are available",
                         attr->rx_ctx_bits);
            return -FI_EINVAL;
        }
        const uint64_t flags = attr->flags;
        if ((flags & FI_READ) && attr->name == nullptr) {
            UFI_LOG_WARN(
                Subsys::Av,
                "fi_av_open: FI_READ needs attr->name (a read-only AV is a named, existing one)");
            return -FI_EINVAL;
        }
        const bool named = attr->name != nullptr;
        std::unique_ptr<Backing> backing;
        bool created = false;
        if (named) {
            const std::string &dir = config::registry().get_string("UFI_AV_SHM_DIR");
            std::string why;
            const auto g = Table::geometry_for(attr->count, true, layout::kSharedKeyCapacity);
            const int rc = open_shm_backing(dir.empty() ? "/dev/shm" : dir, attr->name,
                                            (flags & FI_READ) != 0, g, backing, created, &why);
            if (rc == -FI_ENOENT) {
                // A read-only open of a name nobody created yet is a question, not an error:
                // MPICH asks for "FI_NAMED_AV_0" to learn whether another process made it.
                UFI_LOG_INFO(Subsys::Av, "fi_av_open: attr->name \"{}\": {}",
                             loggable_name(attr->name), why);
                return rc;
            }
            if (rc != 0) {
                UFI_LOG_WARN(Subsys::Av, "fi_av_open: attr->name \"{}\": {}",
                             loggable_name(attr->name), why);
                return rc;
            }
        } else {
            const auto g = Table::geometry_for(
                attr->count, false, domain->av_auth_keys ? layout::kSharedKeyCapacity : 0);
            if (int rc = make_heap_backing(g, backing); rc != 0) return rc;
        }
        auto table = std::make_unique<Table>(std::move(backing));
        auto *av = new Av(domain, std::move(table));
        av->fid.fclass = FI_CLASS_AV;
        av->fid.context = context;
        av->fid.ops = ops;
        av->ops = av_ops;
        av->str_format = domain->info != nullptr && domain->info->addr_format == FI_ADDR_STR;
        if (domain->info != nullptr && is_socket_format(domain->info->addr_format)) {
            av->socket_format = domain->info->addr_format;
        }
        av->addr_len = domain->offer.addr_len;
        av->type =
            type == FI_AV_UNSPEC ? (domain->av_type == FI_AV_MAP ? FI_AV_MAP : FI_AV_TABLE) : type;
        av->rx_ctx_bits = attr->rx_ctx_bits;
        av->open_flags = flags;
        av->user_id_mode = (flags & FI_AV_USER_ID) != 0;
        av->read_only = (flags & FI_READ) != 0;
        av->event_mode = (flags & FI_EVENT) != 0;
        av->auth_keys = domain->av_auth_keys;
        if (named) av->name = attr->name;
        av->holds.assign(av->table->key_capacity(), 0);
        if (type == FI_AV_UNSPEC) set_raw_enum(attr->type, av->type);
        if (named && attr->map_addr == nullptr) {
            // fi_av(3) leaves map_addr's meaning to the provider; the one programs rely on
            // (sockets, psm) is an array of fi_addr_t by insertion slot. A table's fi_addr_t is
            // its slot (encoding::entry_addr), the same in every process that shares the AV.
            // For the count the AV was opened with (at least 1, at most kMaxMapSlots: a count
            // is a hint, and a large one must not make the open fail or cost much).
            const size_t n = std::clamp<size_t>(attr->count, 1, kMaxMapSlots);
            av->slot_addrs = std::make_unique<fi_addr_t[]>(n);
            for (size_t i = 0; i < n; ++i) av->slot_addrs[i] = encoding::entry_addr(i);
            attr->map_addr = av->slot_addrs.get();
        }
        domain->add_child();
        UFI_LOG_INFO(Subsys::Av, "AV opened: {}{}{}, count hint {}, rx_ctx_bits {}, flags {:#x}",
                     type_name(av->type),
                     named ? (created ? ", created shared AV " : ", joined shared AV ") : "",
                     named ? loggable_name(attr->name) : std::string(), attr->count,
                     attr->rx_ctx_bits, flags);
        *out = av;
        return 0;
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

int close_av(Av *av) noexcept {
    const int eps = av->endpoints.load();
    if (eps != 0) {
        UFI_LOG_WARN(Subsys::Av, "fi_close(av): {} endpoints are still bound to it", eps);
        return -FI_EBUSY;
    }
    {
        std::lock_guard<std::mutex> g(av->mutex);
        size_t held = 0;
        for (uint32_t h : av->holds) held += h != 0;
        if (held != 0) {
            UFI_LOG_WARN(
                Subsys::Av,
                "fi_close(av): {} authorization keys are still held by enabled endpoints or MRs",
                held);
            return -FI_EBUSY;
        }
        if (av->eq != nullptr) eq::detach(av->eq);
        av->eq = nullptr;
    }
    av->domain->remove_child();
    delete av;
    return 0;
}

int bind_eq(Av *av, fid_t eq_fid) noexcept {
    eq::Eq *e = eq::eq_of(eq_fid);
    if (e == nullptr) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_bind: eq is not an EQ opened by ufi");
        return -FI_EINVAL;
    }
    std::lock_guard<std::mutex> g(av->mutex);
    if (av->eq != nullptr) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_bind: an EQ is already bound to this AV");
        return -FI_EINVAL;
    }
    eq::attach(e);
    av->eq = e;
    if (!av->event_mode) {
        UFI_LOG_INFO(Subsys::Av,
                     "fi_av_bind: the AV was not opened with FI_EVENT; the EQ gets no AV events");
    }
    return 0;
}

int remove(Av *av, const fi_addr_t *fi_addr, size_t count, uint64_t flags) noexcept {
    if (av->read_only) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_remove: the AV was opened read-only (FI_READ)");
        return -FI_EACCES;
    }
    if ((flags & FI_AV_USER_ID) && (av->user_id_mode || av->auth_keys)) {
        UFI_LOG_WARN(
            Subsys::Av,
            "fi_av_remove: flags FI_AV_USER_ID is invalid on an AV opened with FI_AV_USER_ID "
            "or a domain with FI_AV_AUTH_KEY");
        return -FI_EINVAL;
    }
    const bool keys = (flags & FI_AUTH_KEY) != 0;
    if (keys && !av->auth_keys) {
        UFI_LOG_WARN(Subsys::Av,
                     "fi_av_remove: flags FI_AUTH_KEY on a domain without FI_AV_AUTH_KEY");
        return -FI_EINVAL;
    }
    Table::Guard guard(*av->table);
    if (!guard.ok()) return -FI_EOTHER;
    std::lock_guard<std::mutex> g(av->mutex);
    // Check every address first: a rejected call removes nothing.
    for (size_t i = 0; i < count; ++i) {
        const fi_addr_t a = fi_addr[i];
        bool ok = encoding::is_canonical(a) && encoding::is_key_handle(a) == keys;
        if (ok && keys) {
            Table::KeyView kv;
            ok = av->table->key_view(encoding::slot_of(a), kv);
        } else if (ok) {
            Table::View v;
            ok = av->table->view(encoding::slot_of(a), v);
        }
        if (!ok) {
            UFI_LOG_WARN(Subsys::Av, "fi_av_remove: fi_addr[{}] = {:#x} is not {} in this AV{}", i,
                         a, keys ? "an authorization-key handle" : "an inserted address",
                         (!keys && encoding::is_canonical(a) && encoding::is_key_handle(a))
                             ? " (a key handle: remove it with FI_AUTH_KEY)"
                             : "");
            return -FI_EINVAL;
        }
        if (keys) {
            const uint64_t slot = encoding::slot_of(a);
            if (slot < av->holds.size() && av->holds[slot] != 0) {
                UFI_LOG_WARN(Subsys::Av,
                             "fi_av_remove: key {:#x} is held by {} enabled endpoints or MRs", a,
                             av->holds[slot]);
                return -FI_EBUSY;
            }
            if (const uint32_t bound = av->table->key_bound_locked(slot); bound != 0) {
                UFI_LOG_WARN(
                    Subsys::Av,
                    "fi_av_remove: key {:#x} has {} addresses inserted with it; remove them first "
                    "(ufi cannot disassociate an address from its key)",
                    a, bound);
                return -FI_EBUSY;
            }
        }
    }
    for (size_t i = 0; i < count; ++i) {
        // A duplicate in the list was removed by its first occurrence.
        if (keys) {
            (void)av->table->remove_key_locked(encoding::slot_of(fi_addr[i]));
        } else {
            (void)av->table->remove_locked(encoding::slot_of(fi_addr[i]));
            av->changes.fetch_add(1, std::memory_order_release);
        }
    }
    return 0;
}

namespace {

// lookup_entry's outcomes besides 0 and the caller's errors.
constexpr int kReadAgain = 1;      // the entry changed while it was read without the lock
constexpr int kNoEntry = 2;        // the slot holds no address
constexpr int kNoTcpAddress = 3;   // socket-address AVs: the entry names no tcp listener

// One entry in the AV's format into buf. `locked`: the caller holds the table lock; otherwise
// the bytes are read as a seqlock reader does (copy_in_racing, then Table::unchanged), and
// kReadAgain says they may be torn. A name longer than kLocalCopy is read under the lock.
constexpr size_t kLocalCopy = 1024;

int lookup_entry(const Av *av, uint64_t slot, void *buf, size_t *len, bool exact, bool locked) {
    Table::View v;
    // No entry: said under the lock only (read without it, a slot being filled again with a
    // longer name can show its new length beside its old arena offset for a moment).
    if (!av->table->view(slot, v)) return locked ? kNoEntry : kReadAgain;
    if (!locked && v.len > kLocalCopy) return kReadAgain;
    if (av->socket_format != 0 || av->str_format) {
        // Parsed from a copy of its own, which the version check then vouches for.
        uint8_t copy[kLocalCopy];
        const uint8_t *blob = v.blob;
        if (!locked) {
            copy_in_racing(copy, v.blob, v.len);
            if (!Table::unchanged(v)) return kReadAgain;
            blob = copy;
        }
        if (av->socket_format != 0) {
            // The tcp listener the entry names (an entry another domain's process inserted in
            // a named AV may have none: then it has no socket address).
            sockaddr_storage sa;
            const size_t n = socket_of_blob(blob, v.len, av->socket_format, sa);
            if (n == 0) return kNoTcpAddress;
            if (exact && *len < n) {
                *len = n;
                return -FI_ETOOSMALL;
            }
            copy_truncated(&sa, n, buf, len);
            return 0;
        }
        const std::string text = address::to_string(blob, v.len);
        if (exact && *len < text.size() + 1) {
            *len = text.size() + 1;
            return -FI_ETOOSMALL;
        }
        copy_truncated(text.c_str(), text.size() + 1, buf, len);
        return 0;
    }
    // The domain's fixed length (an entry another process's domain inserted into a named
    // AV may be longer: then its own length).
    const size_t needed = std::max<size_t>(v.len, av->addr_len);
    if (exact && *len < needed) {
        if (!locked && !Table::unchanged(v)) return kReadAgain;
        *len = needed;
        return -FI_ETOOSMALL;
    }
    // Straight into the caller's buffer; a torn copy is overwritten by the read under the lock.
    if (buf != nullptr && *len > 0) {
        const size_t out = std::min(needed, *len);
        const size_t data = std::min<size_t>(v.len, out);
        if (locked) std::memcpy(buf, v.blob, data);
        else copy_in_racing(static_cast<uint8_t *>(buf), v.blob, data);
        std::memset(static_cast<uint8_t *>(buf) + data, 0, out - data);
        if (!locked && !Table::unchanged(v)) return kReadAgain;
    }
    *len = needed;
    return 0;
}

}  // namespace

int lookup(Av *av, fi_addr_t addr, void *buf, size_t *len, bool exact) noexcept {
    try {
        const char *call = exact ? "fi_av_lookup2" : "fi_av_lookup";
        if (int rc = check_meaningful(av, call, addr); rc != 0) return rc;
        const fi_addr_t low = encoding::low(addr);
        if (encoding::is_key_handle(low)) {
            UFI_LOG_WARN(Subsys::Av, "{}: fi_addr {:#x} is {}", call, addr,
                         addr == FI_ADDR_NOTAVAIL ? "FI_ADDR_NOTAVAIL"
                                                  : "an authorization-key handle, not an address");
            return -FI_EINVAL;
        }
        // Without the lock first: only changes take it, and a lookup that raced one (the
        // entry's version moved while its bytes were read) reads again under it. Entry and
        // arena chunks never move, so the bytes read are always mapped.
        const uint64_t slot = encoding::slot_of(low);
        int rc = lookup_entry(av, slot, buf, len, exact, false);
        if (rc == kReadAgain) {
            Table::Guard guard(*av->table);
            if (!guard.ok()) return -FI_EOTHER;
            rc = lookup_entry(av, slot, buf, len, exact, true);
        }
        if (rc == kNoEntry) {
            UFI_LOG_WARN(Subsys::Av, "{}: fi_addr {:#x} names no inserted address", call, addr);
            return -FI_EINVAL;
        }
        if (rc == kNoTcpAddress) {
            UFI_LOG_WARN(Subsys::Av, "{}: fi_addr {:#x} names no tcp address", call, addr);
            return -FI_EINVAL;
        }
        return rc;
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
}

const char *straddr(const Av *av, const void *addr, char *buf, size_t *len) noexcept {
    try {
        std::string text;
        std::string why;
        if (av->socket_format != 0) {
            // Only the bytes its family says are read (socket_address_length).
            std::vector<uint8_t> blob;
            const size_t n = blob_of_socket(addr, sizeof(sockaddr_in6), av->socket_format, blob, why);
            if (n == 0) {
                UFI_LOG_WARN(Subsys::Av, "fi_av_straddr: addr is not a socket address: {}", why);
                return nullptr;
            }
            text = socket_string(addr, n);
        } else if (av->str_format) {
            // A string of at most the domain's longest address string (its NUL within it).
            const size_t max = address::kStringPrefix.size() + (av->addr_len * 4 + 2) / 3;
            const char *s = static_cast<const char *>(addr);
            const size_t n = strnlen(s, max + 1);
            std::vector<uint8_t> blob;
            if (n > max) {
                UFI_LOG_WARN(Subsys::Av, "fi_av_straddr: addr has no NUL within {} characters",
                             max);
                return nullptr;
            }
            if (!address::from_string(std::string_view(s, n), blob, &why)) {
                UFI_LOG_WARN(Subsys::Av, "fi_av_straddr: addr is not a ufi address: {}", why);
                return nullptr;
            }
            text.assign(s, n);
        } else {
            // Exactly the domain's address length: nothing past it is read (a scalable
            // endpoint's name says its own length).
            scalable::View sv;
            const size_t n = !scalable::starts_scalable(addr, av->addr_len)
                                 ? address::content_size(addr, av->addr_len, &why)
                             : scalable::parse(addr, scalable::announced_size(addr, av->addr_len, &why), sv, &why)
                                 ? sv.total
                                 : 0;
            if (n == 0) {
                UFI_LOG_WARN(Subsys::Av, "fi_av_straddr: addr is not a ufi address: {}", why);
                return nullptr;
            }
            text = address::to_string(addr, n);
        }
        if (*len > 0) {
            const size_t n = std::min(text.size(), *len - 1);
            std::memcpy(buf, text.data(), n);
            buf[n] = '\0';
        }
        *len = text.size() + 1;
        return buf;
    } catch (...) {
        return nullptr;
    }
}

int insert_auth_key(Av *av, const void *key, size_t size, fi_addr_t *out) noexcept {
    if (!av->auth_keys) {
        UFI_LOG_WARN(
            Subsys::Av,
            "fi_av_insert_auth_key: the domain was not opened with auth_key_size FI_AV_AUTH_KEY");
        return -FI_EINVAL;
    }
    if (size == 0 || size > layout::kMaxKeySize) {
        UFI_LOG_WARN(
            Subsys::Av,
            "fi_av_insert_auth_key: auth_key_size {} is invalid: ufi keys are 1 to {} bytes", size,
            layout::kMaxKeySize);
        return -FI_EINVAL;
    }
    if (av->read_only) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_insert_auth_key: the AV was opened read-only (FI_READ)");
        return -FI_EACCES;
    }
    Table::Guard guard(*av->table);
    if (!guard.ok()) return -FI_EOTHER;
    uint64_t slot = 0;
    const int rc = av->table->insert_key_locked(static_cast<const uint8_t *>(key),
                                                static_cast<uint32_t>(size), slot);
    if (rc == -FI_ENOSPC) {
        UFI_LOG_WARN(Subsys::Av,
                     "fi_av_insert_auth_key: the AV holds {} keys already (its maximum)",
                     av->table->key_capacity());
        return rc;
    }
    if (rc != 0) return rc;
    *out = encoding::key_handle(slot);
    return 0;
}

int lookup_auth_key(Av *av, fi_addr_t addr, void *buf, size_t *size) noexcept {
    if (!av->auth_keys) {
        UFI_LOG_WARN(Subsys::Av,
                     "fi_av_lookup_auth_key: the domain was not opened with FI_AV_AUTH_KEY: the AV "
                     "holds no keys");
        return -FI_EINVAL;
    }
    if (int rc = check_meaningful(av, "fi_av_lookup_auth_key", addr); rc != 0) return rc;
    const fi_addr_t low = encoding::low(addr);
    Table::Guard guard(*av->table);
    if (!guard.ok()) return -FI_EOTHER;
    uint64_t slot = 0;
    if (encoding::is_key_handle(low)) {
        slot = encoding::slot_of(low);
    } else {
        Table::View v;
        if (!av->table->view(encoding::slot_of(low), v)) {
            UFI_LOG_WARN(Subsys::Av,
                         "fi_av_lookup_auth_key: fi_addr {:#x} names no inserted address or key",
                         addr);
            return -FI_EINVAL;
        }
        if (v.key == 0) {
            UFI_LOG_WARN(Subsys::Av,
                         "fi_av_lookup_auth_key: fi_addr {:#x} was inserted without FI_AUTH_KEY",
                         addr);
            return -FI_EINVAL;
        }
        slot = v.key - 1u;
    }
    Table::KeyView kv;
    if (!av->table->key_view(slot, kv)) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_lookup_auth_key: fi_addr {:#x} names no authorization key",
                     addr);
        return -FI_EINVAL;
    }
    copy_truncated(kv.bytes, kv.len, buf, size);
    return 0;
}

int set_user_id(Av *av, fi_addr_t addr, fi_addr_t user_id, uint64_t flags) noexcept {
    if (!av->user_id_mode) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_set_user_id: the AV was not opened with FI_AV_USER_ID");
        return -FI_EINVAL;
    }
    const bool key = (flags & FI_AUTH_KEY) != 0;
    if (!encoding::is_canonical(addr) || encoding::is_key_handle(addr) != key) {
        UFI_LOG_WARN(
            Subsys::Av, "fi_av_set_user_id: fi_addr {:#x} is not {}", addr,
            key ? "an authorization-key handle (flags FI_AUTH_KEY)" : "an address fi_addr_t");
        return -FI_EINVAL;
    }
    Table::Guard guard(*av->table);
    if (!guard.ok()) return -FI_EOTHER;
    const uint64_t slot = encoding::slot_of(addr);
    if (key) {
        Table::KeyView kv;
        if (!av->table->key_view(slot, kv)) {
            UFI_LOG_WARN(Subsys::Av, "fi_av_set_user_id: fi_addr {:#x} names no authorization key",
                         addr);
            return -FI_EINVAL;
        }
        av->changes.fetch_add(1, std::memory_order_release);
        return av->key_user_ids.set(slot, kv.seq, user_id);
    }
    Table::View v;
    if (!av->table->view(slot, v)) {
        UFI_LOG_WARN(Subsys::Av, "fi_av_set_user_id: fi_addr {:#x} names no inserted address",
                     addr);
        return -FI_EINVAL;
    }
    av->changes.fetch_add(1, std::memory_order_release);
    return av->user_ids.set(slot, v.seq, user_id);
}

// ---- binding.h ----

uint64_t changes(const Av *av) noexcept {
    return av->changes.load(std::memory_order_acquire);
}

void attach_endpoint(Av *av) noexcept {
    if (av != nullptr) av->endpoints.fetch_add(1);
}

void detach_endpoint(Av *av) noexcept {
    if (av != nullptr) av->endpoints.fetch_sub(1);
}

std::vector<fi_addr_t> hold_auth_keys(Av *av) {
    std::vector<fi_addr_t> keys;
    if (av == nullptr || !av->auth_keys) return keys;
    std::lock_guard<std::mutex> g(av->mutex);
    const uint32_t high =
        std::min<uint32_t>(av->table->keys_high(), static_cast<uint32_t>(av->holds.size()));
    for (uint32_t s = 0; s < high; ++s) {
        Table::KeyView kv;
        if (!av->table->key_view(s, kv)) continue;
        keys.push_back(encoding::key_handle(s));
        ++av->holds[s];
    }
    return keys;
}

void release_auth_keys(Av *av, const std::vector<fi_addr_t> &keys) noexcept {
    if (av == nullptr) return;
    std::lock_guard<std::mutex> g(av->mutex);
    for (fi_addr_t k : keys) {
        const uint64_t s = encoding::slot_of(k);
        if (encoding::is_key_handle(k) && s < av->holds.size() && av->holds[s] > 0) --av->holds[s];
    }
}

int resolve(const Av *av, fi_addr_t addr, PeerEntry &out) noexcept {
    if (encoding::meaningless_bits(addr, av->rx_ctx_bits) != 0) return -FI_EINVAL;
    const fi_addr_t low = encoding::low(addr);
    if (encoding::is_key_handle(low)) return -FI_EINVAL;
    const uint64_t index = encoding::slot_of(low);
    Table::View v;
    if (!av->table->view(index, v)) return -FI_EINVAL;
    out.blob = v.blob;
    out.len = v.len;
    out.version = v.seq;
    out.auth_key = v.key != 0 ? encoding::key_handle(v.key - 1u) : FI_ADDR_NOTAVAIL;
    out.firewall = (v.flags & layout::kEntryFirewall) != 0;
    fi_addr_t id = 0;
    if (av->user_ids.get(index, v.seq, id)) {
        out.user_id = id;
    } else {
        out.user_id = av->user_id_mode ? FI_ADDR_NOTAVAIL : encoding::entry_addr(index);
    }
    return 0;
}

uint32_t entry_version(const Av *av, fi_addr_t addr) noexcept {
    if (encoding::meaningless_bits(addr, av->rx_ctx_bits) != 0) return 0;
    const fi_addr_t low = encoding::low(addr);
    if (encoding::is_key_handle(low)) return 0;
    return av->table->version(encoding::slot_of(low));
}

const uint32_t *entry_version_ptr(const Av *av, fi_addr_t addr) noexcept {
    if (encoding::meaningless_bits(addr, av->rx_ctx_bits) != 0) return nullptr;
    const fi_addr_t low = encoding::low(addr);
    if (encoding::is_key_handle(low)) return nullptr;
    return av->table->version_ptr(encoding::slot_of(low));
}

int find_identity(const Av *av, uint64_t uuid, uint32_t endpoint_id, fi_addr_t &addr,
                  PeerEntry &out) noexcept {
    const uint64_t high = av->table->high();
    for (uint64_t i = 0; i < high; ++i) {
        Table::View v;
        if (!av->table->view(i, v)) continue;
        if (v.len < address::kHeaderSize) continue;
        // A scalable endpoint's entry carries the identity of each of its contexts: a
        // message from one of its transmit contexts comes from this entry.
        scalable::View sv;
        const bool is_scalable = scalable::starts_scalable(v.blob, v.len) &&
                                 scalable::parse(v.blob, v.len, sv);
        const uint32_t names = is_scalable ? sv.count() : 1;
        for (uint32_t n = 0; n < names; ++n) {
            const uint8_t *name = is_scalable ? sv.sub(n) : v.blob;
            uint64_t u = 0;
            uint32_t id = 0;
            std::memcpy(&u, name + address::kUuidOffset, sizeof u);  // little-endian hosts
            std::memcpy(&id, name + address::kEndpointIdOffset, sizeof id);
            if (u != uuid || id != endpoint_id) continue;
            addr = encoding::entry_addr(i);
            return resolve(av, addr, out);
        }
    }
    return -FI_ENOENT;
}

int find_listener(const Av *av, const address::EndpointAddress &peer, fi_addr_t &addr,
                  PeerEntry &out) noexcept {
    try {
        const uint64_t high = av->table->high();
        for (uint64_t i = 0; i < high; ++i) {
            Table::View v;
            if (!av->table->view(i, v) || v.len < address::kHeaderSize) continue;
            uint64_t u = 0;
            std::memcpy(&u, v.blob + address::kUuidOffset, sizeof u);
            if (u != 0) continue;  // an identity, not a host and port
            address::EndpointAddress a;
            if (!address::unpack(v.blob, v.len, a) || !address::shares_tcp_listener(a, peer)) continue;
            addr = encoding::entry_addr(i);
            return resolve(av, addr, out);
        }
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    }
    return -FI_ENOENT;
}

fi_addr_t key_report_id(const Av *av, fi_addr_t key) noexcept {
    const fi_addr_t low = encoding::low(key);
    if (!encoding::is_key_handle(low)) return FI_ADDR_NOTAVAIL;
    const uint64_t slot = encoding::slot_of(low);
    Table::KeyView kv;
    if (!av->table->key_view(slot, kv)) return FI_ADDR_NOTAVAIL;
    fi_addr_t id = 0;
    if (av->key_user_ids.get(slot, kv.seq, id)) return id;
    return av->user_id_mode ? FI_ADDR_NOTAVAIL : low;
}

int auth_key_bytes(const Av *av, fi_addr_t key, const uint8_t *&bytes, size_t &len) noexcept {
    const fi_addr_t low = encoding::low(key);
    if (!encoding::is_key_handle(low)) return -FI_EINVAL;
    Table::KeyView kv;
    if (!av->table->key_view(encoding::slot_of(low), kv)) return -FI_EINVAL;
    bytes = kv.bytes;
    len = kv.len;
    return 0;
}

int rx_ctx_bits(const Av *av) noexcept {
    return av->rx_ctx_bits;
}

}  // namespace ufi::runtime::av
