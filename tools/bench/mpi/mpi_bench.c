/* MPI ping-pong latency and windowed bandwidth, 8 B to 4 MiB, between ranks 0 and 1: one
 * program for every Open MPI path (scripts/bench-mpi.sh runs it over ufi's OFI MTL, vader and
 * UCX in one go). Prints one line per size: "size latency_us bandwidth_MBps". A benchmark, not
 * a test: it asserts nothing about time, but it checks the data of its first exchange. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kWindow = 64 };

static int iterations_for(size_t n, int base) {
    int it = n <= 4096 ? base : (int)(base * 4096.0 / (double)n);
    return it < 20 ? 20 : it;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int base = argc > 1 ? atoi(argv[1]) : 20000;
    const size_t max = 4u << 20;
    uint8_t *buf = malloc(max * kWindow), *rbuf = malloc(max);
    for (size_t i = 0; i < max; ++i) buf[i] = (uint8_t)(i * 7);
    const int peer = 1 - rank;
    /* Data check once: 1 MiB there and back. */
    if (rank == 0) {
        MPI_Send(buf, 1 << 20, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, 1 << 20, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (memcmp(buf, rbuf, 1 << 20) != 0) {
            fprintf(stderr, "data check failed\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        printf("# size_bytes latency_us bandwidth_MBps\n");
    } else {
        MPI_Recv(rbuf, 1 << 20, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(rbuf, 1 << 20, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
    for (size_t n = 8; n <= max; n *= 2) {
        const int it = iterations_for(n, base), warm = it / 10 + 1;
        double t0 = 0;
        /* Ping-pong. */
        for (int i = -warm; i < it; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            }
        }
        const double lat = (MPI_Wtime() - t0) / it / 2 * 1e6;
        /* Windowed bandwidth: kWindow non-blocking sends, one acknowledgement. */
        const int bw_it = it / 8 + 5;
        MPI_Request rq[kWindow];
        for (int i = -1; i < bw_it; ++i) {
            if (i == 0) t0 = MPI_Wtime();
            if (rank == 0) {
                for (int w = 0; w < kWindow; ++w)
                    MPI_Isend(buf + w * n, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[w]);
                MPI_Waitall(kWindow, rq, MPI_STATUSES_IGNORE);
                MPI_Recv(rbuf, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int w = 0; w < kWindow; ++w)
                    MPI_Irecv(buf + w * n, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[w]);
                MPI_Waitall(kWindow, rq, MPI_STATUSES_IGNORE);
                MPI_Send(rbuf, 1, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
            }
        }
        const double secs = MPI_Wtime() - t0;
        const double mbps = (double)n * kWindow * bw_it / secs / 1e6;
        if (rank == 0) printf("%zu %.3f %.1f\n", n, lat, mbps);
        fflush(stdout);
    }
    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
