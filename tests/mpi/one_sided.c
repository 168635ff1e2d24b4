/* One-sided MPI over ufi, 2 to 4 ranks: MPI_Put, MPI_Get, MPI_Accumulate (MPI_SUM and
 * MPI_REPLACE on int and double), MPI_Fetch_and_op and MPI_Compare_and_swap, under fence,
 * post/start/complete/wait and passive-target lock/unlock. Every value is checked. */
#include "mpi_check.h"

enum { kInts = 4096 };

static int nranks;

/* Each rank's window: kInts ints then kInts doubles. */
typedef struct {
    MPI_Win win;
    int *ints;
    double *dbls;
} Window;

static void open_window(Window *w) {
    void *base = NULL;
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)(kInts * (sizeof(int) + sizeof(double))), 1, MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &w->win));
    w->ints = base;
    w->dbls = (double *)(w->ints + kInts);
}

static void reset(Window *w) {
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_rank, 0, w->win));
    for (int i = 0; i < kInts; ++i) {
        w->ints[i] = -1;
        w->dbls[i] = -1.0;
    }
    MPI_CHECK(MPI_Win_unlock(g_rank, w->win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static MPI_Aint dbl_disp(int i) { return (MPI_Aint)(kInts * sizeof(int) + (size_t)i * sizeof(double)); }

/* Fence epochs: every rank puts its rank-stamped block into the next rank, gets the block the
 * previous rank put into its own neighbour, and accumulates into rank 0. */
static void fence_epochs(Window *w) {
    reset(w);
    const int next = (g_rank + 1) % nranks, prev = (g_rank + nranks - 1) % nranks;
    int *src = xmalloc(kInts * sizeof(int));
    for (int i = 0; i < kInts; ++i) src[i] = g_rank * 100000 + i;
    MPI_CHECK(MPI_Win_fence(0, w->win));
    MPI_CHECK(MPI_Put(src, kInts, MPI_INT, next, 0, kInts, MPI_INT, w->win));
    MPI_CHECK(MPI_Win_fence(0, w->win));
    for (int i = 0; i < kInts; ++i)
        EXPECT(w->ints[i] == prev * 100000 + i, "fence: MPI_Put from rank %d: int %d is %d", prev, i, w->ints[i]);
    int *got = xmalloc(kInts * sizeof(int));
    MPI_CHECK(MPI_Get(got, kInts, MPI_INT, next, 0, kInts, MPI_INT, w->win));
    MPI_CHECK(MPI_Win_fence(0, w->win));
    for (int i = 0; i < kInts; ++i)
        EXPECT(got[i] == g_rank * 100000 + i, "fence: MPI_Get from rank %d: int %d is %d", next, i, got[i]);
    /* Accumulate: SUM of ints and doubles into rank 0, after REPLACE set them to known values. */
    int ones[16];
    double halves[16];
    for (int i = 0; i < 16; ++i) {
        ones[i] = i + 1;
        halves[i] = 0.5 * (i + 1);
    }
    if (g_rank == 0) {
        int zeros[16] = {0};
        double dzeros[16] = {0};
        MPI_CHECK(MPI_Accumulate(zeros, 16, MPI_INT, 0, 0, 16, MPI_INT, MPI_REPLACE, w->win));
        MPI_CHECK(MPI_Accumulate(dzeros, 16, MPI_DOUBLE, 0, dbl_disp(0), 16, MPI_DOUBLE, MPI_REPLACE, w->win));
    }
    MPI_CHECK(MPI_Win_fence(0, w->win));
    MPI_CHECK(MPI_Accumulate(ones, 16, MPI_INT, 0, 0, 16, MPI_INT, MPI_SUM, w->win));
    MPI_CHECK(MPI_Accumulate(halves, 16, MPI_DOUBLE, 0, dbl_disp(0), 16, MPI_DOUBLE, MPI_SUM, w->win));
    MPI_CHECK(MPI_Win_fence(0, w->win));
    if (g_rank == 0) {
        for (int i = 0; i < 16; ++i) {
            EXPECT(w->ints[i] == nranks * (i + 1), "MPI_Accumulate SUM int %d: %d", i, w->ints[i]);
            EXPECT(w->dbls[i] == nranks * 0.5 * (i + 1), "MPI_Accumulate SUM double %d: %g", i, w->dbls[i]);
        }
    }
    MPI_CHECK(MPI_Win_fence(0, w->win));
    free(src);
    free(got);
}

/* Post/start/complete/wait: even ranks expose, odd ranks access their even neighbour. */
static void pscw(Window *w) {
    reset(w);
    MPI_Group world, group;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    const int partner = g_rank % 2 == 0 ? g_rank + 1 : g_rank - 1;
    if (partner >= nranks) {  /* an odd count leaves the last even rank out */
        MPI_CHECK(MPI_Group_free(&world));
        return;
    }
    MPI_CHECK(MPI_Group_incl(world, 1, &partner, &group));
    if (g_rank % 2 == 0) {
        MPI_CHECK(MPI_Win_post(group, 0, w->win));
        MPI_CHECK(MPI_Win_wait(w->win));
        for (int i = 0; i < 100; ++i) {
            EXPECT(w->ints[i] == partner * 1000 + i, "PSCW: MPI_Put int %d is %d", i, w->ints[i]);
            EXPECT(w->dbls[i] == partner + i * 0.25, "PSCW: MPI_Accumulate REPLACE double %d is %g", i, w->dbls[i]);
        }
    } else {
        int vals[100];
        double dv[100];
        for (int i = 0; i < 100; ++i) {
            vals[i] = g_rank * 1000 + i;
            dv[i] = g_rank + i * 0.25;
        }
        MPI_CHECK(MPI_Win_start(group, 0, w->win));
        MPI_CHECK(MPI_Put(vals, 100, MPI_INT, partner, 0, 100, MPI_INT, w->win));
        MPI_CHECK(MPI_Accumulate(dv, 100, MPI_DOUBLE, partner, dbl_disp(0), 100, MPI_DOUBLE, MPI_REPLACE, w->win));
        MPI_CHECK(MPI_Win_complete(w->win));
    }
    MPI_CHECK(MPI_Group_free(&group));
    MPI_CHECK(MPI_Group_free(&world));
}

/* Passive target: every rank fetch-adds a counter on rank 0 many times (no update lost, no
 * value fetched twice), takes a ticket with compare-and-swap, and reads under a shared lock. */
static void passive(Window *w) {
    reset(w);
    if (g_rank == 0) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
        w->ints[0] = 0;
        w->ints[1] = -1;
        w->dbls[0] = 0.0;
        MPI_CHECK(MPI_Win_unlock(0, w->win));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    enum { kAdds = 500 };
    int *fetched = xmalloc(kAdds * sizeof(int));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
    const int one = 1;
    const double quarter = 0.25;
    for (int i = 0; i < kAdds; ++i) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &fetched[i], MPI_INT, 0, 0, MPI_SUM, w->win));
        MPI_CHECK(MPI_Win_flush(0, w->win));
    }
    double dold = 0;
    MPI_CHECK(MPI_Fetch_and_op(&quarter, &dold, MPI_DOUBLE, 0, dbl_disp(0), MPI_SUM, w->win));
    /* Compare-and-swap: slot 1 goes from -1 to the first rank that gets there. */
    int mine = g_rank, old = -2;
    const int expect_free = -1;
    MPI_CHECK(MPI_Compare_and_swap(&mine, &expect_free, &old, MPI_INT, 0, sizeof(int), w->win));
    MPI_CHECK(MPI_Win_unlock(0, w->win));
    for (int i = 1; i < kAdds; ++i) EXPECT(fetched[i] > fetched[i - 1], "fetch_and_op went backwards at %d", i);
    /* All fetched values, gathered: each of 0..n*kAdds-1 exactly once. */
    int *all = g_rank == 0 ? xmalloc((size_t)nranks * kAdds * sizeof(int)) : NULL;
    MPI_CHECK(MPI_Gather(fetched, kAdds, MPI_INT, all, kAdds, MPI_INT, 0, MPI_COMM_WORLD));
    int winners = 0, olds[4] = {0};
    MPI_CHECK(MPI_Gather(&old, 1, MPI_INT, olds, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (g_rank == 0) {
        char *seen = calloc((size_t)nranks * kAdds, 1);
        for (int i = 0; i < nranks * kAdds; ++i) {
            EXPECT(all[i] >= 0 && all[i] < nranks * kAdds && !seen[all[i]], "fetched value %d twice or out of range", all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
        EXPECT(w->ints[0] == nranks * kAdds, "counter is %d after %d fetch-adds", w->ints[0], nranks * kAdds);
        EXPECT(w->dbls[0] == nranks * 0.25, "double counter is %g", w->dbls[0]);
        for (int r = 0; r < nranks; ++r) winners += olds[r] == -1;
        EXPECT(winners == 1, "%d ranks won the compare-and-swap", winners);
        EXPECT(w->ints[1] >= 0 && w->ints[1] < nranks && olds[w->ints[1]] == -1, "the swap winner is rank %d", w->ints[1]);
        MPI_CHECK(MPI_Win_unlock(0, w->win));
        free(all);
    }
    free(fetched);
    /* Passive get under lock_all. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int remote = -1;
    MPI_CHECK(MPI_Win_lock_all(0, w->win));
    MPI_CHECK(MPI_Get(&remote, 1, MPI_INT, 0, 0, 1, MPI_INT, w->win));
    MPI_CHECK(MPI_Win_unlock_all(w->win));
    EXPECT(remote == nranks * kAdds, "MPI_Get under lock_all: %d", remote);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    init_checks();
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    EXPECT(nranks >= 2 && nranks <= 4, "run with 2 to 4 ranks, not %d", nranks);
    Window w;
    open_window(&w);
    struct { const char *name; void (*fn)(Window *); } steps[] = {
        {"fence (put, get, accumulate)", fence_epochs},
        {"post/start/complete/wait", pscw},
        {"passive target (fetch_and_op, compare_and_swap, lock_all)", passive},
    };
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; ++s) {
        steps[s].fn(&w);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (g_rank == 0) printf("%s: ok\n", steps[s].name);
    }
    MPI_CHECK(MPI_Win_free(&w.win));
    MPI_Finalize();
    return 0;
}
