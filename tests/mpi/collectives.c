/* Collectives over the OFI MTL on ufi, 2 to 4 ranks (oversubscribed on 2 cores): barrier,
 * broadcast of small and large buffers, reduce, allreduce (int and double), gather, scatter,
 * allgather, alltoall, scan, a split communicator, and a fan-in of messages from every rank
 * taken with MPI_ANY_SOURCE (per-source order kept). Every value is checked. */
#include "mpi_check.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    init_checks();
    int n = 0;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &n));
    const int r = g_rank;
    for (int round = 0; round < 3; ++round) MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* Broadcast from every root, small and 4 MiB. */
    const size_t big = 4u << 20;
    uint8_t *buf = xmalloc(big);
    for (int root = 0; root < n; ++root) {
        for (int k = 0; k < 2; ++k) {
            const size_t len = k == 0 ? 13 : big;
            if (r == root) fill_pattern(buf, len, (unsigned)(root * 10 + k));
            else memset(buf, 0, len);
            MPI_CHECK(MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
            check_pattern(buf, len, (unsigned)(root * 10 + k), "MPI_Bcast");
        }
    }
    free(buf);

    /* Reduce and allreduce. */
    int iv[64], isum[64];
    double dv[64], dmax[64];
    for (int i = 0; i < 64; ++i) {
        iv[i] = r * 64 + i;
        dv[i] = r + i * 0.5;
    }
    MPI_CHECK(MPI_Reduce(iv, isum, 64, MPI_INT, MPI_SUM, n - 1, MPI_COMM_WORLD));
    if (r == n - 1) {
        for (int i = 0; i < 64; ++i) EXPECT(isum[i] == 64 * n * (n - 1) / 2 + n * i, "MPI_Reduce SUM [%d] = %d", i, isum[i]);
    }
    MPI_CHECK(MPI_Allreduce(iv, isum, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Allreduce(dv, dmax, 64, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < 64; ++i) {
        EXPECT(isum[i] == 64 * n * (n - 1) / 2 + n * i, "MPI_Allreduce SUM [%d] = %d", i, isum[i]);
        EXPECT(dmax[i] == (n - 1) + i * 0.5, "MPI_Allreduce MAX [%d] = %g", i, dmax[i]);
    }

    /* Gather, scatter, allgather, alltoall. */
    int mine[8], all[4 * 8], back[8];
    for (int i = 0; i < 8; ++i) mine[i] = r * 8 + i;
    MPI_CHECK(MPI_Gather(mine, 8, MPI_INT, all, 8, MPI_INT, 0, MPI_COMM_WORLD));
    if (r == 0) {
        for (int i = 0; i < 8 * n; ++i) EXPECT(all[i] == i, "MPI_Gather [%d] = %d", i, all[i]);
        for (int i = 0; i < 8 * n; ++i) all[i] = 1000 + i;
    }
    MPI_CHECK(MPI_Scatter(all, 8, MPI_INT, back, 8, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 8; ++i) EXPECT(back[i] == 1000 + r * 8 + i, "MPI_Scatter [%d] = %d", i, back[i]);
    memset(all, 0, sizeof all);
    MPI_CHECK(MPI_Allgather(mine, 8, MPI_INT, all, 8, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 8 * n; ++i) EXPECT(all[i] == i, "MPI_Allgather [%d] = %d", i, all[i]);
    int to[4 * 2], from[4 * 2];
    for (int d = 0; d < n; ++d) {
        to[2 * d] = r * 100 + d;
        to[2 * d + 1] = -(r * 100 + d);
    }
    MPI_CHECK(MPI_Alltoall(to, 2, MPI_INT, from, 2, MPI_INT, MPI_COMM_WORLD));
    for (int s = 0; s < n; ++s) {
        EXPECT(from[2 * s] == s * 100 + r && from[2 * s + 1] == -(s * 100 + r), "MPI_Alltoall from %d: %d %d", s,
               from[2 * s], from[2 * s + 1]);
    }

    /* Scan. */
    int prefix = 0, one = r + 1;
    MPI_CHECK(MPI_Scan(&one, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT(prefix == (r + 1) * (r + 2) / 2, "MPI_Scan = %d", prefix);

    /* A split communicator (even and odd ranks): its own context id in the tags. */
    MPI_Comm half;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half));
    int hsize = 0, hsum = 0;
    MPI_CHECK(MPI_Comm_size(half, &hsize));
    MPI_CHECK(MPI_Allreduce(&r, &hsum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int k = r % 2; k < n; k += 2) want += k;
    EXPECT(hsum == want, "MPI_Allreduce on the split communicator: %d, expected %d", hsum, want);
    MPI_CHECK(MPI_Comm_free(&half));

    /* Fan-in: every other rank sends 300 numbered messages to rank 0, which takes them with
     * MPI_ANY_SOURCE and MPI_ANY_TAG: all arrive, each source's in the order sent. */
    enum { kFan = 300 };
    if (r != 0) {
        for (int i = 0; i < kFan; ++i) {
            int msg[2] = {r, i};
            MPI_CHECK(MPI_Send(msg, 2, MPI_INT, 0, 900 + i % 7, MPI_COMM_WORLD));
        }
    } else {
        int next[4] = {0, 0, 0, 0};
        for (int k = 0; k < kFan * (n - 1); ++k) {
            int msg[2] = {-1, -1};
            MPI_Status st;
            MPI_CHECK(MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            EXPECT(st.MPI_SOURCE == msg[0] && msg[0] > 0 && msg[0] < n, "fan-in: source %d carried %d", st.MPI_SOURCE, msg[0]);
            EXPECT(st.MPI_TAG == 900 + msg[1] % 7, "fan-in: tag %d for message %d", st.MPI_TAG, msg[1]);
            EXPECT(msg[1] == next[msg[0]], "fan-in: from rank %d message %d arrived when %d was due", msg[0], msg[1], next[msg[0]]);
            ++next[msg[0]];
        }
    }

    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (r == 0) printf("collectives on %d ranks: ok\n", n);
    MPI_Finalize();
    return 0;
}
