// The address vector object (fid_av): fi_av_attr semantics, insertion in ufi's two address
// formats (FI_ADDR_UCX blobs, FI_ADDR_STR "fi_ufi://" strings), host/service insertion,
// removal, lookup, authorization keys and user IDs, on top of the entry table (table.h). The
// C ABI checks (NULL pointers, unknown flags) are api/av.cpp's; state and protocol rules live
// here. Every call returns 0, a count, or a negative fi errno.
#pragma once

#include "runtime/av/binding.h"
#include "runtime/av/table.h"
#include "runtime/av/user_ids.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ufi::runtime {
struct Domain;
}
namespace ufi::runtime::eq {
class Eq;
}

namespace ufi::runtime::av {

// Flags fi_av_open accepts (attr->flags).
inline constexpr uint64_t kOpenFlags = FI_EVENT | FI_READ | FI_SYMMETRIC | FI_AV_USER_ID;
// Flags the insert calls accept.
inline constexpr uint64_t kInsertFlags =
    FI_MORE | FI_SYNC_ERR | FI_AV_USER_ID | FI_AUTH_KEY | FI_FIREWALL_ADDR;

class Av : public fid_av {
  public:
    using CStruct = fid_av;

    Av(Domain *d, std::unique_ptr<Table> t) noexcept;

    Domain *domain;
    std::unique_ptr<Table> table;
    bool str_format = false;  // the domain's addr_format is FI_ADDR_STR
    uint32_t socket_format = 0;  // FI_SOCKADDR_IN / FI_SOCKADDR_IN6 (0: not a socket format)
    size_t addr_len = 0;      // the domain's fixed address length (DomainOffer::addr_len)
    int type = FI_AV_TABLE;   // as reported (FI_AV_MAP behaves as FI_AV_TABLE)
    int rx_ctx_bits = 0;
    uint64_t open_flags = 0;
    bool user_id_mode = false;  // opened with FI_AV_USER_ID
    bool read_only = false;     // FI_READ
    bool event_mode = false;    // FI_EVENT (deprecated)
    bool auth_keys = false;     // the domain has FI_AV_AUTH_KEY
    std::string name;           // named (shared) AV, else empty

    UserIds user_ids;
    UserIds key_user_ids;
    std::atomic<int> endpoints{0};
    // Bumped by every insert, removal and user-ID change of this process: the data path looks
    // an unknown sender up again only when it moved (a named AV's other processes do not
    // bump it).
    std::atomic<uint64_t> changes{0};

    std::mutex mutex;  // eq, holds
    eq::Eq *eq = nullptr;
    std::vector<uint32_t> holds;  // per key slot: enabled endpoints/MRs holding it (this process)
    // Named AVs opened with map_addr 0: what fi_av_open returns there, the fi_addr_t of each
    // slot for the count the AV was opened with, at most 65536 (libfabric's sockets and psm
    // providers return such an array, and programs such as fabtests' fi_rdm_shared_av read it).
    std::unique_ptr<fi_addr_t[]> slot_addrs;
};

// fi_av_open. attr has been checked for NULL; -FI_EINVAL (type, rx_ctx_bits, FI_READ without a
// name, a bad name), -FI_EBADFLAGS, -FI_ENOENT (FI_READ of a named AV that does not exist),
// -FI_EACCES, -FI_ENOMEM.
int open_av(Domain *domain, fi_av_attr *attr, void *context, fi_ops *ops, fi_ops_av *av_ops,
            Av **out) noexcept;
// fi_close: -FI_EBUSY while endpoints are attached or keys held.
int close_av(Av *av) noexcept;
// fi_av_bind(eq): -FI_EINVAL when `eq` is not a ufi EQ or one is bound already.
int bind_eq(Av *av, fid_t eq) noexcept;

// Insertion. FI_ADDR_UCX addresses are addr_len bytes each, end to end. fi_addr (may be NULL) is output, and input first with FI_AV_USER_ID / FI_AUTH_KEY;
// with FI_SYNC_ERR, context is an int array of per-address status. Returns the number inserted
// (0 when FI_EVENT: the EQ reports), or a negative error when nothing was attempted.
int insert_ucx(Av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
               void *context) noexcept;
// FI_ADDR_STR: `addr` is an array of count string pointers, or count NUL-terminated strings
// stored back to back (both layouts are in use; see insert.cpp).
int insert_str(Av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
               void *context) noexcept;
// FI_SOCKADDR_IN / FI_SOCKADDR_IN6 domains: count socket addresses end to end (16 or 28 bytes
// each, by family), each inserted as a host-and-port peer.
int insert_socket(Av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
                  void *context) noexcept;
int insert_svc(Av *av, const char *node, const char *service, fi_addr_t *fi_addr, uint64_t flags,
               void *context) noexcept;
int insert_sym(Av *av, const char *node, size_t nodecnt, const char *service, size_t svccnt,
               fi_addr_t *fi_addr, uint64_t flags, void *context) noexcept;

int remove(Av *av, const fi_addr_t *fi_addr, size_t count, uint64_t flags) noexcept;

// fi_av_lookup (truncates; *len = bytes needed) and fi_av_lookup2 flags 0 (-FI_ETOOSMALL instead
// of truncating).
int lookup(Av *av, fi_addr_t addr, void *buf, size_t *len, bool exact) noexcept;
// fi_av_straddr: nullptr for a malformed address.
const char *straddr(const Av *av, const void *addr, char *buf, size_t *len) noexcept;

int insert_auth_key(Av *av, const void *key, size_t size, fi_addr_t *out) noexcept;
int lookup_auth_key(Av *av, fi_addr_t addr, void *buf, size_t *size) noexcept;
int set_user_id(Av *av, fi_addr_t addr, fi_addr_t user_id, uint64_t flags) noexcept;

// Symmetric insertion's address list, in the page's order (all services of a node, then the
// next node): "10.1.1.1"x2 "5000"x2 -> 10.1.1.1:5000, 10.1.1.1:5001, 10.1.1.2:5000, 10.1.1.2:5001;
// host names need a numeric suffix when nodecnt > 1 (host10 -> host11, width kept: host09 ->
// host10). -FI_EINVAL with *why for a NULL node or service, zero counts, a service that is not a
// port number or overflows 65535, an address range that overflows, a host name without suffix.
int expand_symmetric(const char *node, size_t nodecnt, const char *service, size_t svccnt,
                     std::vector<std::pair<std::string, std::string>> &out, std::string *why);

}  // namespace ufi::runtime::av
