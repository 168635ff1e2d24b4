/* Point-to-point through Open MPI's OFI MTL (pml cm) on ufi, 2 ranks: blocking and
 * non-blocking messages of every size class up to 1 GiB, wildcards, the probe family,
 * cancelling a receive, synchronous sends, sendrecv, derived datatypes and many outstanding
 * requests. Every byte is checked. Usage: mpi_p2p [max_bytes [no-ssend]] (default 1 GiB;
 * no-ssend leaves out MPI_Ssend/MPI_Issend, for the tag modes where Open MPI 4.1.4 cannot
 * complete them on a provider that honours FI_DIRECTED_RECV: docs/mpi.md). */
#include "mpi_check.h"

#include <unistd.h>

static int peer;

static void sizes(size_t max_bytes) {
    const size_t list[] = {0, 1, 7, 8, 63, 64, 65, 1000, 4095, 4096, 8193, 65536, 65537,
                           (1u << 20) + 3, 16u << 20, 256u << 20, 1u << 30};
    size_t biggest = 0;
    for (size_t k = 0; k < sizeof list / sizeof list[0]; ++k)
        if (list[k] <= max_bytes && list[k] > biggest) biggest = list[k];
    uint8_t *out = xmalloc(biggest), *in = xmalloc(biggest);
    for (size_t k = 0; k < sizeof list / sizeof list[0]; ++k) {
        const size_t n = list[k];
        if (n > max_bytes) continue;
        const int count = (int)n;
        char what[96];
        /* Blocking: 0 sends, 1 echoes what it got with another seed. */
        if (g_rank == 0) {
            fill_pattern(out, n, (unsigned)k);
            MPI_CHECK(MPI_Send(out, count, MPI_BYTE, peer, 100 + (int)k, MPI_COMM_WORLD));
            memset(in, 0, n);
            MPI_Status st;
            MPI_CHECK(MPI_Recv(in, count, MPI_BYTE, peer, 200 + (int)k, MPI_COMM_WORLD, &st));
            int got = -1;
            MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &got));
            EXPECT(got == count, "MPI_Recv of %zu bytes: count %d", n, got);
            snprintf(what, sizeof what, "blocking echo of %zu bytes", n);
            check_pattern(in, n, (unsigned)k + 1000, what);
        } else {
            memset(in, 0, n);
            MPI_CHECK(MPI_Recv(in, count, MPI_BYTE, peer, 100 + (int)k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            snprintf(what, sizeof what, "blocking send of %zu bytes", n);
            check_pattern(in, n, (unsigned)k, what);
            fill_pattern(out, n, (unsigned)k + 1000);
            MPI_CHECK(MPI_Send(out, count, MPI_BYTE, peer, 200 + (int)k, MPI_COMM_WORLD));
        }
        /* Non-blocking, both directions at once. */
        MPI_Request rq[2];
        fill_pattern(out, n, (unsigned)k * 3 + (unsigned)g_rank);
        memset(in, 0, n);
        MPI_CHECK(MPI_Irecv(in, count, MPI_BYTE, peer, 300 + (int)k, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Isend(out, count, MPI_BYTE, peer, 300 + (int)k, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        snprintf(what, sizeof what, "non-blocking exchange of %zu bytes", n);
        check_pattern(in, n, (unsigned)k * 3 + (unsigned)peer, what);
    }
    free(out);
    free(in);
}

static void wildcards(void) {
    enum { kCount = 50 };
    if (g_rank == 1) {
        for (int i = 0; i < kCount; ++i) {
            int v = 1000 + i;
            MPI_CHECK(MPI_Send(&v, 1, MPI_INT, peer, 40 + i % 5, MPI_COMM_WORLD));
        }
        return;
    }
    int last[5] = {-1, -1, -1, -1, -1};
    for (int i = 0; i < kCount; ++i) {
        int v = -1;
        MPI_Status st;
        MPI_CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        EXPECT(st.MPI_SOURCE == peer, "MPI_SOURCE %d", st.MPI_SOURCE);
        EXPECT(st.MPI_TAG == 40 + (v - 1000) % 5, "MPI_TAG %d for value %d", st.MPI_TAG, v);
        EXPECT(v == 1000 + i, "ANY_SOURCE/ANY_TAG message %d carried %d (order from one source)", i, v);
        last[st.MPI_TAG - 40] = v;
    }
    (void)last;
}

static void probes(void) {
    const int n = 12345;
    if (g_rank == 1) {
        uint8_t *b = xmalloc(4 * (size_t)n);
        for (int m = 0; m < 4; ++m) {
            fill_pattern(b + (size_t)m * n, (size_t)n + (size_t)m, 50 + (unsigned)m);
            MPI_CHECK(MPI_Send(b + (size_t)m * n, n + m, MPI_BYTE, peer, 60 + m, MPI_COMM_WORLD));
        }
        free(b);
        return;
    }
    uint8_t *in = xmalloc((size_t)n + 8);
    MPI_Status st;
    int count = 0, flag = 0;
    /* MPI_Probe, then the receive. */
    MPI_CHECK(MPI_Probe(peer, 60, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
    EXPECT(count == n && st.MPI_TAG == 60, "MPI_Probe: count %d tag %d", count, st.MPI_TAG);
    MPI_CHECK(MPI_Recv(in, count, MPI_BYTE, peer, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_pattern(in, (size_t)count, 50, "after MPI_Probe");
    /* MPI_Iprobe until it is there. */
    for (flag = 0; !flag;) MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 61, MPI_COMM_WORLD, &flag, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
    EXPECT(count == n + 1 && st.MPI_SOURCE == peer, "MPI_Iprobe: count %d source %d", count, st.MPI_SOURCE);
    MPI_CHECK(MPI_Recv(in, count, MPI_BYTE, st.MPI_SOURCE, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_pattern(in, (size_t)count, 51, "after MPI_Iprobe");
    /* MPI_Mprobe + MPI_Mrecv (FI_CLAIM). */
    MPI_Message msg;
    MPI_CHECK(MPI_Mprobe(peer, 62, MPI_COMM_WORLD, &msg, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
    EXPECT(count == n + 2, "MPI_Mprobe: count %d", count);
    MPI_CHECK(MPI_Mrecv(in, count, MPI_BYTE, &msg, &st));
    check_pattern(in, (size_t)count, 52, "MPI_Mrecv");
    /* MPI_Improbe + MPI_Imrecv. */
    for (flag = 0; !flag;) MPI_CHECK(MPI_Improbe(peer, 63, MPI_COMM_WORLD, &flag, &msg, &st));
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
    EXPECT(count == n + 3, "MPI_Improbe: count %d", count);
    MPI_Request rq;
    MPI_CHECK(MPI_Imrecv(in, count, MPI_BYTE, &msg, &rq));
    MPI_CHECK(MPI_Wait(&rq, &st));
    check_pattern(in, (size_t)count, 53, "MPI_Imrecv");
    free(in);
}

static void cancel_receive(void) {
    int v = 0;
    MPI_Request rq;
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, peer, 999, MPI_COMM_WORLD, &rq));  /* nobody sends 999 */
    MPI_CHECK(MPI_Cancel(&rq));
    MPI_CHECK(MPI_Wait(&rq, &st));
    int cancelled = 0;
    MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
    EXPECT(cancelled, "MPI_Cancel of an unmatched receive");
    /* The channel still works after the cancel. */
    int w = g_rank + 77, got = -1;
    MPI_CHECK(MPI_Sendrecv(&w, 1, MPI_INT, peer, 998, &got, 1, MPI_INT, peer, 998, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    EXPECT(got == peer + 77, "after cancel: got %d", got);
}

static void synchronous(void) {
    /* An MPI_Issend completes only once the receive matched: rank 1 posts it only after rank 0
     * has seen the send incomplete and said so. */
    const size_t sizes[] = {8, 100000};
    for (int k = 0; k < 2; ++k) {
        const size_t n = sizes[k];
        uint8_t *b = xmalloc(n);
        if (g_rank == 0) {
            fill_pattern(b, n, 70 + (unsigned)k);
            MPI_Request rq;
            MPI_CHECK(MPI_Issend(b, (int)n, MPI_BYTE, peer, 71, MPI_COMM_WORLD, &rq));
            int done = 0;
            for (int i = 0; i < 200 && !done; ++i) {
                MPI_CHECK(MPI_Test(&rq, &done, MPI_STATUS_IGNORE));
                usleep(1000);
            }
            EXPECT(!done, "MPI_Issend of %zu bytes completed before the receive was posted", n);
            int go = 1;
            MPI_CHECK(MPI_Send(&go, 1, MPI_INT, peer, 72, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Ssend(b, (int)n, MPI_BYTE, peer, 73, MPI_COMM_WORLD));
        } else {
            int go = 0;
            MPI_CHECK(MPI_Recv(&go, 1, MPI_INT, peer, 72, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            memset(b, 0, n);
            MPI_CHECK(MPI_Recv(b, (int)n, MPI_BYTE, peer, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check_pattern(b, n, 70 + (unsigned)k, "MPI_Issend");
            memset(b, 0, n);
            MPI_CHECK(MPI_Recv(b, (int)n, MPI_BYTE, peer, 73, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check_pattern(b, n, 70 + (unsigned)k, "MPI_Ssend");
        }
        free(b);
    }
}

static void datatypes(void) {
    /* Every third double of 3000, and an array of structs. */
    double grid[3000];
    for (int i = 0; i < 3000; ++i) grid[i] = g_rank == 0 ? i * 0.5 : -1.0;
    MPI_Datatype strided;
    MPI_CHECK(MPI_Type_vector(1000, 1, 3, MPI_DOUBLE, &strided));
    MPI_CHECK(MPI_Type_commit(&strided));
    struct rec { int id; double value; char tag[3]; } recs[64];
    MPI_Datatype rec_type;
    int lens[3] = {1, 1, 3};
    MPI_Aint disp[3] = {offsetof(struct rec, id), offsetof(struct rec, value), offsetof(struct rec, tag)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype tmp;
    MPI_CHECK(MPI_Type_create_struct(3, lens, disp, types, &tmp));
    MPI_CHECK(MPI_Type_create_resized(tmp, 0, sizeof(struct rec), &rec_type));
    MPI_CHECK(MPI_Type_commit(&rec_type));
    MPI_CHECK(MPI_Type_free(&tmp));
    memset(recs, 0, sizeof recs);
    if (g_rank == 0) {
        for (int i = 0; i < 64; ++i) {
            recs[i].id = i * 7;
            recs[i].value = i / 4.0;
            recs[i].tag[0] = 'a' + (char)(i % 26);
            recs[i].tag[1] = 'z';
            recs[i].tag[2] = (char)i;
        }
        MPI_CHECK(MPI_Send(grid, 1, strided, peer, 80, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Send(recs, 64, rec_type, peer, 81, MPI_COMM_WORLD));
    } else {
        MPI_CHECK(MPI_Recv(grid, 1, strided, peer, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3000; ++i) {
            const double want = i % 3 == 0 ? i * 0.5 : -1.0;
            EXPECT(grid[i] == want, "vector type: element %d is %g, expected %g", i, grid[i], want);
        }
        MPI_CHECK(MPI_Recv(recs, 64, rec_type, peer, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 64; ++i) {
            EXPECT(recs[i].id == i * 7 && recs[i].value == i / 4.0 && recs[i].tag[0] == 'a' + (char)(i % 26) &&
                       recs[i].tag[1] == 'z' && recs[i].tag[2] == (char)i,
                   "struct type: record %d", i);
        }
    }
    MPI_CHECK(MPI_Type_free(&strided));
    MPI_CHECK(MPI_Type_free(&rec_type));
}

static void many_outstanding(void) {
    enum { kMany = 2000 };
    static int out[kMany], in[kMany];
    static MPI_Request rq[2 * kMany];
    for (int i = 0; i < kMany; ++i) {
        out[i] = g_rank * 100000 + i;
        in[i] = -1;
        MPI_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &rq[i]));
    }
    for (int i = 0; i < kMany; ++i) {
        MPI_CHECK(MPI_Isend(&out[i], 1, MPI_INT, peer, kMany - 1 - i, MPI_COMM_WORLD, &rq[kMany + i]));
    }
    MPI_CHECK(MPI_Waitall(2 * kMany, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < kMany; ++i) {
        EXPECT(in[i] == peer * 100000 + (kMany - 1 - i), "outstanding receive %d got %d", i, in[i]);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    init_checks();
    int size = 0;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    EXPECT(size == 2, "run with 2 ranks, not %d", size);
    peer = 1 - g_rank;
    size_t max_bytes = 1u << 30;
    if (argc > 1) max_bytes = (size_t)strtoull(argv[1], NULL, 0);
    const int ssend = !(argc > 2 && strcmp(argv[2], "no-ssend") == 0);

    struct { const char *name; void (*fn)(void); } steps[] = {
        {"wildcards", wildcards}, {"probes", probes}, {"cancel", cancel_receive},
        {"synchronous", synchronous}, {"datatypes", datatypes}, {"many outstanding", many_outstanding},
    };
    sizes(max_bytes);
    if (g_rank == 0) printf("sizes up to %zu bytes: ok\n", max_bytes);
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; ++s) {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (steps[s].fn == synchronous && !ssend) {
            if (g_rank == 0) printf("%s: left out (no-ssend)\n", steps[s].name);
            continue;
        }
        steps[s].fn();
        if (g_rank == 0) printf("%s: ok\n", steps[s].name);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
