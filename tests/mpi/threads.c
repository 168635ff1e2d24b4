/* MPI_THREAD_MULTIPLE over ufi: two threads per rank, each exchanging a stream of messages
 * with the same thread of the other rank (its own tag), blocking and non-blocking at once.
 * Order within each stream and every value are checked. */
#include "mpi_check.h"

#include <pthread.h>

enum { kMessages = 2000, kThreads = 2 };

static int peer;

static void *exchange(void *arg) {
    const int t = (int)(intptr_t)arg;
    for (int i = 0; i < kMessages; ++i) {
        int out[4] = {g_rank, t, i, g_rank * 7 + t * 3 + i}, in[4] = {-1, -1, -1, -1};
        MPI_Request rq;
        MPI_CHECK(MPI_Irecv(in, 4, MPI_INT, peer, 500 + t, MPI_COMM_WORLD, &rq));
        MPI_CHECK(MPI_Send(out, 4, MPI_INT, peer, 500 + t, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        EXPECT(in[0] == peer && in[1] == t && in[2] == i && in[3] == peer * 7 + t * 3 + i,
               "thread %d message %d: got {%d %d %d %d}", t, i, in[0], in[1], in[2], in[3]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    init_checks();
    EXPECT(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d", provided);
    int size = 0;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    EXPECT(size == 2, "run with 2 ranks, not %d", size);
    peer = 1 - g_rank;
    pthread_t th[kThreads];
    for (int t = 0; t < kThreads; ++t) EXPECT(pthread_create(&th[t], NULL, exchange, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < kThreads; ++t) pthread_join(th[t], NULL);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (g_rank == 0) printf("%d threads x %d messages per rank: ok\n", kThreads, kMessages);
    MPI_Finalize();
    return 0;
}
