/* Shared by the MPI test programs: every MPI call is checked, and a failure names the call,
 * the rank and the line before the job is aborted (ufi's own log lines for it are on stderr,
 * FI_LOG_LEVEL=warn, just above). Data checks say which byte differs. */
#ifndef UFI_MPI_CHECK_H
#define UFI_MPI_CHECK_H

#define _DEFAULT_SOURCE /* usleep under -std=c11 */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank = -1;

static inline void fail_call(const char *call, int rc, const char *file, int line) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "rank %d: %s failed at %s:%d: %s (%d)\n", g_rank, call, file, line, text, rc);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

#define MPI_CHECK(call)                                                 \
    do {                                                                \
        int rc_ = (call);                                               \
        if (rc_ != MPI_SUCCESS) fail_call(#call, rc_, __FILE__, __LINE__); \
    } while (0)

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "rank %d: %s:%d: expected %s: ", g_rank, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            fflush(stderr);                                                        \
            MPI_Abort(MPI_COMM_WORLD, 3);                                          \
        }                                                                          \
    } while (0)

/* The byte a pattern has at index i (seeded per message, so a misplaced message shows). */
static inline uint8_t pattern_byte(size_t i, unsigned seed) {
    return (uint8_t)((i * 131u + seed * 7u + (i >> 12)) & 0xff);
}

static inline void fill_pattern(uint8_t *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; ++i) p[i] = pattern_byte(i, seed);
}

static inline void check_pattern(const uint8_t *p, size_t n, unsigned seed, const char *what) {
    for (size_t i = 0; i < n; ++i) {
        if (p[i] != pattern_byte(i, seed)) {
            fprintf(stderr, "rank %d: %s: byte %zu of %zu is 0x%02x, expected 0x%02x\n", g_rank,
                    what, i, n, p[i], pattern_byte(i, seed));
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    }
}

static inline void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", g_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 5);
    }
    return p;
}

/* Errors come back as codes (and are reported by MPI_CHECK), not as MPI's abort. */
static inline void init_checks(void) {
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

#endif
