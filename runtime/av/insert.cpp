// Insertion into an AV: one engine (insert_common) for every source of addresses: FI_ADDR_UCX
// blobs laid end to end, FI_ADDR_STR string arrays, and host/service pairs (insertsvc,
// insertsym) turned into tcp addresses. The engine applies the flags (FI_AUTH_KEY,
// FI_AV_USER_ID, FI_SYNC_ERR, FI_FIREWALL_ADDR), reports failures (FI_ADDR_NOTAVAIL, one WARN
// line per call) and, on FI_EVENT AVs, the EQ events.
#include "runtime/av/addr_encoding.h"
#include "runtime/av/av.h"
#include "runtime/eq/binding.h"
#include "base/log/log.h"
#include "transports/address.h"
#include "runtime/av/socket_format.h"
#include "transports/address_svc.h"
#include "transports/scalable_name.h"

#include <rdma/fi_errno.h>

#include <netinet/in.h>

#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace ufi::runtime::av {

namespace address = transports::address;
namespace scalable = transports::scalable;
using log::Subsys;

namespace {

// One address to insert, or why it cannot be.
struct Item {
    const uint8_t *blob = nullptr;
    uint32_t len = 0;
    int status = 0;
};

struct Failure {
    size_t index;
    int status;
};

const char *status_text(int status) {
    switch (status) {
        case -FI_EINVAL:
            return "invalid address";
        case -FI_ENOSPC:
            return "the AV is full";
        case -FI_ENOMEM:
            return "out of memory";
        case -FI_EADDRNOTAVAIL:
            return "address not available";
        default:
            return "error";
    }
}

// Checks that only the engine can make (they depend on the AV), then inserts `count` items
// produced by next(i, why). Returns the number inserted, 0 on FI_EVENT AVs, or a negative error
// when nothing was attempted.
template <typename Next>
int insert_common(Av *av, const char *call, size_t count, fi_addr_t *fi_addr, uint64_t flags,
                  void *context, Next &&next) {
    if (av->read_only) {
        UFI_LOG_WARN(Subsys::Av, "{}: the AV was opened read-only (FI_READ)", call);
        return -FI_EACCES;
    }
    if ((flags & FI_AV_USER_ID) && (av->user_id_mode || av->auth_keys)) {
        UFI_LOG_WARN(
            Subsys::Av,
            "{}: flags FI_AV_USER_ID is invalid on an AV opened with FI_AV_USER_ID or a domain "
            "with FI_AV_AUTH_KEY (use fi_av_set_user_id)",
            call);
        return -FI_EINVAL;
    }
    if ((flags & FI_AUTH_KEY) && !av->auth_keys) {
        UFI_LOG_WARN(Subsys::Av, "{}: flags FI_AUTH_KEY on a domain not opened with FI_AV_AUTH_KEY",
                     call);
        return -FI_EINVAL;
    }
    if ((flags & FI_SYNC_ERR) && av->event_mode) {
        UFI_LOG_WARN(
            Subsys::Av,
            "{}: flags FI_SYNC_ERR applies to synchronous AVs only (this one has FI_EVENT)", call);
        return -FI_EINVAL;
    }
    eq::Eq *eq = nullptr;
    if (av->event_mode) {
        std::lock_guard<std::mutex> g(av->mutex);
        eq = av->eq;
        if (eq == nullptr) {
            UFI_LOG_WARN(Subsys::Av,
                         "{}: the AV was opened with FI_EVENT and no EQ is bound (fi_av_bind)",
                         call);
            return -FI_ENOEQ;
        }
    }
    int *sync = (flags & FI_SYNC_ERR) ? static_cast<int *>(context) : nullptr;
    const uint16_t entry_flags = (flags & FI_FIREWALL_ADDR) ? layout::kEntryFirewall : 0;
    std::vector<Failure> failures;
    size_t inserted = 0;
    size_t failed = 0;
    size_t first_failed = 0;
    int first_status = 0;
    std::string first_why;
    std::string why;
    {
        Table::Guard guard(*av->table);
        if (!guard.ok()) return -FI_EOTHER;
        for (size_t i = 0; i < count; ++i) {
            why.clear();
            Item it = next(i, why);
            int status = it.status;
            uint16_t key = 0;
            if (status == 0 && (flags & FI_AUTH_KEY)) {
                const fi_addr_t h = fi_addr[i];
                Table::KeyView kv;
                if (encoding::is_canonical(h) && encoding::is_key_handle(h) &&
                    av->table->key_view(encoding::slot_of(h), kv)) {
                    key = static_cast<uint16_t>(encoding::slot_of(h) + 1);
                } else {
                    status = -FI_EINVAL;
                    why = "fi_addr[" + std::to_string(i) +
                          "] is not an authorization-key handle of this AV";
                }
            }
            uint64_t index = 0;
            if (status == 0)
                status = av->table->insert_locked(it.blob, it.len, key, entry_flags, index);
            if (status == 0 && (flags & FI_AV_USER_ID)) {
                Table::View v;
                av->table->view(index, v);
                status = av->user_ids.set(index, v.seq, fi_addr[i]);
                if (status != 0) av->table->remove_locked(index);
            }
            if (status == 0) {
                ++inserted;
                av->changes.fetch_add(1, std::memory_order_release);
                if (fi_addr != nullptr) fi_addr[i] = encoding::entry_addr(index);
            } else {
                if (failed++ == 0) {
                    first_failed = i;
                    first_status = status;
                    first_why = why.empty() ? status_text(status) : why;
                }
                if (fi_addr != nullptr) fi_addr[i] = FI_ADDR_NOTAVAIL;
                if (eq != nullptr) failures.push_back({i, status});
            }
            // FI_SYNC_ERR: 0 or a fabric errno code, positive as libfabric's providers
            // write it (and as the err field of FI_EVENT error entries).
            if (sync != nullptr) sync[i] = -status;
        }
    }
    if (failed != 0) {
        UFI_LOG_WARN(Subsys::Av, "{}: {} of {} addresses not inserted; address {}: {} ({})", call,
                     failed, count, first_failed, first_why, fi_strerror(-first_status));
    }
    if (eq == nullptr) return static_cast<int>(inserted);
    // FI_EVENT: one error entry per failed address (data: its index), then the completion.
    for (const Failure &f : failures) {
        fi_eq_err_entry err;
        std::memset(&err, 0, sizeof err);
        err.fid = &av->fid;
        err.context = context;
        err.data = f.index;
        err.err = -f.status;
        if (eq::post_error(eq, err) != 0) {
            UFI_LOG_WARN(Subsys::Av, "{}: out of memory: the error event of address {} is lost",
                         call, f.index);
        }
    }
    fi_eq_entry done;
    std::memset(&done, 0, sizeof done);
    done.fid = &av->fid;
    done.context = context;
    done.data = inserted;
    if (eq::post(eq, FI_AV_COMPLETE, &done, sizeof done, 0) != 0) {
        UFI_LOG_WARN(Subsys::Av, "{}: out of memory: the FI_AV_COMPLETE event is lost", call);
    }
    return 0;
}

// Host/service insertions: the blobs are built before the table is locked (name resolution
// may take a while).
struct Built {
    std::vector<uint8_t> blob;
    int status = 0;
    std::string why;
};

Built build_from_service(const char *node, const char *service) {
    Built b;
    sockaddr_storage ss;
    std::string why;
    const auto rc = address::resolve(node, service, ss, &why);
    if (rc != address::ResolveError::None) {
        b.status = -FI_EADDRNOTAVAIL;
        b.why = why;
        return b;
    }
    b.blob = address::tcp_peer_address(reinterpret_cast<const sockaddr *>(&ss), &b.why);
    if (b.blob.empty()) b.status = -FI_EINVAL;
    return b;
}

int insert_built(Av *av, const char *call, std::vector<Built> &items, fi_addr_t *fi_addr,
                 uint64_t flags, void *context) {
    return insert_common(av, call, items.size(), fi_addr, flags, context,
                         [&](size_t i, std::string &why) {
                             Built &b = items[i];
                             if (b.status != 0) {
                                 why = b.why;
                                 return Item{nullptr, 0, b.status};
                             }
                             return Item{b.blob.data(), static_cast<uint32_t>(b.blob.size()), 0};
                         });
}

}  // namespace

int insert_ucx(Av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
               void *context) noexcept {
    try {
        // Addresses are the domain's fixed length, laid end to end: entry i is judged on its
        // own addr_len bytes, and no byte past count * addr_len is read. A scalable
        // endpoint's name (transports/scalable_name.h) says its own length: the walk takes it
        // whole (a damaged one fails, and the walk goes on at the fixed length).
        const auto *p = static_cast<const uint8_t *>(addr);
        const size_t stride = av->addr_len;
        return insert_common(
            av, "fi_av_insert", count, fi_addr, flags, context, [&](size_t, std::string &why) {
                const uint8_t *at = p;
                if (scalable::starts_scalable(at, stride)) {
                    const size_t total = scalable::announced_size(at, stride, &why);
                    p += total != 0 ? total : stride;
                    scalable::View v;
                    if (total == 0 || !scalable::parse(at, total, v, &why)) {
                        return Item{nullptr, 0, -FI_EINVAL};
                    }
                    return Item{at, static_cast<uint32_t>(total), 0};
                }
                p += stride;
                const size_t n = address::content_size(at, stride, &why);
                if (n == 0) return Item{nullptr, 0, -FI_EINVAL};
                return Item{at, static_cast<uint32_t>(n), 0};
            });
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

int insert_socket(Av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
                  void *context) noexcept {
    try {
        // FI_SOCKADDR_IN / _IN6: one fixed size per entry, the format's, as libfabric's tcp
        // provider reads them; each is judged on its own bytes.
        const size_t stride =
            av->socket_format == FI_SOCKADDR_IN ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
        const auto *base = static_cast<const uint8_t *>(addr);
        std::vector<uint8_t> scratch;
        return insert_common(
            av, "fi_av_insert", count, fi_addr, flags, context, [&](size_t i, std::string &why) {
                if (blob_of_socket(base + i * stride, stride, av->socket_format, scratch, why) == 0) {
                    return Item{nullptr, 0, -FI_EINVAL};
                }
                return Item{scratch.data(), static_cast<uint32_t>(scratch.size()), 0};
            });
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

namespace {

// The longest "fi_ufi://" string of an address of `addr_len` bytes (without its NUL).
size_t max_string_length(size_t addr_len) {
    return address::kStringPrefix.size() + (addr_len * 4 + 2) / 3;
}

// One FI_ADDR_STR string of at most `max` characters, decoded into `scratch`.
Item decode_string(const char *s, size_t max, size_t addr_len, std::vector<uint8_t> &scratch,
                   std::string &why) {
    const size_t n = strnlen(s, max + 1);
    if (n > max) {
        why = "no NUL within " + std::to_string(max) +
              " characters, the longest address string of this domain";
        return Item{nullptr, 0, -FI_EINVAL};
    }
    if (!address::from_string(std::string_view(s, n), scratch, &why))
        return Item{nullptr, 0, -FI_EINVAL};
    if (scratch.size() > addr_len) {
        why = "its address of " + std::to_string(scratch.size()) +
              " bytes is longer than this domain's " + std::to_string(addr_len) +
              "-byte addresses (peers must select the same transports)";
        return Item{nullptr, 0, -FI_EINVAL};
    }
    return Item{scratch.data(), static_cast<uint32_t>(scratch.size()), 0};
}

// A value that can be a pointer to a user's string: above the lowest address Linux maps
// (vm.mmap_min_addr's default, 64 KiB) and below the top of user space (x86-64's 47 bits; other
// 64-bit CPUs' 48 to 52). Text never is: its top bytes are not zero.
bool plausible_pointer(uintptr_t v) {
#if defined(__x86_64__)
    constexpr uintptr_t kTop = uintptr_t{1} << 47;
#else
    constexpr uintptr_t kTop = uintptr_t{1} << 52;
#endif
    return v >= 0x10000 && v < kTop;
}

// Whether an FI_ADDR_STR buffer is a char ** array rather than packed strings: its first
// 8 bytes are a plausible pointer. A string of 8 characters or more has no NUL there, so it
// needs no read past its first NUL; a shorter one is malformed either way, and a buffer that
// holds even one entry holds 8 bytes (a pointer, or "fi_ufi:/").
bool looks_like_pointer_array(const char *raw) {
    if (std::strncmp(raw, address::kStringPrefix.data(), 8) == 0) return false;
    if (strnlen(raw, sizeof(uintptr_t)) == sizeof(uintptr_t)) return false;  // text: no NUL
    uintptr_t first = 0;
    std::memcpy(&first, raw, sizeof first);
    return plausible_pointer(first);
}

}  // namespace

int insert_str(Av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
               void *context) noexcept {
    try {
        std::vector<uint8_t> scratch;
        const size_t max = max_string_length(av->addr_len);
        // fi_av(3) says "an array of strings (char **)"; libfabric's shm provider reads
        // NUL-terminated strings stored back to back (ofiwg/libfabric#11292), and programs use
        // both. The buffer is an array of pointers only if its first 8 bytes are a plausible
        // user-space pointer (plausible_pointer); anything else, "fi_ufi:/..." or garbage, is
        // read as packed strings, each malformed one refused on its own (never dereferenced).
        const auto *raw = static_cast<const char *>(addr);
        if (looks_like_pointer_array(raw)) {
            const auto *strings = static_cast<const char *const *>(addr);
            return insert_common(av, "fi_av_insert", count, fi_addr, flags, context,
                                 [&](size_t i, std::string &why) {
                                     const char *s = strings[i];
                                     if (s == nullptr) {
                                         why = "addr[" + std::to_string(i) + "] is NULL";
                                         return Item{nullptr, 0, -FI_EINVAL};
                                     }
                                     if (!plausible_pointer(reinterpret_cast<uintptr_t>(s))) {
                                         why = "addr[" + std::to_string(i) +
                                               "] is no user-space pointer";
                                         return Item{nullptr, 0, -FI_EINVAL};
                                     }
                                     return decode_string(s, max, av->addr_len, scratch, why);
                                 });
        }
        const char *next = raw;  // nullptr once a string without NUL hides where the rest start
        return insert_common(
            av, "fi_av_insert", count, fi_addr, flags, context, [&](size_t, std::string &why) {
                if (next == nullptr) {
                    why = "it follows a string with no NUL, so where it starts is unknown";
                    return Item{nullptr, 0, -FI_EINVAL};
                }
                const char *s = next;
                const size_t n = strnlen(s, max + 1);
                next = n > max ? nullptr : s + n + 1;
                return decode_string(s, max, av->addr_len, scratch, why);
            });
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

int insert_svc(Av *av, const char *node, const char *service, fi_addr_t *fi_addr, uint64_t flags,
               void *context) noexcept {
    try {
        std::vector<Built> items(1);
        const std::string_view n(node);
        if (n.substr(0, address::kStringPrefix.size()) == address::kStringPrefix) {
            if (service != nullptr) {
                UFI_LOG_WARN(
                    Subsys::Av,
                    "fi_av_insertsvc: service must be NULL when node is an FI_ADDR_STR address");
                return -FI_EINVAL;
            }
            const Item it = decode_string(node, max_string_length(av->addr_len), av->addr_len,
                                          items[0].blob, items[0].why);
            items[0].status = it.status;
        } else {
            if (service == nullptr) {
                UFI_LOG_WARN(
                    Subsys::Av,
                    "fi_av_insertsvc: service is NULL: ufi needs the peer's port (or node as a "
                    "fi_ufi:// address)");
                return -FI_EINVAL;
            }
            uint16_t port = 0;
            std::string why;
            if (!address::parse_service(service, false, port, &why)) {
                UFI_LOG_WARN(Subsys::Av, "fi_av_insertsvc: {}", why);
                return -FI_EINVAL;
            }
            items[0] = build_from_service(node, service);
        }
        return insert_built(av, "fi_av_insertsvc", items, fi_addr, flags, context);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

int insert_sym(Av *av, const char *node, size_t nodecnt, const char *service, size_t svccnt,
               fi_addr_t *fi_addr, uint64_t flags, void *context) noexcept {
    try {
        std::vector<std::pair<std::string, std::string>> list;
        std::string why;
        if (int rc = expand_symmetric(node, nodecnt, service, svccnt, list, &why); rc != 0) {
            UFI_LOG_WARN(Subsys::Av, "fi_av_insertsym: {}", why);
            return rc;
        }
        std::vector<Built> items;
        items.reserve(list.size());
        for (const auto &[host, port] : list)
            items.push_back(build_from_service(host.c_str(), port.c_str()));
        return insert_built(av, "fi_av_insertsym", items, fi_addr, flags, context);
    } catch (const std::bad_alloc &) {
        return -FI_ENOMEM;
    } catch (...) {
        return -FI_EOTHER;
    }
}

}  // namespace ufi::runtime::av
