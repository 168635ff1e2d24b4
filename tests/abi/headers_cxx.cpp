// SPDX-License-Identifier: BSD-2-Clause
// Part of ufi.
//
// ufi's public headers from C++: every rdma/*.h compiles under the project's
// C++20 warnings-as-errors flags, and the inline wrappers with logic of their
// own (size-checked 2.x ops, fi_cq_readerr, address and tag helpers) behave as
// libfabric 2.x's do. The wrappers run against fake ops tables; nothing here
// links with the library.
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

static_assert(FI_MAJOR_VERSION == 2 && FI_MINOR_VERSION == 7, "ufi declares API 2.7");
static_assert(sizeof(fi_domain_attr) == 232, "fi_domain_attr, 2.x layout");
static_assert(sizeof(fi_cq_err_entry) == 88, "fi_cq_err_entry, 2.x layout");

namespace {

int failures = 0;

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "FAIL: %s\n", what);
        ++failures;
    }
}

// What the fake ops saw.
struct Seen {
    int calls = 0;
    int command = -1;
    uint64_t flags = 0;
    uint64_t addr = 0;
    fi_addr_t src_addr_at_call = 0;
    const void *arg = nullptr;
} seen;

// --- AV -------------------------------------------------------------------

int av_insert_auth_key(fid_av *, const void *key, size_t, fi_addr_t *fi_addr, uint64_t flags)
{
    ++seen.calls;
    seen.arg = key;
    seen.flags = flags;
    *fi_addr = 11;
    return 0;
}

int av_lookup_auth_key(fid_av *, fi_addr_t addr, void *, size_t *size)
{
    ++seen.calls;
    seen.addr = addr;
    *size = 4;
    return 0;
}

int av_set_user_id(fid_av *, fi_addr_t addr, fi_addr_t, uint64_t flags)
{
    ++seen.calls;
    seen.addr = addr;
    seen.flags = flags;
    return 0;
}

int av_lookup2(fid_av *, fi_addr_t addr, void *, size_t *len, uint64_t flags, fid_xpu_ctx *)
{
    ++seen.calls;
    seen.addr = addr;
    seen.flags = flags;
    *len = 8;
    return 0;
}

void test_av_size_checks()
{
    fi_ops_av ops{};
    ops.insert_auth_key = av_insert_auth_key;
    ops.lookup_auth_key = av_lookup_auth_key;
    ops.set_user_id = av_set_user_id;
    ops.lookup2 = av_lookup2;
    fid_av av{};
    av.ops = &ops;
    fi_addr_t out = FI_ADDR_NOTAVAIL;
    size_t len = 0;
    char buf[16] = {};

    // A table from a 1.x provider ends after av_set: all four are -FI_ENOSYS
    // and none of the (out-of-table) pointers is called.
    ops.size = offsetof(fi_ops_av, insert_auth_key);
    seen = Seen{};
    check(fi_av_insert_auth_key(&av, buf, 4, &out, 0) == -FI_ENOSYS, "insert_auth_key, short table");
    check(fi_av_lookup_auth_key(&av, 0, buf, &len) == -FI_ENOSYS, "lookup_auth_key, short table");
    check(fi_av_set_user_id(&av, 0, 1, 0) == -FI_ENOSYS, "set_user_id, short table");
    check(fi_av_lookup2(&av, 0, buf, &len, 0, nullptr) == -FI_ENOSYS, "lookup2, short table");
    check(seen.calls == 0, "no op called through a short table");

    // A table that ends just before lookup2 has the other three.
    ops.size = offsetof(fi_ops_av, lookup2);
    seen = Seen{};
    check(fi_av_set_user_id(&av, 3, 1, FI_AUTH_KEY) == 0, "set_user_id, table without lookup2");
    check(seen.addr == 3 && seen.flags == FI_AUTH_KEY, "set_user_id arguments");
    check(fi_av_lookup2(&av, 0, buf, &len, 0, nullptr) == -FI_ENOSYS, "lookup2 past the table end");

    // Full 2.x table: every op is reached with its arguments.
    ops.size = sizeof(ops);
    seen = Seen{};
    check(fi_av_insert_auth_key(&av, buf, 4, &out, 0) == 0 && out == 11, "insert_auth_key");
    check(seen.arg == buf, "insert_auth_key key pointer");
    len = 0;
    check(fi_av_lookup_auth_key(&av, 11, buf, &len) == 0 && len == 4, "lookup_auth_key");
    len = sizeof(buf);
    check(fi_av_lookup2(&av, 5, buf, &len, FI_XPU, nullptr) == 0 && len == 8, "lookup2");
    check(seen.addr == 5 && seen.flags == FI_XPU, "lookup2 arguments");
    check(seen.calls == 3, "three calls through the full table");

    // A set op pointer left NULL in a long-enough table is also -FI_ENOSYS.
    ops.lookup2 = nullptr;
    check(fi_av_lookup2(&av, 0, buf, &len, 0, nullptr) == -FI_ENOSYS, "lookup2 NULL op");
}

// --- CQ -------------------------------------------------------------------

ssize_t cq_readerr(fid_cq *, fi_cq_err_entry *buf, uint64_t)
{
    ++seen.calls;
    seen.src_addr_at_call = buf->src_addr;
    buf->err = FI_ETRUNC;  // a 1.x provider fills fields up to err_data_size only
    return 1;
}

int cq_export_xpu(fid_cq *, uint64_t flags, fid_xpu_cq *)
{
    ++seen.calls;
    seen.flags = flags;
    return 0;
}

void test_cq()
{
    fi_ops_cq ops{};
    ops.size = sizeof(ops);
    ops.readerr = cq_readerr;
    ops.export_xpu = cq_export_xpu;
    fid_cq cq{};
    cq.ops = &ops;

    fi_cq_err_entry entry;
    std::memset(&entry, 0x5a, sizeof(entry));
    seen = Seen{};
    check(fi_cq_readerr(&cq, &entry, 0) == 1, "fi_cq_readerr result");
    check(seen.src_addr_at_call == FI_ADDR_NOTAVAIL, "src_addr preset before the op runs");
    check(entry.src_addr == FI_ADDR_NOTAVAIL, "src_addr NOTAVAIL when the provider leaves it");
    check(entry.err == FI_ETRUNC, "fields the provider wrote");

    check(fi_cq_export_xpu(&cq, 7, nullptr) == 0 && seen.flags == 7, "fi_cq_export_xpu");
    ops.size = offsetof(fi_ops_cq, export_xpu);
    check(fi_cq_export_xpu(&cq, 0, nullptr) == -FI_ENOSYS, "fi_cq_export_xpu, 1.x table");
}

// --- Counter ----------------------------------------------------------------

void test_cntr()
{
    fi_ops_cntr ops{};
    ops.size = offsetof(fi_ops_cntr, adderr);  // a 1.0 table
    fid_cntr cntr{};
    cntr.ops = &ops;
    check(fi_cntr_adderr(&cntr, 1) == -FI_ENOSYS, "fi_cntr_adderr, old table");
    check(fi_cntr_seterr(&cntr, 1) == -FI_ENOSYS, "fi_cntr_seterr, old table");
    check(fi_cntr_export_xpu(&cntr, 0, nullptr) == -FI_ENOSYS, "fi_cntr_export_xpu, old table");
}

// --- Domain, endpoint, MR ---------------------------------------------------

int dom_endpoint(fid_domain *, fi_info *, fid_ep **, void *)
{
    ++seen.calls;
    seen.flags = 0;
    return 0;
}

int dom_endpoint2(fid_domain *, fi_info *, fid_ep **, uint64_t flags, void *)
{
    ++seen.calls;
    seen.flags = flags;
    return 0;
}

int fid_control(fid *, int command, void *arg)
{
    ++seen.calls;
    seen.command = command;
    seen.arg = arg;
    if (command == FI_GET_MR_XPU_DESC) {
        auto *desc = static_cast<fi_mr_xpu_desc *>(arg);
        if (!desc->len || desc->flags != FI_XPU)
            return -FI_EINVAL;
        *desc->len = 4;
    }
    return 0;
}

ssize_t ep_cancel(fid_t, void *context)
{
    ++seen.calls;
    seen.arg = context;
    return 0;
}

int ep_getopt(fid_t, int level, int optname, void *optval, size_t *optlen)
{
    ++seen.calls;
    if (level != FI_OPT_ENDPOINT || optname != FI_OPT_MAX_MSG_SIZE || *optlen < sizeof(size_t))
        return -FI_ENOPROTOOPT;
    *static_cast<size_t *>(optval) = 4096;
    *optlen = sizeof(size_t);
    return 0;
}

void test_domain_ep_mr()
{
    fi_ops_domain dops{};
    dops.size = offsetof(fi_ops_domain, endpoint2);  // before endpoint2
    dops.endpoint = dom_endpoint;
    dops.endpoint2 = dom_endpoint2;
    fid_domain domain{};
    domain.ops = &dops;
    fid_ep *ep = nullptr;

    seen = Seen{};
    check(fi_endpoint2(&domain, nullptr, &ep, 0, nullptr) == 0 && seen.calls == 1,
          "fi_endpoint2 without flags is fi_endpoint");
    check(fi_endpoint2(&domain, nullptr, &ep, FI_PEER, nullptr) == -FI_ENOSYS,
          "fi_endpoint2 with flags needs the op");
    dops.size = sizeof(dops);
    check(fi_endpoint2(&domain, nullptr, &ep, FI_PEER, nullptr) == 0 && seen.flags == FI_PEER,
          "fi_endpoint2 with flags");

    fi_ops fops{};
    fops.size = sizeof(fops);
    fops.control = fid_control;
    fid_mr mr{};
    mr.fid.ops = &fops;
    unsigned char desc[8];
    size_t len = sizeof(desc);
    seen = Seen{};
    check(fi_mr_get_xpu_desc(&mr, desc, &len, FI_XPU, nullptr) == 0 && len == 4,
          "fi_mr_get_xpu_desc");
    check(seen.command == FI_GET_MR_XPU_DESC, "fi_mr_get_xpu_desc uses FI_GET_MR_XPU_DESC");
    check(fi_mr_enable(&mr) == 0 && seen.command == FI_ENABLE, "fi_mr_enable");

    // fi_cancel/fi_getopt take a bare fid and find the endpoint ops through it.
    fi_ops_ep eops{};
    eops.size = offsetof(fi_ops_ep, export_xpu);  // a 1.x table
    eops.cancel = ep_cancel;
    eops.getopt = ep_getopt;
    fid_ep endpoint{};
    endpoint.fid.ops = &fops;
    endpoint.ops = &eops;
    int token = 0;
    check(fi_cancel(&endpoint.fid, &token) == 0 && seen.arg == &token, "fi_cancel");
    size_t value = 0;
    size_t vlen = sizeof(value);
    check(fi_getopt(&endpoint.fid, FI_OPT_ENDPOINT, FI_OPT_MAX_MSG_SIZE, &value, &vlen) == 0 &&
              value == 4096,
          "fi_getopt");
    check(fi_ep_export_xpu(&endpoint, 0, nullptr) == -FI_ENOSYS, "fi_ep_export_xpu, 1.x table");
    check(fi_enable(&endpoint) == 0 && seen.command == FI_ENABLE, "fi_enable");
}

// --- Pure helpers -----------------------------------------------------------

void test_helpers()
{
    check(fi_group_addr(5, 3) == ((3ULL << 32) | 5), "fi_group_addr");
    check(fi_group_addr(0xffffffffULL, 0xffffffffU) == ~0ULL, "fi_group_addr, full range");
    check(fi_tag_mpi(7, 2) == ((2ULL << 32) | 7), "fi_tag_mpi");
    check(fi_tag_mpi(-1, 0) == 0xffffffffULL, "fi_tag_mpi, negative tag stays 32 bits");
    check((fi_tag_mpi(123, 9) & ~FI_MPI_IGNORE_TAG) == (9ULL << 32), "FI_MPI_IGNORE_TAG mask");
    check((fi_tag_mpi(123, 9) & ~FI_MPI_IGNORE_PAYLOAD) == 123, "FI_MPI_IGNORE_PAYLOAD mask");
    check(fi_hmem_ze_device(1, 2) == 0x10002, "fi_hmem_ze_device");
    check(fi_rx_addr(5, 3, 8) == ((3ULL << 56) | 5), "fi_rx_addr");
    check(fi_tc_dscp_get(fi_tc_dscp_set(46)) == 46, "fi_tc_dscp round trip");
    check(fi_tc_dscp_get(FI_TC_LOW_LATENCY) == 0, "fi_tc_dscp_get on a label");
    check(FI_VERSION_GE(FI_VERSION(2, 7), FI_VERSION(1, 20)), "FI_VERSION_GE");
    check(FI_VERSION_LT(FI_VERSION(1, 17), FI_VERSION(2, 0)), "FI_VERSION_LT");
    check(FI_MAJOR(FI_VERSION(2, 7)) == 2 && FI_MINOR(FI_VERSION(2, 7)) == 7, "FI_MAJOR/FI_MINOR");
}

// The 2.x anonymous unions, as C++ sees them (reading the other member would
// be undefined in C++, so compare offsets).
static_assert(offsetof(fi_domain_attr, progress) == offsetof(fi_domain_attr, data_progress),
              "progress aliases data_progress");
static_assert(offsetof(fi_mr_attr, dmabuf) == offsetof(fi_mr_attr, mr_iov),
              "dmabuf shares mr_iov's storage");

}  // namespace

int main()
{
    test_av_size_checks();
    test_cq();
    test_cntr();
    test_domain_ep_mr();
    test_helpers();
    if (failures) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("headers_cxx: all checks passed\n");
    return 0;
}
