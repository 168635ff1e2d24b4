// Every environment variable ufi reads: add one line here (and read it through registry()).
// A variable libfabric defines too (FI_*) has the type fi_param_get serves libfabric's
// FI_PARAM_* type with: Size for FI_PARAM_SIZE_T (a size_t), Int and Bool for FI_PARAM_INT and
// FI_PARAM_BOOL (an int), any other for FI_PARAM_STRING (a char *).
#include "base/config/variables.h"

namespace ufi::config {

namespace {

using enum VarType;

// clang-format off
constexpr VarDef table[] = {
    // name, type, default, doc[, enum choices]
    {"UFI_TLS", List, "all", "Transports to use, as UCX_TLS: names or aliases (shm/sm, mm, tcp, ib, rc, ud, dc, cuda, rocm, all); a leading ^ excludes the listed ones"},
    {"UFI_NET_DEVICES", List, "all", "Network devices to use, e.g. mlx5_0:1,eth0 (all: every device); a leading ^ excludes the listed ones"},
    {"UFI_LOG_LEVEL", Enum, "", "Log level; unset: FI_LOG_LEVEL if set, else warn", "off,error,warn,info,debug,trace"},
    {"UFI_LOG_FILE", String, "", "Where log lines go: stderr (unset), stdout, or a file path (appended to; its folder must exist, else stderr); %p in it is replaced by the process id"},
    {"FI_LOG_LEVEL", Enum, "", "libfabric's log level, used when UFI_LOG_LEVEL is unset; each maps to the ufi level of the same name (trace is the most verbose)", "warn,trace,info,debug"},
    {"FI_LOG_PROV", String, "", "Log only these providers (comma list; ufi logs as provider ufi); a leading ^ excludes the listed ones"},
    {"FI_LOG_SUBSYS", String, "", "Log only these subsystems: core, fabric, domain, ep_ctrl, ep_data, av, cq, eq, mr, cntr; a leading ^ excludes the listed ones"},
    {"FI_PROVIDER", List, "", "Providers to use (libfabric's provider filter); a leading ^ excludes the listed ones"},
    {"FI_PROVIDER_EXCLUDE", List, "", "Providers to exclude"},
    {"FI_MR_CACHE_MAX_SIZE", Size, "unlimited", "Bytes of registrations the registration cache keeps (unused ones beyond it are evicted, least recently used first)"},
    {"FI_MR_CACHE_MAX_COUNT", Size, "1024", "Registrations the registration cache keeps (unused ones beyond it are evicted, least recently used first); 0 turns the cache off"},
    {"FI_MR_CACHE_MONITOR", Enum, "", "How the registration cache learns of unmapped memory: ufi always uses UCX's ucm memory events; disabled turns the cache off (libfabric's other monitors are accepted and mean ucm)", "ucm,memhooks,userfaultfd,uffd,kdreg2,disabled"},
    {"UFI_AV_SHM_DIR", String, "/dev/shm", "Directory (tmpfs) holding the files of named, shared address vectors (fi_av_attr::name)"},
    {"UFI_AV_SHM_LOCK_TIMEOUT", Int, "5000", "Milliseconds fi_av_open waits for another process to release a named AV's file lock before it fails with -FI_EBUSY, naming the holder"},
    {"UFI_CONNECT_TO_EP", List, "", "Transports whose active-message lanes connect endpoint to endpoint (each side creates a UCT endpoint, they exchange addresses over a connect-to-iface lane, then connect) even where they can connect to the peer's iface, e.g. tcp; transports that can only connect endpoint to endpoint (InfiniBand rc) always do. Give every process the same value"},
    {"UFI_RNDV_THRESH", String, "auto", "Messages above this many bytes go by rendezvous (announced, then moved zero-copy into the matched receive buffer); auto: where the transports' estimates say zero copy wins"},
    {"UFI_RNDV_SPLIT", String, "64K", "Rendezvous messages of at least this many bytes over a transport whose zero copy is a copy by the calling CPU (cma) are copied by both processes at once: the receiver reads the first half while the sender writes the rest (the receive then also waits for the sender to progress); off: the receiver copies all"},
    {"UFI_SHM_FIFO_ELEM_SIZE", Int, "576", "Bytes of each element of the shared-memory FIFOs (posix, sysv: UCX's FIFO_ELEM_SIZE, 128 by default); a message up to this less 28 bytes travels inline in its element, a longer one through a separate descriptor; every process of a job must use the same (peers configured otherwise do not reach each other over shared memory); 0: UCX's setting"},
    {"UFI_SHM_RX_BUFS_GROW", Int, "128", "Receive descriptors each shared-memory iface (posix, sysv) allocates at a time: UCX's RX_BUFS_GROW, 512 by default, which UCX writes into a new shared-memory segment when the iface opens (4 MiB, most of an endpoint's fi_enable); more come in steps of this many as messages hold them; 0: UCX's setting"},
    {"UFI_SHM_DEMOTE", Bool, "y", "After a process answers a peer over a shared-memory FIFO (posix, sysv) and stops sending to it, move the lines the peer reads next (the FIFO head, the answer's element or receive descriptor) to the shared cache with CLDEMOTE, where the CPU has it; the peer's reads find them sooner (Open MPI's 8-byte ping-pong fell by an eighth); n: never"},
    {"UFI_RX_SLIP", Int, "250", "Nanoseconds an endpoint receiving a stream of messages over a shared-memory FIFO (posix, sysv) leaves the FIFO alone after each small batch, so that the sender keeps a few messages ahead instead of both cores trading the FIFO's cache lines for every message (temporal slipping); a message arriving meanwhile waits that long at most; 0: never"},
    {"UFI_PEER_CHECK_INTERVAL", Int, "1000", "Milliseconds between checks that the peers an endpoint waits on are alive (shared memory: a dead process is otherwise silent); operations towards a dead peer complete with an error within about this time; 0 turns the checks off"},
    {"UFI_PEER_TIMEOUT", Int, "8000", "Milliseconds a peer reached over tcp may leave what is sent to it unacknowledged by its host (the kernel retransmitting: link cut, host frozen or powered off) before it counts as dead and the operations towards it complete with FI_ETIMEDOUT; checked every UFI_PEER_CHECK_INTERVAL while operations or receives wait, with a keepalive message when nothing else is in flight. A live process that does not progress is not failed (its kernel acknowledges). 0 turns it off (the kernel gives up after about 15 minutes)"},
    {"UFI_TCP_PORT_RANGE", String, "", "Ports the tcp transport's listeners take, as first-last (e.g. 29000-29999, outside the kernel's ephemeral ports), so that a firewall can hold them; an endpoint whose source address names a port listens there regardless; empty: ports the system chooses. An endpoint finds no free port in the range: tcp is left out of it (with tcp alone, fi_enable fails with FI_ENODEV)"},
    {"UFI_TCP_MAX_POLL", Int, "1", "Ready sockets one progress call of the tcp transport takes from epoll (UCX's MAX_POLL, 16 by default): with more than one, UCT 1.13 aborts the process when handling one socket closes the endpoint of another in the same batch (a peer dying while messages from it are handled); 1 measured no slower on loopback; 0: UCX's setting"},
    {"UFI_PEER_REUSE_DELAY", Int, "10000", "Milliseconds after a peer failed or closed its endpoint before the slot it held in an endpoint's peer table may go to a new peer, once nothing refers to it any more (no operation, message or directed receive of it, no AV entry naming it); a server whose clients come and go then keeps a table as large as the clients it has. A late message of the departed peer is dropped, never taken for the new one's (the slot's generation is in every message). 0: slots are never reused (about 1.4 KiB kept per departed peer)"},
    {"UFI_SHM_HOLE_TIMEOUT", Int, "5000", "Milliseconds a shared-memory FIFO element this endpoint receives on may stay claimed by a writer and unwritten (a writer killed in the middle of a send) before ufi skips it, so that the messages behind it arrive; the one it was to hold is lost. Checked with the peer checks (UFI_PEER_CHECK_INTERVAL). A live writer stopped mid-send for longer (SIGSTOP, a debugger) loses its message instead, and may overwrite a later one when it resumes; 0: never skip (the reader waits at such an element for ever)"},
    {"UFI_NAMED_CLOSE_WAIT", Int, "200", "Milliseconds fi_close of an endpoint listening on a port the application chose (a source address with a port) waits for the peers connected to that port to close first, so that their connections end gracefully; past it, those connections are reset (an abortive close leaves no TIME_WAIT, which would hold the port: UCT's tcp listener sets no SO_REUSEADDR); also how long a connected endpoint accepted on a passive endpoint's port leaves its peer to end the connection first at fi_shutdown and fi_close; 0: close at once"},
    {"UFI_POLL_YIELD", Int, "256", "Empty fi_cq_read/fi_cq_readfrom calls in a row (nothing to read after progress) after which the polling thread yields its core once (sched_yield), so processes that share cores (more ranks than cores) make progress; 0: never"},
    {"UFI_PROTO_INFO", Bool, "n", "Print (as info lines of subsystem ep_data, whatever UFI_LOG_LEVEL says) the protocols chosen for each peer: the active-message transport, its limits, and the rendezvous protocol, transport and threshold; and each endpoint's traffic counts when it closes"},
};
// clang-format on

}  // namespace

std::span<const VarDef> variables() noexcept {
    return table;
}

}  // namespace ufi::config
